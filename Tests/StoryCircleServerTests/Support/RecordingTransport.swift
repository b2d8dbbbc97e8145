import Foundation
import Locking
import WebSocketTransport
@testable import StoryCircleCore
@testable import StoryCircleServer

/// An in-memory transport (swift-nio's embedded channel in spirit): it records every frame and close, and
/// lets a test await a message instead of sleeping.
final class RecordingTransport: MessageTransport {
    let log = MessageLog()
    private let closes = Locked<[UInt64: UInt16]>([:])

    func send(_ frame: OutboundFrame, to connections: [UInt64]) {
        log.record(try! JSONDecoder().decode(ServerMessage.self, from: Data(frame.bytes)), to: connections)
    }

    func close(_ connection: UInt64, status: UInt16, reason: String) {
        closes.withLock { $0[connection] = status }
    }

    func messages(to connection: UInt64) -> [ServerMessage] { log.messages(to: connection) }

    func types(to connection: UInt64) -> [String] { messages(to: connection).map(\.type) }

    func closeStatus(_ connection: UInt64) -> UInt16? { closes.withLock { $0[connection] } }

    func next(_ type: String, to connection: UInt64) async -> ServerMessage { await log.next(type, to: connection) }
}
