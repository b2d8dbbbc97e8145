import Testing
@testable import StoryCircleCore

/// The outbox giving up (at its retry limit, on a rejected record, when the lease is lost) and starting
/// again after a reset, and what it counts meanwhile (`OutboxDriver`, as in `OutboxStateTests`).
@Suite("OutboxState: giving up")
struct OutboxGivingUpTests {
    // MARK: Giving up

    @Test func givingUpAtTheRetryLimitDropsWhatIsHeldAndCountsIt() {
        var out = OutboxDriver(retryLimitMs: 1_000)
        out.persist(1)
        out.deliver("a", messages: 2)
        out.fail(1)
        out.persist(2)
        out.deliver("b", messages: 3)
        out.deliver("close", messages: 0)
        let waiter = out.awaitDurable().waiter
        while let retry = out.retryAt {
            out.advance(to: retry)
            if out.now - out.start >= 1_000 {
                #expect(out.fail(1) == ["writeFailed", "cancelRetry", "resume [\(waiter)] false", "gaveUp unavailable records:2 messages:5"])
            } else {
                out.fail(1)
            }
        }
        #expect(out.state.hasGivenUp)
        #expect(out.delivered == [], "held deliveries are never sent")
        #expect(out.written.allSatisfy { $0 == "p1" }, "p2 was never written")
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)
        #expect(out.resumed == [waiter: false])
    }

    @Test func aRejectedRecordGivesUpAtOnce() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a", messages: 2)
        out.persist(2)
        out.deliver("b")
        #expect(out.fail(1, .rejected) == ["writeFailed", "failing rejected", "cancelRetry", "gaveUp rejected records:2 messages:3"])
        #expect(out.state.hasGivenUp)
        #expect(out.retryAt == nil)
        #expect(out.delivered == [])
    }

    @Test func aRejectionWhileRetryingGivesUpBeforeTheDeadline() {
        var out = OutboxDriver(retryLimitMs: 60_000)
        out.persist(1)
        out.fail(1)
        out.advance(by: 100)
        #expect(out.fail(1, .rejected) == ["writeFailed", "cancelRetry", "gaveUp rejected records:1 messages:0"])
        #expect(out.state.hasGivenUp)
    }

    @Test func afterGivingUpEverythingIsDroppedUntilReset() {
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        out.persist(3)
        let (second, third) = (out.attempt(of: 2), out.attempt(of: 3))
        out.fail(1, .rejected)
        #expect(out.persist(4) == [])
        #expect(out.deliver("a") == [], "decided on a state about to be replaced")
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)
        #expect(out.handle(.retryDue(at: out.start + 1_000)) == [])
        #expect(out.complete(attempt: second) == [], "a late answer changes nothing")
        #expect(out.leaseLost(attempt: third) == [], "given up already")
        #expect(out.awaitDurable().actions.last?.hasSuffix("false") == true)
        #expect(out.written == ["p1", "p2", "p3"] && out.delivered == [])
    }

    @Test func afterResetTheFirstWriteResumesAndTheFirstStoredRecordMeansRecovered() {
        var out = OutboxDriver()
        out.persist(1)
        out.fail(1, .rejected)
        out.persist(2)
        #expect(out.handle(.reset) == ["cancelRetry"])
        #expect(!out.state.hasGivenUp)

        let (waiter, actions) = out.awaitDurable()
        #expect(actions == ["resume [\(waiter)] true"], "what was dropped is not waited for")
        #expect(out.deliver("a") == ["deliver a"], "nothing pending: at once")

        #expect(out.persist(3) == ["write p3 #2 resuming"])
        #expect(out.persist(4) == ["write p4 #3"], "only the first write resumes")
        out.deliver("b")
        #expect(out.commit(3) == ["recovered"])
        #expect(out.commit(4) == ["deliver b"], "recovered only once")
        #expect(out.written == ["p1", "p3", "p4"])
    }

    @Test func aFailureAfterResetStartsANewRunOfRetries() {
        var out = OutboxDriver(retryLimitMs: 1_000)
        out.persist(1)
        out.fail(1, .rejected)
        out.advance(by: 5_000)
        out.handle(.reset)
        out.persist(2)
        #expect(out.fail(2) == ["writeFailed", "failing unavailable", "scheduleRetry +5100"], "the limit counts from this failure")
        #expect(out.advance(by: 100) == ["write p2 #3 resuming"])
        #expect(out.commit(2) == ["cancelRetry", "recovered"])
    }

    // MARK: The lease

    @Test func losingTheLeaseDropsEverythingAndSaysSoOnce() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("a")
        out.persist(2)
        out.persist(3)
        out.fail(3)
        #expect(out.retryAt != nil)
        let waiter = out.awaitDurable().waiter
        #expect(out.leaseLost(attempt: out.attempt(of: 1)) == ["cancelRetry", "resume [\(waiter)] false", "leaseLost"])
        #expect(out.state.hasGivenUp)
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)
        #expect(out.retryAt == nil)
        #expect(out.leaseLost(attempt: out.attempt(of: 2)) == [], "a second refusal says nothing more")
        #expect(out.persist(3) == [] && out.deliver("b") == [])
        #expect(out.delivered == [])
        #expect(out.awaitDurable().actions.last?.hasSuffix("false") == true)
    }

    /// A room that stops for good while a record is failing must not leave anyone waiting for it: a
    /// handover or a teacher's command awaiting durability is answered `false`, nothing held goes out.
    @Test func stoppingWhileRetryingAnswersEveryWaiterAndDropsWhatIsHeld() {
        var out = OutboxDriver()
        out.persist(1)
        out.deliver("ack")
        out.fail(1)
        #expect(out.retryAt != nil)
        let waiter = out.awaitDurable().waiter
        #expect(out.handle(.stop) == ["cancelRetry", "resume [\(waiter)] false"])
        #expect(out.retryAt == nil)
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)
        #expect(out.handle(.retryDue(at: out.now + 10_000)) == [], "a retry timer firing late does nothing")
        #expect(out.persist(2) == [] && out.deliver("b") == [])
        #expect(out.delivered == [])
        #expect(out.handle(.stop) == [], "stopping twice says nothing more")
    }

    @Test func aLeaseRefusalWhileGivenUpStillCountsAsTheStoreAnswering() {
        // Given up on p1; p2's write comes back refused for the lease meanwhile. After the room rebuilt
        // itself, nothing of it is in flight any more: a failing record must still be retried.
        var out = OutboxDriver()
        out.persist(1)
        out.persist(2)
        out.fail(1, .rejected)
        #expect(out.leaseLost(attempt: out.attempt(of: 2)) == [])
        out.handle(.reset)
        out.persist(3)
        out.fail(3)
        #expect(out.inFlight.isEmpty)
        #expect(out.advance(by: 100) == ["write p3 #4 resuming"])
    }

    // MARK: Counting

    @Test func pendingRecordsCountsWhatIsNotDurableYet() {
        var out = OutboxDriver(retryLimitMs: 1_000)
        #expect(out.state.pendingRecords == 0)
        out.persist(1)
        out.persist(2)
        #expect(out.state.pendingRecords == 2)
        out.commit(1)
        #expect(out.state.pendingRecords == 1)
        out.fail(2)
        out.persist(3)
        out.deliver("c")
        #expect(out.state.pendingRecords == 2, "a failing record and one queued behind it")
        #expect(out.state.heldDeliveries == 1)
        out.advance(by: 100)
        out.commit(2)
        #expect(out.state.pendingRecords == 1)
        out.commit(3)
        #expect(out.state.pendingRecords == 0 && out.state.heldDeliveries == 0)

        out.persist(4)
        out.persist(5)
        out.fail(4, .rejected)
        #expect(out.state.pendingRecords == 0, "given up: dropped")
    }
}
