import Testing
@testable import Speech

/// The worker's rules on a clock of plain milliseconds: no process, no thread, no sleep.
@Suite("Piper worker policy")
struct PiperWorkerPolicyTests {
    func limits(queue: Int = 4, budget: Int = 2, reserve: Int = 0) -> PiperWorkerPolicy.Limits {
        var limits = PiperWorkerPolicy.Limits()
        limits.maxQueued = queue
        limits.urgentReserve = reserve
        limits.restartBudget = budget
        limits.startTimeoutMs = 1_000
        limits.budgetWindowMs = 10_000
        limits.coolDownMs = 60_000
        return limits
    }

    @Test func theFirstRequestLaunchesTheWorkerAndIsSentOnceItIsReady() {
        var policy = PiperWorkerPolicy(limits: limits())
        #expect(policy.submit(id: 1, timeoutMs: 500, nowMs: 0) == [.launch, .wake(atMs: 1_000)])
        #expect(policy.submit(id: 2, timeoutMs: 500, nowMs: 10) == [], "waits for the worker, in order")
        #expect(policy.ready(nowMs: 300) == [.send(id: 1), .wake(atMs: 800)])
        #expect(policy.answered(id: 1, nowMs: 400) == [.send(id: 2), .wake(atMs: 900)])
        #expect(policy.answered(id: 2, nowMs: 450) == [])
        #expect(policy.worker == .idle)
        #expect(policy.submit(id: 3, timeoutMs: 500, nowMs: 500) == [.send(id: 3), .wake(atMs: 1_000)], "a warm worker: sent at once")
    }

    @Test func urgentRequestsGoBeforeThoseReadAheadEachInOrder() {
        var policy = PiperWorkerPolicy(limits: limits(queue: 8))
        _ = policy.submit(id: 1, timeoutMs: 500, urgent: false, nowMs: 0)
        _ = policy.submit(id: 2, timeoutMs: 500, urgent: false, nowMs: 0)
        _ = policy.submit(id: 3, timeoutMs: 500, urgent: true, nowMs: 0)
        _ = policy.submit(id: 4, timeoutMs: 500, urgent: true, nowMs: 0)
        #expect(policy.queue.map(\.id) == [3, 4, 1, 2])
        #expect(policy.ready(nowMs: 10) == [.send(id: 3), .wake(atMs: 510)])
    }

    @Test func aReadAheadRequestARoomNowWaitsForIsPromoted() {
        var policy = PiperWorkerPolicy(limits: limits(queue: 8))
        _ = policy.submit(id: 1, timeoutMs: 500, urgent: false, nowMs: 0)
        _ = policy.submit(id: 2, timeoutMs: 500, urgent: false, nowMs: 0)
        _ = policy.submit(id: 3, timeoutMs: 500, urgent: true, nowMs: 0)
        #expect(policy.promote(id: 2) == [])
        #expect(policy.queue.map(\.id) == [3, 2, 1], "after the urgent ones already waiting, before the rest")
        #expect(policy.promote(id: 2) == [] && policy.queue.map(\.id) == [3, 2, 1], "once")
        #expect(policy.promote(id: 9) == [])
    }

    @Test func theQueueIsBounded() {
        var policy = PiperWorkerPolicy(limits: limits(queue: 2))
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.submit(id: 2, timeoutMs: 500, nowMs: 0)
        #expect(policy.submit(id: 3, timeoutMs: 500, nowMs: 0) == [.fail(id: 3, .queueFull)])
        _ = policy.ready(nowMs: 10)
        #expect(policy.submit(id: 4, timeoutMs: 500, nowMs: 20) == [], "one left the queue for the worker: room again")
    }

