import Foundation
import Locking
import Testing
import TransportCore
import WebSocketTransport

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

@Suite("The loop executor on the service loop", .serialized, .timeLimit(.minutes(1)))
struct LoopExecutorOnServiceLoopTests {
    @Test func anActorOnTheLoopRunsOnTheServiceThreadInOrder() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let actor = OnExecutor(harness.server.loopExecutor)
        var threads: Set<RanOn> = []
        for value in 0..<200 { threads.insert(await actor.record(value)) }
        #expect(threads.count == 1 && threads.allSatisfy(\.executorsOwn))
        #expect(await actor.log == Array(0..<200))
    }

    @Test func timersFireOnTheServiceThreadInDeadlineOrderNotBeforeTheirTimeAndACancelledOneNever() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let executor = harness.server.loopExecutor
        let fired = LockedCondition<[String]>([])
        let start = LoopExecutor.monotonicNanoseconds()
        @Sendable func record(_ name: String) {
            let elapsed = (LoopExecutor.monotonicNanoseconds() - start) / 1_000_000
            let thread = executor.isCurrent ? "the loop" : "another thread"
            // Not before its time, nor long after (the keepalive sweep wakes the loop once a second: a timer the
            // loop did not know of would fire only then).
            let when = elapsed < UInt64(name)! ? "early, after \(elapsed) ms" : elapsed > UInt64(name)! + 500 ? "late, after \(elapsed) ms" : "on time"
            fired.withLockAndWake { $0.append("\(name) on \(thread) \(when)") }
        }
        let cancelled = executor.schedule(afterMilliseconds: 20) { record("20") }
        cancelled.cancel()
        _ = executor.schedule(afterMilliseconds: 90) { record("90") }
        _ = executor.schedule(afterMilliseconds: 40) { record("40") }
        // Set from the loop's own thread, as a room sets its timers.
        executor.execute { _ = executor.schedule(afterMilliseconds: 60) { record("60") } }
        let all = try await onOwnThread {
            fired.waitUntil({ $0.count == 3 }, timeout: .seconds(10))
        }
        #expect(all)
        #expect(fired.withLock { $0 } == ["40 on the loop on time", "60 on the loop on time", "90 on the loop on time"])
    }

    @Test func afterTheLoopHasStoppedItsActorsStillRunOnAThreadOfTheExecutorsOwn() async throws {
        let harness = try TransportHarness()
        let actor = OnExecutor(harness.server.loopExecutor)
        let onLoop = await actor.record(1)
        #expect(onLoop.executorsOwn)
        harness.stop()
        // Without a thread to take over, this would wait forever: a server stopping while a request awaits a room.
        let after = await actor.record(2)
        #expect(after.executorsOwn && after.thread != onLoop.thread)
        #expect(await actor.log == [1, 2])
    }

    @Test func aTimerStillWaitingWhenTheLoopEndsFiresAfterAll() async throws {
        let harness = try TransportHarness()
        let executor = harness.server.loopExecutor
        let fired = LockedCondition(false)
        // Set on the loop, as a store's retry is: then the loop ends before its time.
        executor.execute { _ = executor.schedule(afterMilliseconds: 200) { fired.withLockAndWake { $0 = true } } }
        let armed = LockedCondition(false)
        executor.execute { armed.withLockAndWake { $0 = true } }
        _ = try await onOwnThread { armed.waitUntil({ $0 }, timeout: .seconds(10)) }
        harness.stop()
        #expect(try await onOwnThread { fired.waitUntil({ $0 }, timeout: .seconds(10)) }, "a timer of a loop that ended was dropped")
    }
}
