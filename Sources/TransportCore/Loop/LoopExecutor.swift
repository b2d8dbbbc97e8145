import Dispatch
import Foundation
import Glibc
import Locking
import Synchronization

/// A serial executor whose jobs run on the transport's service thread, between turns of its loop, with
/// timers the loop fires: rooms, their timers and the frames they send meet on one thread.
///
/// Why: in a classroom each event is small (a tap, a ping, a timer for the next sentence) and arrives
/// alone, so what it cost on Swift's cooperative pool was mostly the hand-offs: the service thread woke a
/// pool thread for the room, the room's reply woke the service thread again, a room's timer woke Dispatch's
/// timer thread and then a pool thread. On a VM a context switch costs microseconds, about one per message
/// (docs/performance.md, "Sustained load: where the CPU goes"). Here a frame read in a turn is handled by its
/// room after that turn (or the next, when the turn's writes are spent) and its reply written before the
/// loop sleeps again, on the same thread; a timer fires inside the loop. What other threads give it (the
/// store's completions, the HTTP API) costs one wake-up of the loop, and only when its queue was empty.
///
/// The loop must never block: work run here is the rooms' (state changes, encoding) and hands anything slow
/// (the store, synthesis) to threads of its own, as it did on the cooperative pool.
///
/// Until the loop starts, work waits (rooms restored before the server listens); once it has ended (the
/// server stopped), and for an executor made with `ownThread()` (tests of rooms without a transport), a
/// thread of the executor's own runs it, one job at a time, in order.
///
/// `@unchecked Sendable`: `timers` and `batch` are touched only by the thread running the work (the service
/// thread while the loop runs); everything else is behind the lock or atomic.
public final class LoopExecutor: SerialExecutor, @unchecked Sendable {
    private enum Work: Sendable {
        case job(UnownedJob)
        case call(@Sendable () -> Void)
    }

    private enum Mode: Sendable, Equatable {
        /// Attached to a service loop that has not started: work waits for it.
        case beforeLoop
        /// The service thread runs the work after each turn of its loop.
        case loop
        /// A thread of the executor's own runs it.
        case ownThread
    }

    private struct Shared: Sendable {
        var work: [Work] = []
        var mode: Mode
        /// A thread of the executor's own is running work or waiting for more (`ownThread` mode).
        var draining = false
        var drainerWaiting = false
    }

    private let shared: LockedCondition<Shared>
    /// The thread running work now (a `pthread_t`), 0 when none: work it submits needs no wake-up.
    private let runner = Atomic<UInt>(0)
    private let wakeLoop: @Sendable () -> Void
    // The running thread's own.
    private var timers = TimerHeap<LoopTimer>()
    private var batch: [Work] = []

    /// An executor for a service loop that `wake` interrupts (`lws_cancel_service`).
    package init(wakingLoopWith wake: @escaping @Sendable () -> Void) {
        shared = LockedCondition(Shared(mode: .beforeLoop))
        wakeLoop = wake
    }

    private init(ownThread: Void) {
        shared = LockedCondition(Shared(mode: .ownThread))
        wakeLoop = {}
    }