    @Test func readingAheadNeverTakesThePlacesKeptForRoomsThatWait() {
        var policy = PiperWorkerPolicy(limits: limits(queue: 4, reserve: 2))
        #expect(policy.submit(id: 1, timeoutMs: 500, urgent: false, nowMs: 0) == [.launch, .wake(atMs: 1_000)])
        #expect(policy.submit(id: 2, timeoutMs: 500, urgent: false, nowMs: 0) == [])
        #expect(policy.submit(id: 3, timeoutMs: 500, urgent: false, nowMs: 0) == [.fail(id: 3, .queueFull)], "two of four kept")
        #expect(policy.submit(id: 4, timeoutMs: 500, urgent: true, nowMs: 0) == [])
        #expect(policy.submit(id: 5, timeoutMs: 500, urgent: true, nowMs: 0) == [])
        #expect(policy.queue.map(\.id) == [4, 5, 1, 2])
    }

    @Test func anUrgentRequestAtAFullQueueTakesThePlaceOfTheNewestReadAhead() {
        var policy = PiperWorkerPolicy(limits: limits(queue: 3))
        for id in 1...3 { _ = policy.submit(id: id, timeoutMs: 500, urgent: false, nowMs: 0) }
        #expect(policy.submit(id: 4, timeoutMs: 500, urgent: true, nowMs: 0) == [.fail(id: 3, .queueFull)])
        #expect(policy.queue.map(\.id) == [4, 1, 2])
        #expect(policy.submit(id: 5, timeoutMs: 500, urgent: true, nowMs: 0) == [.fail(id: 2, .queueFull)])
        #expect(policy.submit(id: 6, timeoutMs: 500, urgent: true, nowMs: 0) == [.fail(id: 1, .queueFull)])
        #expect(policy.submit(id: 7, timeoutMs: 500, urgent: true, nowMs: 0) == [.fail(id: 7, .queueFull)], "only rooms that wait: refused")
        #expect(policy.queue.map(\.id) == [4, 5, 6])
        #expect(policy.ready(nowMs: 10) == [.send(id: 4), .wake(atMs: 510)])
    }

    @Test func shuttingDownFailsEveryoneKillsTheWorkerAndLaunchesNothingAgain() {
        var policy = PiperWorkerPolicy(limits: limits(queue: 8))
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.ready(nowMs: 10)
        _ = policy.submit(id: 2, timeoutMs: 500, urgent: false, nowMs: 20)
        #expect(policy.shutDown(nowMs: 30) == [.fail(id: 2, .unavailable("the server is stopping")), .fail(id: 1, .unavailable("the server is stopping")), .kill])
        #expect(policy.exited(nowMs: 40) == [], "no relaunch")
        #expect(policy.submit(id: 3, timeoutMs: 500, nowMs: 50) == [.fail(id: 3, .unavailable("the server is stopping"))])
        #expect(policy.warmUp(nowMs: 60) == [])
        #expect(policy.worker == .stopped)
    }

    @Test func aRequestPastItsDeadlineKillsTheWorkerWhichStartsAgainForTheRest() {
        var policy = PiperWorkerPolicy(limits: limits())
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.submit(id: 2, timeoutMs: 500, nowMs: 0)
        _ = policy.ready(nowMs: 100)
        #expect(policy.tick(nowMs: 599) == [.wake(atMs: 600)], "not yet")
        #expect(policy.tick(nowMs: 600) == [.fail(id: 1, .timedOut), .kill])
        #expect(policy.worker == .stopping)
        #expect(policy.exited(nowMs: 610) == [.launch, .wake(atMs: 1_610)], "counted once, at the timeout; relaunched for request 2")
        #expect(policy.failures == [600])
        #expect(policy.ready(nowMs: 900) == [.send(id: 2), .wake(atMs: 1_400)])
    }

    @Test func aWorkerThatDiesMidRequestFailsThatRequestAndIsRelaunchedOnlyWhenSomethingWaits() {
        var policy = PiperWorkerPolicy(limits: limits())
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.ready(nowMs: 100)
        #expect(policy.exited(nowMs: 200) == [.fail(id: 1, .workerDied)])
        #expect(policy.worker == .stopped, "nothing waits: started again on the next request")
        #expect(policy.submit(id: 2, timeoutMs: 500, nowMs: 300) == [.launch, .wake(atMs: 1_300)])
    }

