import Locking

/// Tasks started by a long-lived object that must not outlive it: each is kept until it ends, and `stop`
/// cancels every one still running and waits for them. So nothing an object started is left running (or
/// writing) after it has shut down.
final class OwnedTasks: Sendable {
    private struct State {
        var running: [UInt64: Task<Void, Never>] = [:]
        /// Tasks that ended before `spawn` could record them.
        var done: Set<UInt64> = []
        var next: UInt64 = 0
        var stopped = false
    }

    private let state = Locked(State())

    /// Starts `body` as a task owned here; after `stop` it is not started at all.
    func spawn(_ body: @escaping @Sendable () async -> Void) {
        let id = state.withLock { state -> UInt64? in
            guard !state.stopped else { return nil }
            state.next += 1
            return state.next
        }
        guard let id else { return }
        let task = Task {
            await body()
            self.finished(id)
        }
        let lateStop = state.withLock { state -> Bool in
            guard !state.stopped else { return true }
            // The task may have ended before it could be recorded.
            if state.done.remove(id) == nil { state.running[id] = task }
            return false
        }
        if lateStop { task.cancel() }
    }

    var count: Int { state.withLock { $0.running.count } }

    /// Cancels what is running and waits until all of it has ended.
    func stop() async {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            state.stopped = true
            defer { state.running = [:] }
            return Array(state.running.values)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    private func finished(_ id: UInt64) {
        state.withLock { state in
            if state.running.removeValue(forKey: id) == nil { state.done.insert(id) }
        }
    }
}