    /// An executor with no loop: a thread of its own runs its jobs, and its timers are tasks that sleep.
    public static func ownThread() -> LoopExecutor {
        LoopExecutor(ownThread: ())
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    /// Runs `call` where the executor's jobs run, after what was submitted before it.
    public func execute(_ call: @escaping @Sendable () -> Void) {
        submit(.call(call))
    }

    /// What `assumeIsolated` asks when it cannot tell by itself: an actor's input handed over as a plain
    /// call (`execute`) runs on this executor only if it runs on the thread running its work.
    public func checkIsolated() {
        precondition(isCurrent, "not on the thread running the loop executor's work")
    }

    /// Whether the caller is the thread running this executor's work now.
    public var isCurrent: Bool {
        runner.load(ordering: .acquiring) == UInt(pthread_self())
    }

    private enum Nudge {
        case none, wakeLoop, signalDrainer, startDrainer
    }

    private func submit(_ work: Work) {
        let current = isCurrent
        let nudge = shared.withLock { shared -> Nudge in
            shared.work.append(work)
            switch shared.mode {
            case .beforeLoop:
                return .none
            case .loop:
                // The loop looks at the queue after every turn; it sleeps only when the queue is empty, so
                // only the first job after that needs to wake it.
                return shared.work.count == 1 && !current ? .wakeLoop : .none
            case .ownThread:
                if !shared.draining {
                    shared.draining = true
                    return .startDrainer
                }
                return shared.drainerWaiting ? .signalDrainer : .none
            }
        }
        switch nudge {
        case .none: break
        case .wakeLoop: wakeLoop()
        case .signalDrainer: shared.withLockAndWake { _ in }
        case .startDrainer: startDrainer()
        }
    }

    // MARK: - Timers

    /// Calls `fire` where the executor's jobs run, once `milliseconds` have passed, unless the timer is
    /// cancelled first. A cancel that crosses the firing may not stop it: callers ignore a stale firing.
    public func schedule(afterMilliseconds milliseconds: Int64, _ fire: @escaping @Sendable () -> Void) -> LoopTimer {
        let timer = LoopTimer(fire)
        let deadline = Self.monotonicNanoseconds() + UInt64(max(0, milliseconds)) * 1_000_000
        if isCurrent {
            arm(timer, at: deadline)
        } else {
            execute { [self] in arm(timer, at: deadline) }
        }
        return timer
    }

    /// On the thread running the work: into the loop's heap while the loop runs; otherwise (the loop has
    /// ended, or there is none) a task that sleeps until the deadline. Only the service thread runs work in
    /// loop mode and only it ends that mode, so the heap is never touched by another thread.
    private func arm(_ timer: LoopTimer, at deadline: UInt64) {
        if shared.withLock({ $0.mode }) == .loop {
            timers.push(timer, deadline: deadline)
        } else {
            sleep(timer, until: deadline)
        }
    }

    private func sleep(_ timer: LoopTimer, until deadline: UInt64) {
        Task { [self] in
            let now = Self.monotonicNanoseconds()
            if deadline > now { try? await Task.sleep(nanoseconds: deadline - now) }
            execute { timer.fireUnlessCancelled() }
        }
    }

    /// Service thread: the earliest timer's deadline (monotonic nanoseconds), to arm the loop's timer for.
    package var nextTimerDeadline: UInt64? { timers.nextDeadline }

    /// Service thread: fires every timer due by now, in order.
    package func fireDueTimers() {
        for timer in timers.popDue(at: Self.monotonicNanoseconds()) {
            timer.fireUnlessCancelled()
        }
    }

    package static func monotonicNanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    // MARK: - The service loop's side

    /// Service thread, before its first turn: work is run here from now on.
    package func loopStarted() {
        runner.store(UInt(pthread_self()), ordering: .releasing)
        shared.withLock { $0.mode = .loop }
    }

    /// Service thread, after a turn: runs what was submitted, up to `limit` jobs (what it submits itself
    /// included), and no more once `enough` says so (asked before each job: the rest waits for the next
    /// turn, in order, ahead of anything submitted since). Returns whether work is still waiting: then the
    /// loop must not sleep in its next turn.
    package func runPending(limit: Int = 4_096, enough: () -> Bool = { false }) -> Bool {
        var ran = 0
        while ran < limit {
            shared.withLock { swap(&$0.work, &batch) }
            if batch.isEmpty { return false }
            let done = run(batch, enough: enough)
            ran += done
            if done < batch.count {
                let rest = batch[done...]
                shared.withLock { $0.work.insert(contentsOf: rest, at: 0) }
                batch.removeAll(keepingCapacity: true)
                return true
            }
            batch.removeAll(keepingCapacity: true)
        }
        return hasPending
    }

    /// Whether work is waiting.
    package var hasPending: Bool {
        shared.withLock { !$0.work.isEmpty }
    }

    /// Service thread, once its loop has ended (or never started): a thread of the executor's own runs what
    /// is left and whatever comes later, in order, and the timers still waiting fire from tasks that sleep
    /// (a store's retry still comes while a server stops).
    package func loopEnded() {
        for (timer, deadline) in timers.removeAll() where !timer.isCancelled {
            sleep(timer, until: deadline)
        }
        runner.store(0, ordering: .releasing)
        let start = shared.withLock { shared -> Bool in
            shared.mode = .ownThread
            guard !shared.work.isEmpty, !shared.draining else { return false }
            shared.draining = true
            return true
        }
        if start { startDrainer() }
    }

    /// Runs `work` in order until `enough`; returns how many items ran.
    private func run(_ work: [Work], enough: () -> Bool = { false }) -> Int {
        let executor = asUnownedSerialExecutor()
        for (index, item) in work.enumerated() {
            if enough() { return index }
            switch item {
            case .job(let job): job.runSynchronously(on: executor)
            case .call(let call): call()
            }
        }
        return work.count
    }

    // MARK: - A thread of its own

    /// How long the executor's own thread waits for more work before it ends (the next job starts another).
    private static let drainerIdle: Duration = .milliseconds(100)

    private func startDrainer() {
        let thread = Thread { [self] in drain() }
        thread.name = "loop-executor"
        thread.start()
    }

    private func drain() {
        runner.store(UInt(pthread_self()), ordering: .releasing)
        var work: [Work] = []
        while true {
            shared.withLock { swap(&$0.work, &work) }
            if !work.isEmpty {
                _ = run(work)
                work.removeAll(keepingCapacity: true)
                continue
            }
            shared.withLock { $0.drainerWaiting = true }
            _ = shared.waitUntil({ !$0.work.isEmpty }, timeout: Self.drainerIdle)
            let leaving = shared.withLock { shared -> Bool in
                shared.drainerWaiting = false
                guard shared.work.isEmpty else { return false }
                runner.store(0, ordering: .releasing)
                shared.draining = false
                return true
            }
            if leaving { return }
        }
    }
}

/// A timer of a `LoopExecutor`.
public final class LoopTimer: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let fire: @Sendable () -> Void

    init(_ fire: @escaping @Sendable () -> Void) {
        self.fire = fire
    }

    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    func fireUnlessCancelled() {
        if !isCancelled { fire() }
    }
}
