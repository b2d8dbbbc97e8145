import Foundation
import Testing
import Locking
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// An in-memory transport (swift-nio's embedded channel in spirit): it records every frame and close, and
/// lets a test await a message or a close instead of sleeping.
package final class RecordingTransport: MessageTransport {
    package init() {}

    package let log = MessageLog()
    private struct CloseWaiter {
        var id: UInt64
        var connection: UInt64
        /// `nil` when the wait timed out.
        var continuation: CheckedContinuation<CloseReason?, Never>
        var timer: Task<Void, Never>
    }

    private struct Closes {
        var closed: [UInt64: CloseReason] = [:]
        var waiters: [CloseWaiter] = []
        var nextWaiter: UInt64 = 0
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
        let ready = closes.withLock { closes -> [CloseWaiter] in
            // The first close counts, as in the real transport.
            guard closes.closed[connection] == nil else { return [] }
            closes.closed[connection] = CloseReason(status: status, reason: reason)
            let ready = closes.waiters.filter { $0.connection == connection }
            closes.waiters.removeAll { $0.connection == connection }
            return ready
        }
        for waiter in ready {
            waiter.timer.cancel()
            waiter.continuation.resume(returning: CloseReason(status: status, reason: reason))
        }
    }

    package func messages(to connection: UInt64) -> [ServerMessage] { log.messages(to: connection) }

    package func types(to connection: UInt64) -> [String] { messages(to: connection).map(\.type) }

    package func closeStatus(_ connection: UInt64) -> UInt16? { closes.withLock { $0.closed[connection]?.status } }

    package func next(_ type: String, to connection: UInt64, sourceLocation: SourceLocation = #_sourceLocation) async -> ServerMessage {
        await log.next(type, to: connection, sourceLocation: sourceLocation)
    }

    /// The close of `connection`, once it comes. One that does not come within `timeout` fails the test
    /// (recorded at the caller's line) instead of hanging the suite, and the test gets a stand-in close
    /// (status 0, reason `no_close_came`) to go on with. A minute, as `MessageLog.next`'s.
    package func closed(_ connection: UInt64, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async -> CloseReason {
        let reason: CloseReason? = await withCheckedContinuation { continuation in
            let done = closes.withLock { closes -> CloseReason? in
                if let reason = closes.closed[connection] { return reason }
                closes.nextWaiter += 1
                let id = closes.nextWaiter
                // A watchdog in real time, not a clock the test drives: it only ends a wait that would
                // otherwise never end.
                let timer = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    self?.expire(id)
                }
                closes.waiters.append(CloseWaiter(id: id, connection: connection, continuation: continuation, timer: timer))
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
        guard let reason else {
            Issue.record("connection \(connection) was not closed within \(timeout); it had: \(types(to: connection))", sourceLocation: sourceLocation)
            return CloseReason(status: 0, reason: "no_close_came")
        }
        return reason
    }

    private func expire(_ id: UInt64) {
        let waiter: CloseWaiter? = closes.withLock { closes in
            guard let index = closes.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return closes.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }
}
