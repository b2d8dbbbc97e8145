import Foundation
import Locking
import Testing
import TransportCore

/// An actor whose jobs run on a `LoopExecutor`, as a room's do.
private actor OnExecutor {
    nonisolated let executor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private(set) var log: [Int] = []

    init(_ executor: LoopExecutor) { self.executor = executor }

    /// Records `value`; returns the thread it ran on, and whether that is the one running the executor's
    /// work (the service thread while the loop runs).
    func record(_ value: Int) -> RanOn {
        log.append(value)
        return RanOn(thread: UInt(pthread_self()), executorsOwn: executor.isCurrent)
    }
}

private struct RanOn: Hashable, Sendable {
    var thread: UInt
    var executorsOwn: Bool
}

/// Runs `body` on a new thread and returns once it has returned.
private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = LockedCondition(false)
    Thread {
        body()
        done.withLockAndWake { $0 = true }
    }.start()
    done.waitUntil({ $0 }, then: { _ in })
}

/// Runs `body` on a thread of its own (never the cooperative pool, which a blocking wait would hold).
private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

@Suite("The loop executor", .serialized, .timeLimit(.minutes(1)))
struct LoopExecutorTests {
    // MARK: The loop's side, driven by the test as the service thread would

    @Test func workWaitsForTheLoopAndOnlyTheFirstJobFromAnotherThreadWakesIt() {
        let wakes = Locked(0)
        let executor = LoopExecutor(wakingLoopWith: { wakes.withLock { $0 += 1 } })
        let ran = Locked<[Int]>([])
        executor.execute { ran.withLock { $0.append(1) } }
        executor.execute { ran.withLock { $0.append(2) } }
        // Before the loop runs there is nobody to wake: the work waits for its first turn.
        #expect(wakes.withLock { $0 } == 0)
        #expect(ran.withLock { $0 }.isEmpty)

        executor.loopStarted() // this thread is the loop's from here
        #expect(executor.runPending() == false)
        #expect(ran.withLock { $0 } == [1, 2])

        onAnotherThread {
            executor.execute { ran.withLock { $0.append(3) } }
            executor.execute { ran.withLock { $0.append(4) } }
        }
        #expect(wakes.withLock { $0 } == 1, "one wake-up for a queue that was empty, none for the job behind it")
        // Submitted on the loop's own thread: it runs after the turn, with no wake-up.
        executor.execute { ran.withLock { $0.append(5) } }
        #expect(wakes.withLock { $0 } == 1)
        #expect(executor.runPending() == false)
        #expect(ran.withLock { $0 } == [1, 2, 3, 4, 5])
        executor.loopEnded()
    }

    @Test func workThatKeepsSubmittingWorkYieldsTheLoopAtTheLimit() {
        let executor = LoopExecutor(wakingLoopWith: {})
        let count = Locked(0)
        @Sendable func again() {
            count.withLock { $0 += 1 }
            executor.execute(again)
        }
        executor.loopStarted()
        executor.execute(again)
        // The loop gets its turn back (its sockets wait), told that work is left so that it does not sleep.
        #expect(executor.runPending(limit: 10) == true)
        #expect(count.withLock { $0 } == 10)
        #expect(executor.hasPending)
        executor.loopEnded()
    }

    @Test func aTurnThatHasHadEnoughLeavesTheRestForTheNextInOrder() {
        let executor = LoopExecutor(wakingLoopWith: {})
        let ran = Locked<[Int]>([])
        executor.loopStarted()
        for value in 1...5 {
            executor.execute {
                ran.withLock { $0.append(value) }
                // Submitted while the turn runs: behind everything that was waiting before it.
                if value == 2 { executor.execute { ran.withLock { $0.append(6) } } }
            }
        }
        // Asked before each job: after two, enough.
        #expect(executor.runPending { ran.withLock { $0.count } >= 2 } == true)
        #expect(ran.withLock { $0 } == [1, 2])
        #expect(executor.hasPending)
        executor.execute { ran.withLock { $0.append(7) } }
        #expect(executor.runPending() == false)
        #expect(ran.withLock { $0 } == [1, 2, 3, 4, 5, 6, 7])

        // Enough exactly at the end of what was waiting: what was submitted meanwhile waits whole.
        ran.withLock { $0 = [] }
        executor.execute {
            ran.withLock { $0.append(1) }
            executor.execute { ran.withLock { $0.append(2) } }
            executor.execute { ran.withLock { $0.append(3) } }
        }
        #expect(executor.runPending { ran.withLock { $0.count } >= 1 } == true)
        #expect(ran.withLock { $0 } == [1])
        #expect(executor.runPending() == false)
        #expect(ran.withLock { $0 } == [1, 2, 3])
        executor.loopEnded()
    }

    @Test func anExecutorOfItsOwnRunsActorsAndTimersInOrder() async throws {
        let executor = LoopExecutor.ownThread()
        let actor = OnExecutor(executor)
        await withTaskGroup(of: Void.self) { group in
            for value in 0..<50 { group.addTask { _ = await actor.record(value) } }
        }
        #expect(await actor.log.sorted() == Array(0..<50))
        let fired = LockedCondition(false)
        _ = executor.schedule(afterMilliseconds: 5) { fired.withLockAndWake { $0 = executor.isCurrent } }
        #expect(try await onOwnThread { fired.waitUntil({ $0 }, timeout: .seconds(10)) })
    }
}
