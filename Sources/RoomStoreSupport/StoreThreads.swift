import Foundation
import Locking
import StoryCircleCore

/// A fixed set of threads of a store's own that run its blocking calls (a database read, a network round
/// trip), so that an `async` caller waits without holding one of Swift's cooperative threads: those are
/// as many as the cores, and one blocked in `read(2)` or a lock is one less for every room.
///
/// `run` queues the call and suspends; a thread takes it in turn and resumes the caller with its result.
/// A caller cancelled before its call starts gets `CancellationError` and the call never runs; once it has
/// started it runs to the end (a database call cannot be interrupted halfway). `shutDown` lets the threads
/// finish what is queued, then returns once every one of them has ended.
public final class StoreThreads: Sendable {
    private struct State {
        var jobs: [any StoreThreadJob] = []
        var head = 0
        var stopping = false
        var running: Int
        var ended: [CheckedContinuation<Void, Never>] = []
    }

    private let state: LockedCondition<State>
    public let name: String

    /// Starts `count` threads named `name`.
    public init(name: String, count: Int) {
        precondition(count > 0, "a store needs at least one thread")
        self.name = name
        state = LockedCondition(State(running: count))
        for index in 0..<count {
            let thread = Thread { [state] in Self.serve(state) }
            thread.name = count == 1 ? name : "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs `body` on one of the threads and returns what it returns (or throws what it throws). Throws
    /// `CancellationError` if the calling task is cancelled before `body` starts, and a `StoreFailure`
    /// once the threads are shut down.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let job = Job(body)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                guard job.install(continuation) else { return }
                let queued = state.withLockAndWake { state in
                    if state.stopping { return false }
                    state.jobs.append(job)
                    return true
                }
                if !queued { job.abandon(StoreFailure(.unavailable, record: "store call", reason: "the room store is closed")) }
            }
        } onCancel: {
            job.abandon(CancellationError())
        }
    }

    /// Runs what is queued, then ends the threads; returns once they have all ended. Later `run`s throw.
    public func shutDown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLockAndWake { state in
                state.stopping = true
                if state.running == 0 { return true }
                state.ended.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }

    private static func serve(_ state: LockedCondition<State>) {
        while true {
            let next: (any StoreThreadJob)? = state.waitUntil({ $0.head < $0.jobs.count || $0.stopping }) { state in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                // Compact now and then, so a long-lived store does not keep every job it ever ran.
                if state.head >= 64, state.head * 2 >= state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            guard let next else { break }
            next.runIfWaiting()
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.ended = [] }
            return state.ended
        }
        waiters.forEach { $0.resume() }
    }
}

private protocol StoreThreadJob: Sendable {
    func runIfWaiting()
}

/// One call and its caller. Whoever moves it out of `waiting` first (the thread that starts it, or a
/// cancellation) resumes the caller, exactly once.
private final class Job<T: Sendable>: StoreThreadJob {
    private enum Stage {
        /// Queued; the continuation is `nil` until `install` (a task cancelled at once can get here first).
        case waiting(CheckedContinuation<T, any Error>?)
        case started
        case abandoned(any Error)
    }

    private let body: @Sendable () throws -> T
    private let stage = Locked<Stage>(.waiting(nil))

    init(_ body: @escaping @Sendable () throws -> T) {
        self.body = body
    }

    /// Gives the job its caller; false (and the caller resumed) when it was abandoned already.
    func install(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let abandoned: (any Error)? = stage.withLock { stage in
            if case .abandoned(let error) = stage { return error }
            stage = .waiting(continuation)
            return nil
        }
        if let abandoned { continuation.resume(throwing: abandoned) }
        return abandoned == nil
    }

    /// The job will not run: its caller gets `error` (if it has not started).
    func abandon(_ error: any Error) {
        let continuation: CheckedContinuation<T, any Error>? = stage.withLock { stage in
            guard case .waiting(let continuation) = stage else { return nil }
            stage = .abandoned(error)
            return continuation
        }
        continuation?.resume(throwing: error)
    }

    func runIfWaiting() {
        let continuation: CheckedContinuation<T, any Error>? = stage.withLock { stage in
            guard case .waiting(let continuation?) = stage else { return nil }
            stage = .started
            return continuation
        }
        guard let continuation else { return }
        continuation.resume(with: Result { try body() })
    }
}

