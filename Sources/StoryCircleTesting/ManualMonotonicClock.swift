import Locking
import StoryCircleServer

/// The monotonic clock leases run on, moved only when told to: `advance(by:)` wakes exactly the sleepers
/// whose time has come, so a test decides when a renewal happens. It starts at the real monotonic now,
/// since the stores compare lease deadlines with that clock.
public final class ManualMonotonicClock: MonotonicClock {
    private struct Sleeper {
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: ContinuousClock.Instant
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        /// Tests waiting for someone to fall asleep.
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    public init(now: ContinuousClock.Instant = .now) {
        state = Locked(State(now: now))
    }

    public var now: ContinuousClock.Instant {
        state.withLock { $0.now }
    }

    /// Returns once some task is asleep on this clock: a test waits for a loop to be asleep before it
    /// moves time, or the move would be lost on it.
    public func untilSomeoneSleeps() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let asleep = state.withLock { state -> Bool in
                if !state.sleepers.isEmpty { return true }
                state.watchers.append(continuation)
                return false
            }
            if asleep { continuation.resume() }
        }
    }

    public func sleep(for duration: Duration) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let watchers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return []
                    } else if duration <= .zero {
                        continuation.resume()
                        return []
                    }
                    state.sleepers[id] = Sleeper(deadline: state.now + duration, continuation: continuation)
                    defer { state.watchers = [] }
                    return state.watchers
                }
                watchers.forEach { $0.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking every sleeper due by then.
    public func advance(by duration: Duration) {
        let due: [Sleeper] = state.withLock { state in
            state.now = state.now + duration
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            due.keys.forEach { state.sleepers[$0] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        due.forEach { $0.continuation.resume() }
    }
}
