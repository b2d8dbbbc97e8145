import Testing
@testable import StoryCircleCore

/// A node's leases, on plain instants: which are renewed, which are dropped, when a room is handed over
/// and when an idle one is let go. Every instant is `t0` plus a duration: nothing here waits.
@Suite("LeaseBook")
struct LeaseBookTests {
    let t0 = ContinuousClock.now
    let period = Duration.seconds(30)

    func at(_ seconds: Int) -> ContinuousClock.Instant {
        t0 + .seconds(seconds)
    }

    /// A lease on `room` until `t0 + deadline` seconds.
    func lease(_ room: String, epoch: Int64, until deadline: Int, wantedBy: String? = nil) -> RoomLease {
        RoomLease(
            room: room, node: "node-a", epoch: epoch, expiresAt: ServerTime(milliseconds: 1_000_000 + Int64(deadline) * 1_000),
            deadline: at(deadline), wantedBy: wantedBy
        )
    }

    /// `lease`, renewed until `t0 + deadline` seconds.
    func renewed(_ lease: RoomLease, until deadline: Int, wantedBy: String? = nil) -> RoomLease {
        var renewed = lease
        renewed.deadline = at(deadline)
        renewed.expiresAt = ServerTime(milliseconds: 1_000_000 + Int64(deadline) * 1_000)
        renewed.wantedBy = wantedBy
        return renewed
    }

    func makeBook(acquiring leases: [RoomLease], at seconds: Int = 0, idleRelease: Duration = .seconds(60)) -> LeaseBook {
        var book = LeaseBook(period: period, idleRelease: idleRelease)
        for lease in leases { #expect(book.handle(.acquired(lease, at: at(seconds))) == []) }
        return book
    }

    // MARK: Listing

    @Test func leasesAreListedSortedByRoom() {
        let (c, a, b) = (lease("C", epoch: 1, until: 30), lease("A", epoch: 2, until: 30), lease("B", epoch: 3, until: 30))
        let book = makeBook(acquiring: [c, a, b])
        #expect(book.leases == [a, b, c])
        #expect(book.lease(of: "B") == b)
        #expect(book.lease(of: "D") == nil)
        #expect(!book.isHandingOver("A"))
    }

    @Test func removedForgetsTheRoom() {
        let (a, b) = (lease("A", epoch: 1, until: 30), lease("B", epoch: 2, until: 30))
        var book = makeBook(acquiring: [a, b])
        #expect(book.handle(.removed(a)) == [])
        #expect(book.leases == [b])
        #expect(book.lease(of: "A") == nil)
        // A renewal asked before the removal answers afterwards: the room is gone, nothing to drop.
        #expect(book.handle(.renewed(asked: [a, b], held: [renewed(b, until: 40)], at: at(10))) == [])
        #expect(book.handle(.renewalFailed(asked: [a], at: at(100))) == [])
        #expect(book.handle(.occupancy(["A": false], at: at(10))) == [])
        #expect(book.handle(.occupancy(["A": false], at: at(1_000))) == [])
        #expect(book.leases == [renewed(b, until: 40)])
    }

    // MARK: Renewals

    @Test func aRenewalThatOmitsALeaseDropsItOnce() {
        let (a, b, c) = (lease("A", epoch: 1, until: 30), lease("B", epoch: 2, until: 30), lease("C", epoch: 3, until: 30))
        var book = makeBook(acquiring: [a, b, c])
        let asked = book.leases
        let actions = book.handle(.renewed(asked: asked, held: [renewed(b, until: 40)], at: at(10)))
        #expect(actions == [.drop(a, because: "lease not renewed"), .drop(c, because: "lease not renewed")])
        #expect(book.leases == [renewed(b, until: 40)])
        // The same answer again (or a late one for the same round) drops nothing more.
        #expect(book.handle(.renewed(asked: asked, held: [renewed(b, until: 40)], at: at(11))) == [])
        #expect(book.handle(.renewalFailed(asked: asked, at: at(35))) == [], "A and C are gone; B runs until 40")
    }

    @Test func renewedLeasesAreUpdatedAndTheirNewDeadlineCounts() {
        let a = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [a])
        let longer = renewed(a, until: 40)
        #expect(book.handle(.renewed(asked: [a], held: [longer], at: at(10))) == [])
        #expect(book.lease(of: "A") == longer)
        #expect(book.leases == [longer])

        #expect(book.handle(.renewalFailed(asked: [longer], at: at(35))) == [], "past the old deadline, not the new one")
        #expect(book.handle(.renewalFailed(asked: [longer], at: at(40))) == [.drop(longer, because: "lease expired")], "the renewed lease is dropped")
        #expect(book.leases.isEmpty)
    }