    @Test func aWorkerThatNeverGetsReadyIsKilledAtTheStartTimeout() {
        var policy = PiperWorkerPolicy(limits: limits())
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        #expect(policy.tick(nowMs: 1_000) == [.kill])
        #expect(policy.exited(nowMs: 1_005) == [.launch, .wake(atMs: 2_005)])
    }

    @Test func pastTheRestartBudgetTheWorkerIsGivenUpAndEveryoneWaitingIsToldAtOnce() {
        var policy = PiperWorkerPolicy(limits: limits(budget: 2))
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.submit(id: 2, timeoutMs: 500, nowMs: 0)
        // A broken install: the worker says it cannot start, three times.
        for (attempt, now) in [100, 200, 300].enumerated() {
            #expect(policy.launchFailed("piper-tts cannot be imported", nowMs: now) == [.kill])
            let directives = policy.exited(nowMs: now + 1)
            if attempt < 2 {
                #expect(directives == [.launch, .wake(atMs: now + 1 + 1_000)])
            } else {
                #expect(directives == [.fail(id: 1, .unavailable("piper-tts cannot be imported")), .fail(id: 2, .unavailable("piper-tts cannot be imported"))])
            }
        }
        #expect(!policy.isAvailable(atMs: 301))
        #expect(policy.submit(id: 3, timeoutMs: 500, nowMs: 5_000) == [.fail(id: 3, .unavailable("piper-tts cannot be imported"))], "no waiting while given up")
        #expect(policy.warmUp(nowMs: 5_000) == [])
        #expect(policy.isAvailable(atMs: 60_301))
        #expect(policy.submit(id: 4, timeoutMs: 500, nowMs: 60_301) == [.launch, .wake(atMs: 61_301)], "tried again after the cool-down")
        #expect(policy.failures == [])
    }

    @Test func failuresOutsideTheWindowDoNotCount() {
        var policy = PiperWorkerPolicy(limits: limits(budget: 1))
        for (id, now) in [(1, 0), (2, 20_000), (3, 40_000)] {
            _ = policy.submit(id: id, timeoutMs: 500, nowMs: now)
            _ = policy.ready(nowMs: now + 100)
            #expect(policy.exited(nowMs: now + 200) == [.fail(id: id, .workerDied)])
        }
        #expect(policy.isAvailable(atMs: 40_300), "one death every 20 s is within a budget of 1 per 10 s")
    }

    @Test func anAnswerThatIsAnErrorFailsOnlyItsRequest() {
        var policy = PiperWorkerPolicy(limits: limits())
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.submit(id: 2, timeoutMs: 500, nowMs: 0)
        _ = policy.ready(nowMs: 10)
        #expect(policy.answered(id: 1, rejected: "unknown voice", nowMs: 20) == [.fail(id: 1, .rejected("unknown voice")), .send(id: 2), .wake(atMs: 520)])
        #expect(policy.failures == [])
    }

    @Test func lateWordsAboutAnotherRequestChangeNothing() {
        var policy = PiperWorkerPolicy(limits: limits())
        _ = policy.submit(id: 1, timeoutMs: 500, nowMs: 0)
        _ = policy.ready(nowMs: 10)
        let before = policy
        #expect(policy.answered(id: 7, nowMs: 20) == [])
        #expect(policy.ready(nowMs: 20) == [])
        #expect(policy == before)
    }

    @Test func warmingUpLaunchesWithoutARequest() {
        var policy = PiperWorkerPolicy(limits: limits())
        #expect(policy.warmUp(nowMs: 0) == [.launch, .wake(atMs: 1_000)])
        #expect(policy.warmUp(nowMs: 1) == [], "once")
        #expect(policy.ready(nowMs: 500) == [])
        #expect(policy.submit(id: 1, timeoutMs: 300, nowMs: 600) == [.send(id: 1), .wake(atMs: 900)])
    }
}
