import Dispatch
import Foundation
import Locking
import Testing

/// Every wait here happens on threads of the tests' own, never on the cooperative pool: on a loaded
/// machine (the whole suite starts at once on two cores) a task that is ready can wait many seconds for a
/// pool thread, which made a working wake-up look lost when the deadline was a task's sleep.
struct LockedConditionTests {
    /// A thread that runs `body`; `join()` blocks until it has returned and hands back what it returned.
    private final class Spawned<Value: Sendable>: Sendable {
        private let result = Locked<Value?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ body: @escaping @Sendable () -> Value) {
            Thread { [self] in
                result.withLock { $0 = body() }
                done.signal()
            }.start()
        }

        /// `nil` when the thread has not returned within `timeout`. The harness waits on a semaphore, not on
        /// the type under test, so a broken wake-up cannot also break the wait that catches it.
        func join(timeout: DispatchTimeInterval = .seconds(30)) -> Value? {
            done.wait(timeout: .now() + timeout) == .success ? result.withLock { $0 } : nil
        }
    }

    /// `body` run on a thread of its own, awaited from the test: its result, or `nil` when it has not
    /// finished after 30 s of real time (a wake-up that never comes would otherwise hang the suite; the
    /// blocked thread is left behind). It should take milliseconds: the bound only tells "never" from "late".
    private static func within<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value? {
        await withCheckedContinuation { continuation in
            let spawned = Spawned(body)
            Thread { continuation.resume(returning: spawned.join()) }.start()
        }
    }

    @Test func aWaiterWakesForEachChangeAndGoesOnOnlyWhenTheValueIsReady() async {
        let counter = LockedCondition(0)
        // What the waiter saw each time it checked, so the test changes the value only once the waiter
        // is waiting: the wake-up, not the threads' timing, decides whether it goes on.
        let seen = LockedCondition<[Int]>([])
        let result = await Self.within {
            let waiter = Spawned {
                counter.waitUntil({ value in
                    seen.withLockAndWake { $0.append(value) }
                    return value >= 3
                }, then: { value in value })
            }
            for step in 0..<3 {
                seen.waitUntil({ $0.last == step }, then: { _ in })
                counter.withLockAndWake { $0 += 1 }
            }
            return waiter.join()
        }
        #expect(result == 3, "the waiter was not woken")
        // Each value once, unless a spurious wake-up (which pthread allows) made the waiter look twice.
        #expect(Array(Set(seen.withLock { $0 })).sorted() == [0, 1, 2, 3])
    }

    @Test func aTimedWaitEndsAtItsTimeoutWhenTheValueNeverBecomesReady() async {
        let flag = LockedCondition(false)
        // Measured on the waiting thread itself: only a lower bound, which load cannot break.
        let (ready, waited) = await Self.within { () -> (Bool, Duration) in
            let start = ContinuousClock.now
            let ready = flag.waitUntil({ $0 }, timeout: .milliseconds(50))
            return (ready, ContinuousClock.now - start)
        } ?? (true, .zero)
        #expect(!ready)
        // Not before its timeout (a wait that returns at once would pass the first check).
        #expect(waited >= .milliseconds(50))
    }

    @Test func aTimedWaitReturnsWhenWokenNotAtItsTimeout() async {
        let flag = LockedCondition(false)
        let waiting = LockedCondition(false)
        // The timeout is ten times the harness's bound: only the wake-up can end the wait in time.
        let result = await Self.within {
            let waiter = Spawned {
                flag.waitUntil({ value in
                    waiting.withLockAndWake { $0 = true }
                    return value
                }, timeout: .seconds(300))
            }
            waiting.waitUntil({ $0 }, then: { _ in })
            flag.withLockAndWake { $0 = true }
            return waiter.join()
        }
        #expect(result == true, "the timed waiter was not woken")
    }

    @Test func withLockIsExclusiveAcrossThreads() async {
        let counter = LockedCondition(0)
        let total = await Self.within {
            let threads = (0..<4).map { _ in Spawned { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } } }
            threads.forEach { _ = $0.join() }
            return counter.withLock { $0 }
        }
        #expect(total == 40_000)
    }
}