    @Test func aFailedRenewalDropsOnlyLeasesPastTheirDeadline() {
        let (a, b, c) = (lease("A", epoch: 1, until: 10), lease("B", epoch: 2, until: 20), lease("C", epoch: 3, until: 30))
        var book = makeBook(acquiring: [a, b, c])
        #expect(book.handle(.renewalFailed(asked: [a, b, c], at: at(5))) == [], "nobody's deadline has come")
        #expect(book.handle(.renewalFailed(asked: [a, b, c], at: at(20))) == [.drop(a, because: "lease expired"), .drop(b, because: "lease expired")])
        #expect(book.leases == [c], "C is kept: its deadline is still ahead")
        #expect(book.handle(.renewalFailed(asked: [a, b, c], at: at(25))) == [], "each is dropped once")
        #expect(book.handle(.renewalFailed(asked: [a, b, c], at: at(31))) == [.drop(c, because: "lease expired")])
    }

    /// One failed renewal must not cost the rooms whose leases are still valid: the next try comes soon
    /// (200 ms, doubling), not a third of a lease later, and the usual rhythm returns once one succeeds.
    @Test func aFailedRenewalIsTriedAgainSoonAndBacksOffToTheUsualRhythm() {
        let a = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [a])
        #expect(book.renewalDelay == .seconds(10), "a third of the 30 s lease")
        var delays: [Duration] = []
        for second in 1...8 {
            _ = book.handle(.renewalFailed(asked: [a], at: at(second)))
            delays.append(book.renewalDelay)
        }
        #expect(delays == [.milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1_600), .milliseconds(3_200), .milliseconds(6_400), .seconds(10), .seconds(10)])
        #expect(book.leases == [a], "still valid: kept through every failure")
        _ = book.handle(.renewed(asked: [a], held: [renewed(a, until: 40)], at: at(9)))
        #expect(book.renewalDelay == .seconds(10))
    }

    /// A room let go while the store was down keeps its lease in the store; the book keeps trying to
    /// release it, and names it when the store refuses this node the room because this node holds it.
    @Test func aReleaseThatFailedIsDueUntilItSucceeds() {
        let old = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [old])
        _ = book.handle(.removed(old))
        #expect(book.releasesDue.isEmpty)
        #expect(book.handle(.releaseFailed(old)) == [])
        #expect(book.releasesDue == [old])
        #expect(book.unreleasedLease(of: "A") == old)
        #expect(book.leases.isEmpty, "not renewed: the room left memory")
        let older = lease("A", epoch: 0, until: 20)
        _ = book.handle(.releaseFailed(older))
        #expect(book.releasesDue == [old], "only the newest lease of a room is worth releasing")
        _ = book.handle(.released(older))
        #expect(book.releasesDue == [old], "a late word about an older lease changes nothing")
        _ = book.handle(.released(old))
        #expect(book.releasesDue.isEmpty && book.unreleasedLease(of: "A") == nil)
    }

    @Test func aFailedRenewalOnlyConsidersTheLeasesItAsked() {
        let (a, b) = (lease("A", epoch: 1, until: 10), lease("B", epoch: 2, until: 10))
        var book = makeBook(acquiring: [a, b])
        #expect(book.handle(.renewalFailed(asked: [a], at: at(20))) == [.drop(a, because: "lease expired")])
        #expect(book.leases == [b])
    }

    // MARK: Handing over

    @Test func aWantedRoomIsHandedOverOnlyAfterAPeriodHeld() {
        let a = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [a])
        let wanted = renewed(a, until: 40, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [a], held: [wanted], at: at(10))) == [], "held 10 s of a 30 s period")
        #expect(book.lease(of: "A") == wanted)
        #expect(!book.isHandingOver("A"))

        let stillWanted = renewed(wanted, until: 50, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [wanted], held: [stillWanted], at: at(29))) == [])
        let atPeriod = renewed(stillWanted, until: 60, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [stillWanted], held: [atPeriod], at: at(30))) == [.handOver(atPeriod, to: "node-b")])
        #expect(book.isHandingOver("A"))
        #expect(book.lease(of: "A") == nil && book.leases.isEmpty, "it has left the book")
    }

    @Test func aRoomNobodyWantsIsNeverHandedOver() {
        let a = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [a])
        var current = a
        for round in 1...10 {
            let next = renewed(current, until: 30 + round * 10)
            #expect(book.handle(.renewed(asked: [current], held: [next], at: at(round * 10))) == [])
            current = next
        }
        #expect(book.leases == [current])
        #expect(!book.isHandingOver("A"))
    }

    @Test func onlyTheWantedRoomsAreHandedOver() {
        let (a, b, c) = (lease("A", epoch: 1, until: 30), lease("B", epoch: 2, until: 30), lease("C", epoch: 3, until: 30))
        var book = makeBook(acquiring: [a, b, c])
        let held = [renewed(a, until: 70), renewed(b, until: 70, wantedBy: "node-b"), renewed(c, until: 70, wantedBy: "node-c")]
        #expect(book.handle(.renewed(asked: [a, b, c], held: held, at: at(40))) == [.handOver(held[1], to: "node-b"), .handOver(held[2], to: "node-c")])
        #expect(book.leases == [held[0]])
        #expect(book.isHandingOver("B") && book.isHandingOver("C") && !book.isHandingOver("A"))
    }

    @Test func aHandedOverRoomStaysReservedUntilTheHandoverIsDone() {
        let a = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [a])
        let wanted = renewed(a, until: 70, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [a], held: [wanted], at: at(40))) == [.handOver(wanted, to: "node-b")])

        // Meanwhile, the book has nothing more to say about the room.
        #expect(book.handle(.renewed(asked: [wanted], held: [renewed(wanted, until: 80, wantedBy: "node-b")], at: at(50))) == [], "no second handover")
        #expect(book.handle(.renewed(asked: [wanted], held: [], at: at(51))) == [], "not dropped either: it left the book")
        #expect(book.handle(.renewalFailed(asked: [wanted], at: at(100))) == [])
        #expect(book.handle(.occupancy(["A": false], at: at(50))) == [] && book.handle(.occupancy(["A": false], at: at(500))) == [])
        #expect(book.isHandingOver("A"))

        #expect(book.handle(.handedOver(room: "A")) == [])
        #expect(!book.isHandingOver("A"))
        #expect(book.leases.isEmpty)
    }

    @Test func aLateRemovalOfAnEarlierLeaseKeepsTheNewerOne() {
        let first = lease("A", epoch: 1, until: 30)
        let second = lease("A", epoch: 2, until: 60)
        var book = makeBook(acquiring: [first])
        _ = book.handle(.acquired(second, at: at(20)))
        #expect(book.handle(.removed(first)) == [])
        #expect(book.leases == [second])
    }

    @Test func aRoomAcquiredAgainCountsItsPeriodFromTheNewLease() {
        let first = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [first])
        _ = book.handle(.removed(first))
        let second = lease("A", epoch: 4, until: 55)
        #expect(book.handle(.acquired(second, at: at(25))) == [])
        let wanted = renewed(second, until: 60, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [second], held: [wanted], at: at(40))) == [], "held 15 s under this lease")
        let later = renewed(wanted, until: 85, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [wanted], held: [later], at: at(55))) == [.handOver(later, to: "node-b")])
    }

    @Test func aRenewalCanDropSomeRoomsAndHandOverOthers() {
        let (a, b) = (lease("A", epoch: 1, until: 30), lease("B", epoch: 2, until: 30))
        var book = makeBook(acquiring: [a, b])
        let wanted = renewed(b, until: 70, wantedBy: "node-b")
        #expect(book.handle(.renewed(asked: [a, b], held: [wanted], at: at(40))) == [.drop(a, because: "lease not renewed"), .handOver(wanted, to: "node-b")])
        #expect(book.leases.isEmpty)
        #expect(book.isHandingOver("B") && !book.isHandingOver("A"))
    }

    // MARK: Idle rooms

    @Test func anIdleRoomIsReleasedAfterIdleRelease() {
        let (a, b) = (lease("A", epoch: 1, until: 30), lease("B", epoch: 2, until: 30))
        var book = makeBook(acquiring: [a, b])
        #expect(book.handle(.occupancy(["A": false, "B": true], at: at(10))) == [], "the first idle look starts the count")
        #expect(book.handle(.occupancy(["A": false, "B": true], at: at(69))) == [])
        #expect(book.handle(.occupancy(["A": false, "B": true], at: at(70))) == [.releaseIdle(a)])
        #expect(book.leases == [b], "the released room left the book")
        #expect(book.handle(.occupancy(["A": false, "B": true], at: at(200))) == [], "released once; B is connected")
    }

    @Test func aConnectionResetsTheIdleCount() {
        let a = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [a], idleRelease: .seconds(20))
        #expect(book.handle(.occupancy(["A": false], at: at(0))) == [])
        #expect(book.handle(.occupancy(["A": true], at: at(15))) == [])
        #expect(book.handle(.occupancy(["A": false], at: at(25))) == [], "idle again from 25 s")
        #expect(book.handle(.occupancy(["A": false], at: at(40))) == [], "20 s since the first idle look, 15 s since the last connection")
        #expect(book.handle(.occupancy(["A": false], at: at(45))) == [.releaseIdle(a)])
    }

    @Test func idleRoomsAreReleasedTogetherSortedByRoom() {
        let (c, a, b) = (lease("C", epoch: 1, until: 30), lease("A", epoch: 2, until: 30), lease("B", epoch: 3, until: 30))
        var book = makeBook(acquiring: [c, a, b], idleRelease: .seconds(5))
        #expect(book.handle(.occupancy(["C": false, "A": false, "B": false, "Z": false], at: at(0))) == [], "a room not in the book is ignored")
        #expect(book.handle(.occupancy(["C": false, "A": false, "B": false, "Z": false], at: at(5))) == [.releaseIdle(a), .releaseIdle(b), .releaseIdle(c)])
        #expect(book.leases.isEmpty)
    }

    @Test func aRoomAcquiredAgainStartsIdleCountingAfresh() {
        let first = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [first], idleRelease: .seconds(10))
        #expect(book.handle(.occupancy(["A": false], at: at(0))) == [])
        let second = lease("A", epoch: 2, until: 40)
        #expect(book.handle(.acquired(second, at: at(8))) == [])
        #expect(book.handle(.occupancy(["A": false], at: at(12))) == [], "the new lease's room has not been seen idle before")
        #expect(book.handle(.occupancy(["A": false], at: at(22))) == [.releaseIdle(second)])
    }

    // MARK: Stale epochs

    @Test func answersAboutAnEarlierEpochOfTheRoomAreIgnored() {
        let old = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [old])
        let current = lease("A", epoch: 7, until: 90)
        #expect(book.handle(.acquired(current, at: at(60))) == [])

        // A renewal asked about the old lease: missing, renewed, wanted or expired, it changes nothing now.
        #expect(book.handle(.renewed(asked: [old], held: [], at: at(61))) == [])
        #expect(book.handle(.renewed(asked: [old], held: [renewed(old, until: 200)], at: at(62))) == [])
        #expect(book.lease(of: "A") == current, "the current lease is not replaced by the old one")
        #expect(book.handle(.renewed(asked: [old], held: [renewed(old, until: 200, wantedBy: "node-b")], at: at(200))) == [])
        #expect(!book.isHandingOver("A"))
        #expect(book.handle(.renewalFailed(asked: [old], at: at(100))) == [], "the old lease's deadline has passed, but it is not the room's")
        #expect(book.leases == [current])

        // The current lease is still dropped on its own account.
        #expect(book.handle(.renewalFailed(asked: [current], at: at(100))) == [.drop(current, because: "lease expired")])
    }

    @Test func aRenewalOfTheCurrentEpochIsNotMistakenForTheOld() {
        let old = lease("A", epoch: 1, until: 30)
        var book = makeBook(acquiring: [old])
        let current = lease("A", epoch: 2, until: 60)
        _ = book.handle(.acquired(current, at: at(30)))
        // The store answers a round that asked both (the old one is gone, the new one renewed).
        let next = renewed(current, until: 80)
        #expect(book.handle(.renewed(asked: [old, current], held: [next], at: at(40))) == [])
        #expect(book.lease(of: "A") == next)
    }
}
