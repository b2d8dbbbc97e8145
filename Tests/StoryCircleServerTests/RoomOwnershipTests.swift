import Foundation
import Testing

@testable import StoryCircleCore
@testable import StoryCircleServer

/// Two nodes (two registries) sharing one store, as nodes share PostgreSQL: a room runs on one of them only,
/// under its lease, and a node whose lease is gone stops instead of writing. No clocks: leases are taken
/// over by releasing them, never by waiting for them to expire.
@Suite("Room ownership between nodes")
struct RoomOwnershipTests {
    typealias Node = ServerFixtures.Node

    static func node(
        _ name: String, store: any RoomLeases, clock: ManualClock = ManualClock(), leaseClock: ManualMonotonicClock = ManualMonotonicClock(),
        narrator: ScriptedNarrator = ScriptedNarrator(), configure: (inout RoomRegistry.Settings) -> Void = { _ in }
    ) -> Node {
        ServerFixtures.node(name, store: store, clock: clock, leaseClock: leaseClock, narrator: narrator, configure: configure)
    }

    /// Audio is per node: a room in its lobby is read ahead where it runs (where the proxy sends its
    /// children), not on the node that happened to take the API call that made it.
    @Test func aRoomInItsLobbyIsReadAheadOnTheNodeThatRunsIt() async throws {
        let store = MemoryRoomStore()
        let (onA, onB) = (ScriptedNarrator(), ScriptedNarrator())
        let a = Self.node("a", store: store, narrator: onA)
        let b = Self.node("b", store: store, narrator: onB)
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        b.events.hello(1, .join(room: created.code, nickname: "Ana"))
        _ = await b.transport.next("welcome", to: 1)
        #expect(onA.readAheads.isEmpty)
        #expect(onB.readAheads.map(\.room) == [created.code])
        #expect(onB.readAheads.first?.request.sentences == ServerFixtures.story.sentences)
    }

    @Test func twoNodesRacingForARoomLeaveExactlyOneOwnerAndTheOtherSaysTryAgain() async throws {
        let store = MemoryRoomStore()
        let a = Self.node("a", store: store)
        let b = Self.node("b", store: store)
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        #expect(await a.registry.directory.room(created.code) == nil, "a shared store's room runs where the proxy sends it, not where it was made")

        async let fromA = Self.outcome { try await a.registry.directory.findRoom(created.code) }
        async let fromB = Self.outcome { try await b.registry.directory.findRoom(created.code) }
        let outcomes = await [fromA, fromB]
        let owners = outcomes.compactMap { (try? $0.get()) ?? nil }
        #expect(owners.count == 1, "exactly one node runs the room")
        let refusals = outcomes.compactMap { outcome -> RoomLeaseError? in
            if case .failure(let error) = outcome { return error as? RoomLeaseError }
            return nil
        }
        #expect(refusals.count == 1)
        guard case .held(let room, _)? = refusals.first else { Issue.record("the loser must find the room held"); return }
        #expect(room == created.code)

        // A child sent to the node that lost is told to try again (1012), not welcomed.
        let (winner, loser) = owners.first?.lease?.node == "a" ? (a, b) : (b, a)
        loser.events.hello(1, .join(room: created.code, nickname: "Ana"))
        #expect(await loser.transport.closed(1) == CloseReason(status: 1012, reason: "try_again"))
        #expect(loser.transport.types(to: 1) == ["error"])
        winner.events.hello(2, .join(room: created.code, nickname: "Ana"))
        _ = await winner.transport.next("welcome", to: 2)
    }

