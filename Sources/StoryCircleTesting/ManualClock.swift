import Locking
import StoryCircleCore
import StoryCircleServer

/// A clock that moves only when told to, for tests: `advance(to:)` wakes exactly the sleepers whose time has
/// come, so a test decides when each timer fires instead of sleeping and hoping.
public final class ManualClock: ServerClock {
    private struct Sleeper {
        var deadline: ServerTime
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: ServerTime
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Locked<State>

    public init(now: ServerTime = ServerTime(milliseconds: 1_700_000_000_000)) {
        state = Locked(State(now: now))
    }

    public func now() -> ServerTime {
        state.withLock { $0.now }
    }

    public func sleep(until deadline: ServerTime) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else if deadline <= state.now {
                        continuation.resume()
                    } else {
                        state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time to `time`, waking every sleeper due by then.
    public func advance(to time: ServerTime) {
        let due: [Sleeper] = state.withLock { state in
            state.now = max(state.now, time)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            due.keys.forEach { state.sleepers[$0] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        due.forEach { $0.continuation.resume() }
    }

    public func advance(by milliseconds: Int) {
        advance(to: now() + milliseconds)
    }

}
