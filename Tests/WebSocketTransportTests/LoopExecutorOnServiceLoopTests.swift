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
        // Each timer's deadline, from a reading taken just before it is set (never later than the executor's
        // own): the one set from the loop's thread is set whenever the loop gets to it, which on a loaded
        // machine can be after the others' deadlines, so the order expected is the deadlines', not the delays'.
        let deadlines = Locked<[String: UInt64]>([:])
        @Sendable func record(_ name: String) {
            let now = LoopExecutor.monotonicNanoseconds()
            let deadline = deadlines.withLock { $0[name]! }
            let thread = executor.isCurrent ? "the loop" : "another thread"
            // Not before its time, nor long after (the keepalive sweep wakes the loop once a second: a timer the
            // loop did not know of would fire only then).
            let when = now < deadline ? "early, by \((deadline - now) / 1_000) µs" : now > deadline + 500_000_000 ? "late, by \((now - deadline) / 1_000_000) ms" : "on time"
            fired.withLockAndWake { $0.append("\(name) on \(thread) \(when)") }
        }
        @Sendable func schedule(_ milliseconds: Int64) -> LoopTimer {
            let name = String(milliseconds)
            deadlines.withLock { $0[name] = LoopExecutor.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000 }
            return executor.schedule(afterMilliseconds: milliseconds) { record(name) }
        }
        schedule(20).cancel()
        _ = schedule(90)
        _ = schedule(40)
        // Set from the loop's own thread, as a room sets its timers.
        executor.execute { _ = schedule(60) }
        let all = try await onOwnThread {
            fired.waitUntil({ $0.count == 3 }, timeout: .seconds(10))
        }
        #expect(all)
        let order = deadlines.withLock { deadlines in deadlines.filter { $0.key != "20" }.sorted { $0.value < $1.value }.map(\.key) }
        #expect(fired.withLock { $0 } == order.map { "\($0) on the loop on time" }, "in the order of their deadlines")
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
