import Foundation
import Testing
import Locking
import WebSocketTransport
import StoryCircleCore
import StoryCircleServer

/// An in-memory transport (swift-nio's embedded channel in spirit): it records every frame and close, and
/// lets a test await a message or a close instead of sleeping.
package final class RecordingTransport: MessageTransport {
    package init() {}

    package let log = MessageLog()
    private struct Closes {
        var closed: [UInt64: CloseReason] = [:]
        var waiters: [(connection: UInt64, continuation: CheckedContinuation<CloseReason, Never>)] = []
    }

    private let closes = Locked(Closes())
    private let priorities = Locked<[String: Set<OutboundFrame.Priority>]>([:])

    package func send(_ frame: OutboundFrame, to connections: [UInt64]) {
        let message = try! JSONDecoder().decode(ServerMessage.self, from: Data(frame.bytes))
        priorities.withLock { _ = $0[message.type, default: []].insert(frame.priority) }
        log.record(message, to: connections)
    }

    /// The priorities frames of this message type were sent with so far.
    package func priorities(of type: String) -> Set<OutboundFrame.Priority> { priorities.withLock { $0[type] ?? [] } }

    package func close(_ connection: UInt64, status: UInt16, reason: String) {
        let ready = closes.withLock { closes -> [CheckedContinuation<CloseReason, Never>] in
            // The first close counts, as in the real transport.
            guard closes.closed[connection] == nil else { return [] }
            closes.closed[connection] = CloseReason(status: status, reason: reason)
            let ready = closes.waiters.filter { $0.connection == connection }.map(\.continuation)
            closes.waiters.removeAll { $0.connection == connection }
            return ready
        }
        ready.forEach { $0.resume(returning: CloseReason(status: status, reason: reason)) }
    }

    package func messages(to connection: UInt64) -> [ServerMessage] { log.messages(to: connection) }

    package func types(to connection: UInt64) -> [String] { messages(to: connection).map(\.type) }

    package func closeStatus(_ connection: UInt64) -> UInt16? { closes.withLock { $0.closed[connection]?.status } }

    package func next(_ type: String, to connection: UInt64, sourceLocation: SourceLocation = #_sourceLocation) async -> ServerMessage {
        await log.next(type, to: connection, sourceLocation: sourceLocation)
    }

    /// The close of `connection`, once it comes.
    package func closed(_ connection: UInt64) async -> CloseReason {
        await withCheckedContinuation { continuation in
            let done = closes.withLock { closes -> CloseReason? in
                if let reason = closes.closed[connection] { return reason }
                closes.waiters.append((connection, continuation))
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}
