import Testing
@testable import StoryCircleCore

/// The outbox's rules, on plain values: what waits for which record, how a failing record is retried, and
/// when the outbox gives up. The store is a fake that answers only when a test says so (`OutboxDriver`).
@Suite("OutboxState")
struct OutboxStateTests {
    // MARK: Holding deliveries for records

    @Test func aSendWithNothingPendingGoesOutAtOnce() {
        var out = OutboxDriver()
        #expect(out.deliver("a") == ["deliver a"])
        #expect(out.deliver("close", messages: 0) == ["deliver close"])
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)
    }

    @Test func eachRecordIsWrittenAtOnceWithAnAttemptOfItsOwn() {
        var out = OutboxDriver()
        #expect(out.persist(1) == ["write p1 #1"])
        #expect(out.persist(2) == ["write p2 #2"])
        #expect(out.writes.allSatisfy { !$0.resuming }, "nothing failed: no write resumes")
        #expect(out.state.pendingRecords == 2)
    }

    @Test func aSendAfterARecordIsHeldUntilThatRecordIsDurable() {
        var out = OutboxDriver()
        out.persist(1)
        #expect(out.deliver("a") == [])
        #expect(out.state.heldDeliveries == 1)
        #expect(out.commit(1) == ["deliver a"])
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)
        #expect(out.deliver("b") == ["deliver b"], "nothing pending again: at once")
    }

    @Test func orderIsKeptAcrossSeveralRecordsAndSends() {
        var out = OutboxDriver()
        out.deliver("a")
        out.persist(1)
        out.deliver("b")
        out.persist(2)
        out.deliver("c")
        out.deliver("d", messages: 0)
        out.persist(3)
        out.deliver("e")
        #expect(out.delivered == ["a"])
        #expect(out.state.heldDeliveries == 4)

        #expect(out.commit(1) == ["deliver b"])
        #expect(out.commit(2) == ["deliver c", "deliver d"])
        #expect(out.deliver("f") == [], "decided after p3: waits for it, behind e")
        #expect(out.commit(3) == ["deliver e", "deliver f"])
        #expect(out.delivered == ["a", "b", "c", "d", "e", "f"])
        #expect(out.written == ["p1", "p2", "p3"])
    }

    @Test func aLaterRecordCommittedFirstReleasesNothingUntilTheEarlierOneIs() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a")
        out.persist(2)
        out.deliver("b")
        out.persist(3)
        out.deliver("c")

        #expect(out.commit(3) == [])
        #expect(out.commit(2) == [])
        #expect(out.state.pendingRecords == 3, "durable means every record up to it is committed")
        #expect(out.delivered == [])
        #expect(out.commit(1) == ["deliver a", "deliver b", "deliver c"])
        #expect(out.state.pendingRecords == 0)
    }

    @Test func aPartlyCommittedPrefixReleasesWhatDependsOnIt() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a")
        out.persist(2)
        out.deliver("b")
        out.persist(3)
        out.deliver("c")

        #expect(out.commit(2) == [])
        #expect(out.commit(1) == ["deliver a", "deliver b"])
        #expect(out.state.pendingRecords == 1)
        #expect(out.commit(3) == ["deliver c"])
    }

    // MARK: Waiters

    @Test func aWaiterIsResumedAtOnceWhenNothingIsPending() {
        var out = OutboxDriver()
        let (waiter, actions) = out.awaitDurable()
        #expect(actions == ["resume [\(waiter)] true"])

        out.persist(1)
        out.commit(1)
        let (later, again) = out.awaitDurable()
        #expect(again == ["resume [\(later)] true"], "everything decided so far is durable")
    }

    @Test func waitersAreResumedTrueOnceWhatWasDecidedBeforeThemIsDurable() {
        var out = OutboxDriver()
        out.persist(1)
        let first = out.awaitDurable()
        out.persist(2)
        let second = out.awaitDurable()
        let third = out.awaitDurable()
        #expect(first.actions == [] && second.actions == [] && third.actions == [])

        #expect(out.commit(2) == [], "p1 is not durable yet: nobody is resumed")
        #expect(out.commit(1) == ["resume [\(first.waiter), \(second.waiter), \(third.waiter)] true"])

        out.persist(3)
        let fourth = out.awaitDurable()
        out.persist(4)
        #expect(out.commit(3) == ["resume [\(fourth.waiter)] true"], "it waited for p3 only, not for p4")
        #expect(out.resumed.values.allSatisfy { $0 })
    }

    @Test func waitersAreResumedAfterTheDeliveriesTheyFollow() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a")
        let waiter = out.awaitDurable().waiter
        #expect(out.commit(1) == ["deliver a", "resume [\(waiter)] true"])
    }

    @Test func waitersAreResumedFalseWhenTheOutboxGivesUp() {
        var out = OutboxDriver()
        out.persist(1)
        let waiter = out.awaitDurable().waiter
        #expect(out.fail(1, .rejected) == ["writeFailed", "failing rejected", "cancelRetry", "resume [\(waiter)] false", "gaveUp rejected records:1 messages:0"])
        #expect(out.resumed == [waiter: false])

        let (late, actions) = out.awaitDurable()
        #expect(actions == ["resume [\(late)] false"], "given up: nothing decided now will be durable")
    }

    // MARK: Failures and retries

    @Test func aFirstFailureIsReportedAndRetriedAfter100ms() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a")
        #expect(out.fail(1) == ["writeFailed", "failing unavailable", "scheduleRetry +100"])
        #expect(out.state.pendingRecords == 1 && out.state.heldDeliveries == 1, "what was held stays held")
        #expect(!out.state.hasGivenUp)

        #expect(out.advance(by: 99) == [])
        #expect(out.advance(by: 1) == ["write p1 #2 resuming"], "the retry tells the store to take the room's records again")
        #expect(out.commit(1) == ["cancelRetry", "deliver a", "recovered"])
        #expect(out.delivered == ["a"])
        #expect(out.state.pendingRecords == 0)
    }

    @Test func theRetryIsTimedFromTheFailureNotFromTheWrite() {
        var out = OutboxDriver()
        out.persist(1)
        out.advance(by: 30)
        #expect(out.fail(1) == ["writeFailed", "failing unavailable", "scheduleRetry +130"])
        out.advance(to: out.start + 130)
        out.advance(by: 70)
        #expect(out.fail(1) == ["writeFailed", "scheduleRetry +400"], "answered at +200: the next retry 200 ms after that; `failing` only once")
    }

    @Test func recordsDecidedWhileRetryingWaitUntilTheFailingOneIsStoredThenAllGoInOrder() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a")
        out.fail(1)
        #expect(out.persist(2) == [], "not written while p1 is failing")
        out.deliver("b")
        #expect(out.persist(3) == [])
        out.deliver("c")
        #expect(out.state.pendingRecords == 3)

        #expect(out.advance(by: 100) == ["write p1 #2 resuming"], "oldest first, and only it")
        #expect(out.commit(1) == ["cancelRetry", "write p2 #3", "write p3 #4", "deliver a", "recovered"])
        #expect(out.commit(2) == ["deliver b"])
        #expect(out.commit(3) == ["deliver c"])
        #expect(out.written == ["p1", "p1", "p2", "p3"])
        #expect(out.delivered == ["a", "b", "c"])
    }

    @Test func recordsThatFailedBehindTheFailingOneAreWrittenAgainAfterIt() {
        // The store fails every later record of the room once one failed, until a write resumes.
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        out.deliver("b")
        out.persist(3)
        #expect(out.fail(1) == ["writeFailed", "failing unavailable", "scheduleRetry +100"])
        #expect(out.fail(2) == ["writeFailed"], "only the oldest record is ever tried again")
        #expect(out.fail(3) == ["writeFailed"])

        #expect(out.advance(by: 100) == ["write p1 #4 resuming"])
        #expect(out.commit(1) == ["cancelRetry", "write p2 #5", "write p3 #6", "recovered"])
        #expect(out.commit(2) == ["deliver b"])
        #expect(out.commit(3) == [])
        #expect(out.state.pendingRecords == 0)
    }

    @Test func aRecordCommittedBehindTheFailingOneIsNotWrittenAgain() {
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        out.persist(3)
        out.deliver("c")
        out.fail(1)
        #expect(out.commit(2) == [], "committed, but not durable while p1 is not")
        out.fail(3)
        out.advance(by: 100)
        #expect(out.commit(1) == ["cancelRetry", "write p3 #5", "recovered"], "p2 is stored already: no second copy")
        #expect(out.commit(3) == ["deliver c"])
        #expect(out.written == ["p1", "p2", "p3", "p1", "p3"])
    }

    @Test func backoffDoublesFrom100msTo1sThenStaysThere() throws {
        var out = OutboxDriver(retryLimitMs: 60_000)
        out.persist(1)
        out.fail(1)
        var delays: [Int] = []
        var failedAt = out.now
        for _ in 0..<7 {
            let retry = try #require(out.retryAt)
            delays.append(retry - failedAt)
            let next = out.writes.count + 1
            #expect(out.advance(to: retry) == ["write p1 #\(next) resuming"])
            failedAt = out.now
            out.fail(1)
        }
        #expect(delays == [100, 200, 400, 800, 1_000, 1_000, 1_000])
        #expect(!out.state.hasGivenUp)
    }

    @Test func theLastRetryComesAtTheDeadlineAndAFailureThereGivesUp() {
        var out = OutboxDriver(retryLimitMs: 1_000)
        out.persist(1)
        out.deliver("a", messages: 2)
        out.fail(1)
        var retries: [Int] = []
        while let retry = out.retryAt {
            retries.append(retry - out.start)
            out.advance(to: retry)
            let actions = out.fail(1)
            if out.state.hasGivenUp {
                #expect(actions == ["writeFailed", "cancelRetry", "gaveUp unavailable records:1 messages:2"])
            }
        }
        // 100, 200, 400, then 800 would pass the deadline: the last retry is at it.
        #expect(retries == [100, 300, 700, 1_000])
        #expect(out.state.hasGivenUp)
        #expect(out.delivered == [])
    }

    @Test func withALongerLimitTheBackoffIsCappedAndTheLastDelayIsCutAtTheDeadline() {
        var out = OutboxDriver(retryLimitMs: 10_000)
        out.persist(1)
        out.fail(1)
        var retries: [Int] = []
        while let retry = out.retryAt {
            retries.append(retry - out.start)
            out.advance(to: retry)
            out.fail(1)
        }
        #expect(retries == [100, 300, 700, 1_500, 2_500, 3_500, 4_500, 5_500, 6_500, 7_500, 8_500, 9_500, 10_000])
        #expect(out.state.hasGivenUp)
    }

    @Test func aRetryIsNotIssuedWhileAnAttemptIsStillInFlight() {
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        out.deliver("b")
        out.fail(1)
        #expect(out.advance(by: 100) == [], "p2 is still with the store: no second write meanwhile")
        #expect(out.retryAt == nil)
        out.advance(by: 50)
        #expect(out.fail(2) == ["writeFailed", "write p1 #3 resuming"], "the store answered: the due retry goes now")
        #expect(out.commit(1) == ["cancelRetry", "write p2 #4", "recovered"])
        #expect(out.commit(2) == ["deliver b"])
    }

    @Test func aStaleCompletionArrivingLateLetsTheDueRetryGo() {
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        let old = out.attempt(of: 2)
        out.fail(1, .rejected)
        #expect(out.state.hasGivenUp)
        out.handle(.reset)

        #expect(out.persist(3) == ["write p3 #3 resuming"])
        out.deliver("c")
        #expect(out.fail(3) == ["writeFailed", "failing unavailable", "scheduleRetry +100"])
        #expect(out.advance(by: 100) == [], "p2's attempt, from before giving up, is still with the store")
        #expect(out.complete(attempt: old, OutboxDriver.failure()) == ["write p3 #4 resuming"], "stale: it only frees the way")
        #expect(out.commit(3) == ["cancelRetry", "deliver c", "recovered"])
    }

    @Test func aStaleCompletionReleasesNothing() {
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        let old = out.attempt(of: 2)
        out.fail(1, .rejected)
        out.handle(.reset)
        out.persist(3)
        out.deliver("c")
        #expect(out.complete(attempt: old) == [], "p2 was dropped when the outbox gave up: its answer counts for nothing")
        #expect(out.delivered == [] && out.state.pendingRecords == 1)
        #expect(out.commit(3) == ["deliver c", "recovered"])
    }

    @Test func aRetryTimerFiringEarlyIsIgnored() {
        var out = OutboxDriver()
        out.persist(1)
        out.fail(1)
        #expect(out.handle(.retryDue(at: out.start + 99)) == [])
        #expect(out.handle(.retryDue(at: out.start + 100)) == ["write p1 #2 resuming"])
        #expect(out.handle(.retryDue(at: out.start + 150)) == [], "a second firing writes no second copy")
        out.commit(1)
        #expect(out.handle(.retryDue(at: out.start + 10_000)) == [], "not retrying any more")
    }

    @Test func aRetryTimerFiringWhileNothingFailedIsIgnored() {
        var out = OutboxDriver()
        out.persist(1)
        #expect(out.handle(.retryDue(at: out.start + 1_000)) == [])
        #expect(out.written == ["p1"])
    }
}
