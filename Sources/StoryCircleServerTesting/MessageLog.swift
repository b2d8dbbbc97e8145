import Foundation
import Locking
import StoryCircleCore
import Testing

/// Messages received per connection, which a test can await by type instead of sleeping: `next` returns
/// the next message of that type not yet returned, at once if it already arrived.
package final class MessageLog: Sendable {
    package init() {}

    private struct Waiter {
        var id: UInt64
        var connection: UInt64
        var type: String
        /// `nil` when the wait timed out.
        var continuation: CheckedContinuation<ServerMessage?, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var messages: [UInt64: [ServerMessage]] = [:]
        var waiters: [Waiter] = []
        var consumed: [String: Int] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())

    package func record(_ message: ServerMessage, to connections: [UInt64]) {
        let ready: [Waiter] = state.withLock { state in
            for connection in connections { state.messages[connection, default: []].append(message) }
            var ready: [Waiter] = []
            state.waiters.removeAll { waiter in
                guard connections.contains(waiter.connection), message.type == waiter.type else { return false }
                state.consumed["\(waiter.connection)/\(waiter.type)", default: 0] += 1
                ready.append(waiter)
                return true
            }
            return ready
        }
        for waiter in ready {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: message)
        }
    }

    package func messages(to connection: UInt64) -> [ServerMessage] {
        state.withLock { $0.messages[connection] ?? [] }
    }

    /// The next `type` message to `connection`. One that does not come within `timeout` fails the test
    /// (recorded at the caller's line) instead of hanging the suite; the test then gets a stand-in message
    /// (`storage`, not ok, saying what was missing) and goes on to fail or finish on its own. A minute: over
    /// real sockets a message waits for the cooperative pool, which the whole suite starting at once on two
    /// busy cores was seen to hold for more than 20 s; only a message that never comes should meet it.
    package func next(_ type: String, to connection: UInt64, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async -> ServerMessage {
        let message: ServerMessage? = await withCheckedContinuation { continuation in
            let ready: ServerMessage? = state.withLock { state in
                let key = "\(connection)/\(type)"
                let sent = (state.messages[connection] ?? []).filter { $0.type == type }
                let used = state.consumed[key, default: 0]
                if sent.count > used {
                    state.consumed[key] = used + 1
                    return sent[used]
                }
                state.nextWaiter += 1
                let id = state.nextWaiter
                // A watchdog in real time, not a clock the test drives: it only ends a wait that would
                // otherwise never end.
                let timer = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    self?.expire(id)
                }
                state.waiters.append(Waiter(id: id, connection: connection, type: type, continuation: continuation, timer: timer))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        guard let message else {
            Issue.record("no '\(type)' message to connection \(connection) within \(timeout); it had: \(messages(to: connection).map(Self.described))", sourceLocation: sourceLocation)
            return .storage(StoreHealthStatus(ok: false, message: "MessageLog: no '\(type)' message came"))
        }
        return message
    }

    private func expire(_ id: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }

    /// A message's type, and an error's code with it: what a failed wait shows.
    static func described(_ message: ServerMessage) -> String {
        if case .error(let error) = message { return "error(\(error.code.rawValue): \(error.message))" }
        return message.type
    }
}
