import Foundation
import Locking
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// Room ownership: never two live owners, and a node that lost a room cannot write to it.
///
/// Expiry without waiting: a lease granted for zero seconds has expired by the time anything else happens
/// (it expires at the store's "now", and is held only while its expiry is later than "now"), which is the
/// state of a lease whose holder was paused past its expiry.
@Suite("Room leases, every backend")
struct RoomLeaseSuite {
    static let long = Duration.seconds(60)

    @Test(arguments: Backend.all)
    func twoNodesRacingForOneRoomExactlyOneWins(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let nodes: [any RoomLeases] = [fixture.store, try fixture.anotherNode()]
        let rooms = (0..<20).map { String(300_000 + $0) }
        for room in rooms { try await fixture.store.createRoom(Sample.header(room)) }

        let outcomes = Locked<[String: [Result<RoomLease, any Error>]]>([:])
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<(rooms.count * 2) {
                group.addTask {
                    let room = rooms[i / 2]
                    let outcome: Result<RoomLease, any Error>
                    do { outcome = .success(try await nodes[i % 2].acquire(room: room, node: "node-\(i % 2)", for: Self.long)) } catch { outcome = .failure(error) }
                    outcomes.withLock { $0[room, default: []].append(outcome) }
                }
            }
        }
        for room in rooms {
            let results = outcomes.withLock { $0[room] ?? [] }
            let winners = results.compactMap { try? $0.get() }
            try #require(winners.count == 1, "room \(room): \(results)")
            let loser = try #require(results.first { (try? $0.get()) == nil })
            #expect(throws: RoomLeaseError.held(room: room, by: winners[0].node)) { try loser.get() }
        }
    }

    @Test(arguments: Backend.all)
    func aLiveLeaseIsHeldAgainstEveryoneAndItsOwnerWrites(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let a = fixture.store
        let b = try fixture.anotherNode()
        try await a.createRoom(Sample.header("123456"))
        let asked = ContinuousClock.now
        let lease = try await a.acquire(room: "123456", node: "a", for: Self.long)
        let answered = ContinuousClock.now
        #expect(lease.room == "123456" && lease.node == "a")
        // The whole duration, counted from a moment during the call (a busy machine may take long to answer).
        #expect(lease.deadline >= asked + Self.long && lease.deadline <= answered + Self.long)

        await #expect(throws: RoomLeaseError.held(room: "123456", by: "a")) { try await b.acquire(room: "123456", node: "b", for: Self.long) }
        await #expect(throws: RoomLeaseError.held(room: "123456", by: "a"), "acquire is not renew, even for the holder") {
            try await a.acquire(room: "123456", node: "a", for: Self.long)
        }
        let forged = RoomLease(room: "123456", node: "b", epoch: lease.epoch, expiresAt: lease.expiresAt, deadline: lease.deadline)
        #expect(await appendOutcome(b, Sample.answer("p9"), under: forged) as? RoomLeaseError == .lost(room: "123456", epoch: lease.epoch), "the epoch alone is not the lease")

        for record in Sample.records {
            let outcome = await appendOutcome(a, record, under: lease)
            #expect(outcome == nil, "\(record): \(String(describing: outcome))")
        }
        #expect(try await a.archive(room: "123456") == Sample.expected("123456"))

        let renewed = try await a.renew(lease, for: Self.long)
        #expect(renewed.epoch == lease.epoch && renewed.deadline >= lease.deadline)
        #expect(await appendOutcome(a, .phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000))), under: renewed) == nil)
    }

    @Test(arguments: Backend.all)
    func aStaleOwnersWriteIsRefusedAfterATakeover(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let a = fixture.store
        let b = try fixture.anotherNode()
        try await a.createRoom(Sample.header("123456"))
        let old = try await a.acquire(room: "123456", node: "a", for: .zero)
        let new = try await b.acquire(room: "123456", node: "b", for: Self.long)
        #expect(new.epoch > old.epoch, "a takeover bumps the epoch")

        #expect(await appendOutcome(a, Sample.answer("p1", option: 0), under: old) as? RoomLeaseError == .lost(room: "123456", epoch: old.epoch))
        #expect(await appendOutcome(b, Sample.answer("p1", option: 1), under: new) == nil)
        #expect(try await a.renew([old], for: Self.long).isEmpty, "a lost lease cannot be renewed")
        try await a.release(old)
        #expect(await appendOutcome(b, Sample.answer("p2"), under: new) == nil, "releasing a lost lease does not touch the new owner's")
        #expect(try await b.archive(room: "123456")?.answers.map(\.option) == [1, 1])
    }

    @Test(arguments: Backend.all)
    func aPausedOwnersWriteAfterItsLeaseExpiredFailsEvenWithoutATakeover(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("123456"))
        let lease = try await store.acquire(room: "123456", node: "a", for: .zero)

        for record in Sample.records {
            #expect(await appendOutcome(store, record, under: lease) as? RoomLeaseError == .lost(room: "123456", epoch: lease.epoch))
        }
        #expect(try await store.archive(room: "123456") == RoomArchive(header: Sample.header("123456")), "nothing was stored")
        await #expect(throws: RoomLeaseError.lost(room: "123456", epoch: lease.epoch), "an expired lease is not revived") {
            try await store.renew(lease, for: Self.long)
        }
        let again = try await store.acquire(room: "123456", node: "a", for: Self.long)
        #expect(again.epoch > lease.epoch, "taking the room again is a new epoch")
        #expect(await appendOutcome(store, Sample.answer("p1"), under: lease) as? RoomLeaseError == .lost(room: "123456", epoch: lease.epoch))
        #expect(await appendOutcome(store, Sample.answer("p1"), under: again) == nil)
    }

    @Test(arguments: Backend.all)
    func releasingHandsTheRoomOnAtOnceAndEpochsKeepGrowing(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let a = fixture.store
        let b = try fixture.anotherNode()
        try await a.createRoom(Sample.header("123456"))
        let first = try await a.acquire(room: "123456", node: "a", for: Self.long)
        try await a.release(first)
        let second = try await b.acquire(room: "123456", node: "b", for: .zero)
        let third = try await a.acquire(room: "123456", node: "a", for: Self.long)
        #expect(first.epoch < second.epoch && second.epoch < third.epoch)
        #expect(await appendOutcome(a, Sample.answer("p1"), under: first) as? RoomLeaseError == .lost(room: "123456", epoch: first.epoch))
        #expect(await appendOutcome(a, Sample.answer("p1"), under: third) == nil)
    }

    @Test(arguments: Backend.all)
    func aNodeRefusedAHeldRoomIsNewsToTheHoldersRenewalAndTakesTheRoomOnceItIsReleased(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let a = fixture.store
        let b = try fixture.anotherNode()
        try await a.createRoom(Sample.header("123456"))
        let lease = try await a.acquire(room: "123456", node: "a", for: Self.long)
        #expect(try await a.renew(lease, for: Self.long).wantedBy == nil, "nobody has asked for the room")

        await #expect(throws: RoomLeaseError.held(room: "123456", by: "a")) { try await b.acquire(room: "123456", node: "b", for: Self.long) }
        // The holder asking for its own room (a hello racing its handover) is no wish, and does not hide b's.
        await #expect(throws: RoomLeaseError.held(room: "123456", by: "a")) { try await a.acquire(room: "123456", node: "a", for: Self.long) }
        let wanted = try await a.renew(lease, for: Self.long)
        #expect(wanted.wantedBy == "b")
        #expect(try await a.renew(wanted, for: Self.long).wantedBy == "b", "the wish stays news until the room moves or it goes stale")

        try await a.release(wanted)
        let taken = try await b.acquire(room: "123456", node: "b", for: Self.long)
        #expect(taken.epoch > lease.epoch, "a handover is a new holder: a new epoch")
        #expect(try await b.renew(taken, for: Self.long).wantedBy == nil, "the new holder starts with no wish")
        #expect(await appendOutcome(a, Sample.answer("p1"), under: wanted) as? RoomLeaseError == .lost(room: "123456", epoch: lease.epoch), "the previous holder is fenced off")
        #expect(await appendOutcome(b, Sample.answer("p1"), under: taken) == nil)
    }

    @Test(arguments: Backend.all)
    func aWishOlderThanTwoLeasePeriodsIsNotNews(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let a = fixture.store
        let b = try fixture.anotherNode()
        try await a.createRoom(Sample.header("123456"))
        let lease = try await a.acquire(room: "123456", node: "a", for: Self.long)
        await #expect(throws: RoomLeaseError.held(room: "123456", by: "a")) { try await b.acquire(room: "123456", node: "b", for: Self.long) }
        // A renewal for no time measures staleness in periods of no time: any wish made before it is stale.
        #expect(try await a.renew(lease, for: .zero).wantedBy == nil)
    }

    @Test(arguments: Backend.all)
    func renewingManyLeasesKeepsOnlyTheLiveOnes(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        for room in ["100001", "100002", "100003"] { try await store.createRoom(Sample.header(room)) }
        let live = try await store.acquire(room: "100001", node: "a", for: Self.long)
        let expired = try await store.acquire(room: "100002", node: "a", for: .zero)
        let released = try await store.acquire(room: "100003", node: "a", for: Self.long)
        try await store.release(released)

        let renewed = try await store.renew([live, expired, released], for: .seconds(120))
        #expect(renewed.map(\.room) == ["100001"])
        #expect(renewed.first?.epoch == live.epoch)
        #expect(renewed.first.map { $0.expiresAt > live.expiresAt } == true)
        #expect(try await store.renew([], for: Self.long).isEmpty)
    }

    @Test(arguments: Backend.all)
    func aLostLeaseInOneRoomDoesNotTakeOtherRoomsWritesDown(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("100001"))
        try await store.createRoom(Sample.header("100002"))
        let held = try await store.acquire(room: "100001", node: "a", for: Self.long)
        let lost = try await store.acquire(room: "100002", node: "a", for: .zero)

        let count = 200
        let outcomes = Locked<[String: [Bool]]>([:])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let total = Locked(0)
            for i in 0..<count {
                let lease = i % 2 == 0 ? held : lost
                store.append(Sample.answer("p\(i)"), under: lease) { error in
                    outcomes.withLock { $0[lease.room, default: []].append(error == nil) }
                    if total.withLock({ $0 += 1; return $0 }) == count { done.resume() }
                }
            }
        }
        #expect(outcomes.withLock { $0["100001"] } == Array(repeating: true, count: count / 2))
        #expect(outcomes.withLock { $0["100002"] } == Array(repeating: false, count: count / 2))
        #expect(try await store.archive(room: "100001")?.answers.count == count / 2)
        #expect(try await store.archive(room: "100002")?.answers.isEmpty == true)
    }

    @Test(arguments: Backend.all)
    func aRoomThatDoesNotExistCannotBeHeld(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        await #expect(throws: RoomLeaseError.unknownRoom("999999")) { try await fixture.store.acquire(room: "999999", node: "a", for: Self.long) }
    }
}
