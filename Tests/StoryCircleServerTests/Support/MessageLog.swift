import Foundation
import Locking
@testable import StoryCircleCore

/// Messages received per connection, which a test can await by type instead of sleeping: `next` returns
/// the next message of that type not yet returned, at once if it already arrived.
final class MessageLog: Sendable {
    private struct Waiter {
        var connection: UInt64
        var type: String
        var continuation: CheckedContinuation<ServerMessage, Never>
    }

    private struct State {
        var messages: [UInt64: [ServerMessage]] = [:]
        var waiters: [Waiter] = []
        var consumed: [String: Int] = [:]
    }

    private let state = Locked(State())

    func record(_ message: ServerMessage, to connections: [UInt64]) {
        let ready: [(CheckedContinuation<ServerMessage, Never>, ServerMessage)] = state.withLock { state in
            for connection in connections { state.messages[connection, default: []].append(message) }
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

    func messages(to connection: UInt64) -> [ServerMessage] {
        state.withLock { $0.messages[connection] ?? [] }
    }

    func next(_ type: String, to connection: UInt64) async -> ServerMessage {
        await withCheckedContinuation { continuation in
            let ready: ServerMessage? = state.withLock { state in
                let key = "\(connection)/\(type)"
                let sent = (state.messages[connection] ?? []).filter { $0.type == type }
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
