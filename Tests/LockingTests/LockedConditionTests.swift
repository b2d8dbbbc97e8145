import Foundation
import Locking
import Testing

struct LockedConditionTests {
    /// Runs `body` on a thread of its own (it blocks) and hands back what it returns.
    private static func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// `body`'s result, or `nil` when it has not finished after `seconds` (a wake-up that never comes
    /// would otherwise hang the suite; the blocked thread is left behind).
    private static func within<Value: Sendable>(seconds: Int, _ body: @escaping @Sendable () async -> Value) async -> Value? {
        await withTaskGroup(of: Value?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test func aWaiterWakesForEachChangeAndGoesOnOnlyWhenTheValueIsReady() async {
        let counter = LockedCondition(0)
        // What the waiter saw each time it checked, so the test changes the value only once the waiter
        // is waiting: the wake-up, not the threads' timing, decides whether it goes on.
        let seen = LockedCondition<[Int]>([])
        let result = await Self.within(seconds: 10) {
            async let finished = Self.onThread {
                counter.waitUntil({ value in
                    seen.withLockAndWake { $0.append(value) }
                    return value >= 3
                }, then: { value in value })
            }
            for step in 0..<3 {
                await Self.onThread { seen.waitUntil({ $0.last == step }, then: { _ in }) }
                counter.withLockAndWake { $0 += 1 }
            }
            return await finished
        }
        #expect(result == 3, "the waiter was not woken")
        // Each value once, unless a spurious wake-up (which pthread allows) made the waiter look twice.
        #expect(Array(Set(seen.withLock { $0 })).sorted() == [0, 1, 2, 3])
    }

    @Test func aTimedWaitEndsAtItsTimeoutWhenTheValueNeverBecomesReady() async {
        let flag = LockedCondition(false)
        let clock = ContinuousClock()
        let start = clock.now
        let ready = await Self.onThread { flag.waitUntil({ $0 }, timeout: .milliseconds(50)) }
        #expect(!ready)
        // Not before its timeout (a wait that returns at once would pass the first check).
        #expect(clock.now - start >= .milliseconds(50))
    }

    @Test func aTimedWaitReturnsWhenWokenNotAtItsTimeout() async {
        let flag = LockedCondition(false)
        let waiting = LockedCondition(false)
        // The timeout is beyond the test's own limit: only the wake-up can end the wait in time.
        let result = await Self.within(seconds: 10) {
            async let ready = Self.onThread {
                flag.waitUntil({ value in
                    waiting.withLockAndWake { $0 = true }
                    return value
                }, timeout: .seconds(30))
            }
            await Self.onThread { waiting.waitUntil({ $0 }, then: { _ in }) }
            flag.withLockAndWake { $0 = true }
            return await ready
        }
        #expect(result == true, "the timed waiter was not woken")
    }

    @Test func withLockIsExclusiveAcrossThreads() async {
        let counter = LockedCondition(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { await Self.onThread { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } } }
            }
        }
        #expect(counter.withLock { $0 } == 40_000)
    }
}
