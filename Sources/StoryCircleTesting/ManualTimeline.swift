import Locking

/// What the manual clocks share: a time that moves only when a test says, and the sleepers it wakes.
/// `advance(to:)` wakes exactly the sleepers whose time has come, in the order of their deadlines, so a
/// test decides when each timer fires instead of sleeping and hoping.
final class ManualTimeline<Instant: Comparable & Sendable>: Sendable {
    private struct Sleeper: Sendable {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var now: Instant
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        /// Tests waiting for someone to fall asleep.
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    init(now: Instant) {
        state = Locked(State(now: now))
    }

    var now: Instant {
        state.withLock { $0.now }
    }

    /// Suspends until time reaches `deadline` (at once if it has); throws if the task is cancelled.
    func sleep(until deadline: Instant) async throws {
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
                    }
                    if deadline <= state.now {
                        continuation.resume()
                        return []
                    }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
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

    /// Moves time to `time` (never back), waking every sleeper due by then.
    func advance(to time: Instant) {
        let due: [Sleeper] = state.withLock { state in
            state.now = max(state.now, time)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            due.keys.forEach { state.sleepers[$0] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        due.forEach { $0.continuation.resume() }
    }

    /// Returns once some task is asleep: a test waits for a loop to be asleep before it moves time, or the
    /// move would be lost on it.
    func untilSomeoneSleeps() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let asleep = state.withLock { state -> Bool in
                if !state.sleepers.isEmpty { return true }
                state.watchers.append(continuation)
                return false
            }
            if asleep { continuation.resume() }
        }
    }
}