    @Test func aStaleOwnersWriteIsRefusedAndItsRoomStopsWithTryAgain() async throws {
        let store = MemoryRoomStore()
        let a = Self.node("a", store: store)
        let b = Self.node("b", store: store)
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        a.events.hello(1, .join(room: created.code, nickname: "Ana"))
        _ = await a.transport.next("welcome", to: 1)
        let onA = try #require(await a.registry.directory.room(created.code))
        let staleLease = try #require(onA.lease)

        // Node a is paused past its lease (here: the lease ends behind its back), and b takes the room.
        try await store.release(staleLease)
        let onB = try #require(try await b.registry.directory.findRoom(created.code))
        #expect(try #require(onB.lease).epoch > staleLease.epoch)

        // a still believes it runs the room: Ben's join is written under the old lease, and refused.
        a.events.hello(2, .join(room: created.code, nickname: "Ben"))
        #expect(await a.transport.closed(2) == CloseReason(status: 1012, reason: "try_again"))
        #expect(await a.transport.closed(1) == CloseReason(status: 1012, reason: "try_again"))
        #expect(!a.transport.types(to: 2).contains("welcome"), "no welcome (and no token) for a join that was not stored")
        #expect(await a.registry.directory.room(created.code) == nil, "the stale owner forgot the room")
        #expect(try await store.archive(room: created.code)?.players.map(\.nickname) == ["Ana"])

        // Ana's page reconnects and reaches the room's owner now, b.
        b.events.hello(3, .rejoin(room: created.code, token: try #require(Self.token(a.transport, 1))))
        guard case .welcome(let welcome) = await b.transport.next("welcome", to: 3) else { Issue.record("expected a welcome"); return }
        #expect(welcome.player?.nickname == "Ana")
    }

    @Test func refusalsWhileARoomIsHeldElsewhereDoNotSpendTheAddresssHelloAllowance() async throws {
        let store = MemoryRoomStore()
        let a = Self.node("a", store: store)
        // Two hellos per address, refilled only as the (manual, stopped) clock moves: never, here.
        let b = Self.node("b", store: store) { $0.joinBurst = 2 }
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        _ = try #require(try await a.registry.directory.findRoom(created.code))
        // A class behind one address reconnecting again and again while the room moves.
        for connection in UInt64(1)...5 {
            b.events.hello(connection, .join(room: created.code, nickname: "Kid \(connection)"))
            #expect(await b.transport.closed(connection) == CloseReason(status: 1012, reason: "try_again"))
        }
    }

    @Test func aHelloForAnotherRoomThanTheURLsIsRefused() async throws {
        let store = MemoryRoomStore()
        let a = Self.node("a", store: store)
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        a.events.yield(.opened(connection: 1, peer: "10.0.0.1", query: ["room": "999999"]))
        a.events.send(1, .join(room: created.code, nickname: "Ana"))
        #expect(await a.transport.closed(1) == CloseReason(status: 1008, reason: "room_mismatch"))
        a.events.yield(.opened(connection: 2, peer: "10.0.0.1", query: ["room": created.code]))
        a.events.send(2, .join(room: created.code, nickname: "Ana"))
        _ = await a.transport.next("welcome", to: 2)
    }

    /// A node that came back: the proxy sends the room's children to it, and the node that took the room
    /// over meanwhile hands it back at its next renewal instead of keeping it while the class is connected.
    /// Node a's renewals run on a clock the test moves; the lease is long enough (60 s) that the store's
    /// real-time expiry never plays a part.
    @Test(.timeLimit(.minutes(1)))
    func aNodeRefusedARoomGetsItHandedOverAndAChildReconnectingThereKeepsItsAcknowledgedAnswer() async throws {
        let store = MemoryRoomStore()
        let clock = ManualClock()
        let leaseClock = ManualMonotonicClock()
        let a = Self.node("a", store: store, clock: clock, leaseClock: leaseClock) { $0.leaseSeconds = 60 }
        let b = Self.node("b", store: store, clock: clock) { $0.leaseSeconds = 60 }
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        a.events.hello(1, .join(room: created.code, nickname: "Ana"))
        _ = await a.transport.next("welcome", to: 1)
        let token = try #require(Self.token(a.transport, 1))
        let onA = try #require(await a.registry.directory.room(created.code))
        let leaseOnA = try #require(onA.lease)
        _ = try await onA.perform(.start)
        _ = try await onA.perform(.skip)
        guard case .question(let question) = await a.transport.next("question", to: 1) else { Issue.record("expected a question"); return }
        clock.advance(to: question.opensAt + 800)
        a.events.send(1, .answer(question: 0, option: 2))
        #expect(await a.transport.next("answer.ack", to: 1) == .answerAck(AnswerAck(question: 0, option: 2)))

        // The proxy now sends the room to b (say b came back). b is refused, and tells the store it wants it.
        b.events.hello(2, .rejoin(room: created.code, token: token))
        #expect(await b.transport.closed(2) == CloseReason(status: 1012, reason: "try_again"))

        // A renewal before a has held the room a whole lease period does not move it (a proxy flapping
        // between nodes moves a room at most once a period).
        await Self.renewal(on: leaseClock, after: .seconds(20))
        #expect(await a.registry.directory.room(created.code) != nil)
        #expect(a.transport.closeStatus(1) == nil)

        // a hands the room over at its first renewal after a period: Ana's page is told to reconnect.
        await Self.renewal(on: leaseClock, after: .seconds(40))
        #expect(await a.transport.closed(1) == CloseReason(status: 1012, reason: "try_again"))
        #expect(await a.registry.directory.room(created.code) == nil)

        // Through the proxy, to b, which takes the room from the store: Ana is welcomed with her answer.
        b.events.hello(3, .rejoin(room: created.code, token: token))
        guard case .welcome(let welcome) = await b.transport.next("welcome", to: 3) else { Issue.record("expected a welcome"); return }
        #expect(welcome.player?.nickname == "Ana")
        // Ana was the only player, so her answer may have closed the question: then it shows in the reveal.
        let shown = welcome.room.yourAnswer ?? welcome.room.reveal?.you?.option
        #expect(shown == 2, "the acknowledged answer came along")
        let stored = try #require(try await store.archive(room: created.code)?.answers.first)
        if let you = welcome.room.reveal?.you { #expect(you.standing.score == stored.points, "and her score with it") }
        let onB = try #require(await b.registry.directory.room(created.code))
        let leaseOnB = try #require(onB.lease)
        #expect(leaseOnB.epoch > leaseOnA.epoch, "the new holder has a new epoch")
        #expect(try await store.archive(room: created.code)?.answers.map(\.option) == [2])
        #expect(try await store.renew(leaseOnB, for: .seconds(60)).wantedBy == nil, "a, which gets no traffic for the room, does not want it back")
        #expect(try await store.renew([leaseOnA], for: .seconds(60)).isEmpty, "a's lease is over: its writes would be refused")
    }

    /// Waits until the node's renewal loop is asleep, then moves its clock by `duration` (one wake-up).
    static func renewal(on clock: ManualMonotonicClock, after duration: Duration) async {
        await clock.untilSomeoneSleeps()
        clock.advance(by: duration)
        // The renewal has run once the loop sleeps again.
        await clock.untilSomeoneSleeps()
    }

    /// The database down for a while (PostgreSQL restarting): a renewal that fails is tried again soon, so
    /// no room whose lease is still valid is bounced; and a room let go meanwhile, whose lease could not be
    /// released, is this node's to take again once the database is back, not refused as someone else's.
    @Test(.timeLimit(.minutes(1)))
    func aDatabaseOutageBouncesNoRoomAndTheNodeTakesBackARoomItLetGo() async throws {
        let store = UnreachableLeaseStore()
        let clock = ManualClock()
        let leaseClock = ManualMonotonicClock()
        let a = Self.node("a", store: store, clock: clock, leaseClock: leaseClock) { $0.leaseSeconds = 60 }
        let kept = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        let letGo = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        a.events.hello(1, .join(room: kept.code, nickname: "Ana"))
        _ = await a.transport.next("welcome", to: 1)
        let finished = try #require(try await a.registry.directory.findRoom(letGo.code))
        _ = try await finished.perform(.end)

        store.unreachable = true
        await Self.renewal(on: leaseClock, after: .seconds(20))
        #expect(store.renewals == 0, "the renewal failed")
        // The finished room is let go during the outage: its lease cannot be released.
        clock.advance(by: 1)
        #expect(await a.registry.directory.sweep(finishedBefore: clock.now(), createdBefore: ServerTime(milliseconds: 0)).evicted == 1)
        await store.refusal(of: "release")

        store.unreachable = false
        // The retry comes a fifth of a second after the failure, not a third of a lease (20 s) later.
        await Self.renewal(on: leaseClock, after: .milliseconds(200))
        #expect(store.renewals == 1, "renewed as soon as the database answers")
        #expect(await a.registry.directory.room(kept.code) != nil)
        #expect(a.transport.closeStatus(1) == nil, "Ana was never bounced")

        // The projector opens the room that was let go: this node takes it back at once.
        a.events.hello(2, .watch(room: letGo.code, token: letGo.dashboardToken))
        guard case .welcome(let welcome) = await a.transport.next("welcome", to: 2) else { Issue.record("expected a welcome"); return }
        #expect(welcome.role == .dashboard)
        #expect(a.transport.closeStatus(2) == nil)
    }

    /// A node alone on its store (SQLite on a teacher's laptop) has nobody to hand a room to: it takes no
    /// lease, so a process starved for seconds or a laptop waking from sleep never bounces its children as
    /// "moved" with nowhere to move to.
    @Test func aNodeAloneOnItsStoreTakesNoLeaseThatCouldLapse() async throws {
        let store = MemoryRoomStore()
        let transport = RecordingTransport()
        let (registry, events) = ServerFixtures.registry(transport: transport, store: store)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        guard case .welcome = await transport.next("welcome", to: 1) else { Issue.record("expected a welcome"); return }

        let lease = try await store.acquire(room: created.code, node: "elsewhere", for: .seconds(10))
        #expect(lease.node == "elsewhere", "the room was not held under a lease")
        #expect(await registry.directory.room(created.code) != nil)
        #expect(transport.closeStatus(1) == nil)
    }

    static func outcome(_ body: () async throws -> Room?) async -> Result<Room?, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    static func token(_ transport: RecordingTransport, _ connection: UInt64) -> String? {
        for case .welcome(let welcome) in transport.messages(to: connection) { if let token = welcome.token { return token } }
        return nil
    }
}
