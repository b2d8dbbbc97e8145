import Foundation
import Synchronization
@testable import StoryCircleCore
import WebSocketTransport
@testable import StoryCircleServer

/// An in-memory transport (swift-nio's embedded channel in spirit): it records every frame and close, and
/// lets a test await a message instead of sleeping.
final class RecordingTransport: MessageTransport {
    private struct Waiter {
        var connection: UInt64
        var type: String
        var continuation: CheckedContinuation<ServerMessage, Never>
    }

    private struct State {
        var frames: [UInt64: [ServerMessage]] = [:]
        var closes: [UInt64: (status: UInt16, reason: String)] = [:]
        var waiters: [Waiter] = []
        /// How many messages of each connection's log were already handed to waiters, per type.
        var consumed: [String: Int] = [:]
    }

    private let state = Mutex(State())

    func send(_ frame: OutboundFrame, to connections: [UInt64]) {
        let message = try! JSONDecoder().decode(ServerMessage.self, from: Data(frame.bytes))
        let ready: [(CheckedContinuation<ServerMessage, Never>, ServerMessage)] = state.withLock { state in
            for connection in connections { state.frames[connection, default: []].append(message) }
            var ready: [(CheckedContinuation<ServerMessage, Never>, ServerMessage)] = []
            state.waiters.removeAll { waiter in
                guard connections.contains(waiter.connection), message.type == waiter.type else { return false }
                state.consumed["\(waiter.connection)/\(waiter.type)", default: 0] += 1
                ready.append((waiter.continuation, message))
                return true
            }
            return ready
        }
        ready.forEach { $0.0.resume(returning: $0.1) }
    }

    func close(_ connection: UInt64, status: UInt16, reason: String) {
        state.withLock { $0.closes[connection] = (status, reason) }
    }

    func messages(to connection: UInt64) -> [ServerMessage] {
        state.withLock { $0.frames[connection] ?? [] }
    }

    func types(to connection: UInt64) -> [String] {
        messages(to: connection).map(\.type)
    }

    func closeStatus(_ connection: UInt64) -> UInt16? {
        state.withLock { $0.closes[connection]?.status }
    }

    /// The next message of `type` to `connection` that no earlier call has returned: at once if it was
    /// already sent, or when it is.
    func next(_ type: String, to connection: UInt64) async -> ServerMessage {
        await withCheckedContinuation { continuation in
            let ready: ServerMessage? = state.withLock { state in
                let key = "\(connection)/\(type)"
                let sent = (state.frames[connection] ?? []).filter { $0.type == type }
                let used = state.consumed[key, default: 0]
                if sent.count > used {
                    state.consumed[key] = used + 1
                    return sent[used]
                }
                state.waiters.append(Waiter(connection: connection, type: type, continuation: continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
