import Foundation
import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer
import TransportCore

/// The limits on hellos when a whole school shares one address (docs/operations.md, "Guessing room codes"):
/// a token the live room accepts goes straight in; a code alone meets the address's limits, whose spent
/// budget of wrong codes is a wait, never a refusal. Manual clock: the waits are moved through, not slept.
@Suite("Hello limits")
struct HelloLimitTests {
    static let school = "203.0.113.7"

    /// Three wrong codes allowed, one back every 10 s, at most 30 s of waiting.
    static var tight: RoomRegistry.Settings {
        var settings = RoomRegistry.Settings()
        settings.failedJoinBurst = 3
        settings.failedJoinsPerMinute = 6
        settings.failedJoinMaxDelaySeconds = 30
        return settings
    }

    /// Returns once the router has taken every event yielded before: a message that is not a hello is
    /// refused in the router's own turn, and events are taken in order.
    static func routed(_ events: AsyncStream<TransportEvent>.Continuation, _ transport: RecordingTransport, probe: UInt64) async {
        events.yield(.opened(connection: probe, peer: "192.0.2.1"))
        events.send(probe, .answer(question: 0, option: 1))
        _ = await transport.next("error", to: probe)
    }

    static func error(_ message: ServerMessage) -> RoomError? {
        guard case .error(let error) = message else { return nil }
        return error
    }

    @Test func aGuesserBehindTheSchoolsAddressNeverKeepsOutTheTeacherTheProjectorOrAChildComingBack() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let metrics = ServerMetrics()
        let (registry, events) = ServerFixtures.registry(transport: transport, clock: clock, settings: Self.tight, metrics: metrics)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"), peer: Self.school)
        guard case .welcome(let welcome) = await transport.next("welcome", to: 1) else { Issue.record("expected a welcome"); return }
        let token = try #require(welcome.token)
        events.yield(.closed(connection: 1))

        // Fifteen wrong codes from the same address: the first three are answered at once, the rest wait.
        for connection in UInt64(10)..<13 {
            events.hello(connection, .join(room: "100000", nickname: "Guess"), peer: Self.school)
            #expect(Self.error(await transport.next("error", to: connection))?.code == .roomNotFound)
        }
        for connection in UInt64(13)..<25 {
            events.hello(connection, .join(room: "100000", nickname: "Guess"), peer: Self.school)
        }
        await Self.routed(events, transport, probe: 900)
        #expect(metrics.joinsHeld == 12)

        // Meanwhile, from that address: Ana back, the teacher, the projector — at once, without the clock moving.
        events.hello(30, .rejoin(room: created.code, token: token), peer: Self.school)
        _ = await transport.next("welcome", to: 30)
        events.hello(31, .control(room: created.code, token: created.teacherToken), peer: Self.school)
        _ = await transport.next("welcome", to: 31)
        events.hello(32, .watch(room: created.code, token: created.dashboardToken), peer: Self.school)
        _ = await transport.next("welcome", to: 32)
        for connection in UInt64(13)..<25 { #expect(transport.types(to: connection).isEmpty) }

        // A token that proves nothing is a guess like a code.
        events.hello(33, .control(room: created.code, token: "not-the-teacher"), peer: Self.school)

        // The held guesses are answered, wrong as before, once their wait is over; none was refused.
        clock.advance(by: 30_000)
        for connection in UInt64(13)..<25 {
            #expect(Self.error(await transport.next("error", to: connection))?.code == .roomNotFound)
        }
        #expect(Self.error(await transport.next("error", to: 33))?.code == .badToken)
        #expect(metrics.joinsHeld >= 12)
    }

    @Test func aNewChildWithTheRightCodeGetsInAfterTheWaitThatGrowsWithEachWrongCode() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, clock: clock, settings: Self.tight)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        for connection in UInt64(1)...3 {
            events.hello(connection, .join(room: "100000", nickname: "Guess"), peer: Self.school)
            #expect(Self.error(await transport.next("error", to: connection))?.code == .roomNotFound)
        }
        // The budget is spent: the next guess waits one refill (10 s), the one beside it two.
        events.hello(4, .join(room: "100001", nickname: "Guess"), peer: Self.school)
        events.hello(5, .join(room: "100002", nickname: "Guess"), peer: Self.school)
        await Self.routed(events, transport, probe: 901)
        clock.advance(by: 10_000)
        #expect(Self.error(await transport.next("error", to: 4))?.code == .roomNotFound)
        await Self.routed(events, transport, probe: 902)
        #expect(transport.types(to: 5).isEmpty)
        clock.advance(by: 10_000)
        #expect(Self.error(await transport.next("error", to: 5))?.code == .roomNotFound)

        // Two refills later the budget is still empty: the right code waits its 10 s too, and gets in.
        events.hello(6, .join(room: created.code, nickname: "Bea"), peer: Self.school)
        await Self.routed(events, transport, probe: 903)
        clock.advance(by: 9_000)
        await Self.routed(events, transport, probe: 904)
        #expect(transport.types(to: 6).isEmpty)
        clock.advance(by: 1_000)
        _ = await transport.next("welcome", to: 6)
        // Another address was never slowed.
        events.hello(7, .join(room: created.code, nickname: "Cy"), peer: "198.51.100.1")
        _ = await transport.next("welcome", to: 7)
    }

    @Test func aTeachersTokenProvesItselfForARoomNotYetInMemory() async throws {
        // Two nodes of a cluster: the room is made through a, and b has it only in the store.
        let store = MemoryRoomStore()
        let a = ServerFixtures.node("a", store: store)
        let b = ServerFixtures.node("b", store: store) { settings in settings = Self.tight.with(nodeId: "b") }
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        #expect(await b.registry.directory.room(created.code) == nil)
        for connection in UInt64(1)...3 {
            b.events.hello(connection, .join(room: "100000", nickname: "Guess"), peer: Self.school)
            #expect(Self.error(await b.transport.next("error", to: connection))?.code == .roomNotFound)
        }
        // The address's budget is spent on b, whose clock never moves: only a hello that proves itself gets in.
        b.events.hello(4, .control(room: created.code, token: created.teacherToken), peer: Self.school)
        guard case .welcome(let welcome) = await b.transport.next("welcome", to: 4) else { Issue.record("expected a welcome"); return }
        #expect(welcome.role == .teacher)
        b.events.hello(5, .watch(room: created.code, token: created.dashboardToken), peer: Self.school)
        _ = await b.transport.next("welcome", to: 5)
    }

    @Test func wrongTokensInALiveRoomSpendTheBudgetLikeWrongCodes() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, clock: clock, settings: Self.tight)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        for connection in UInt64(1)...3 {
            events.hello(connection, .rejoin(room: created.code, token: "guess-\(connection)"), peer: Self.school)
            #expect(Self.error(await transport.next("error", to: connection))?.code == .badToken)
        }
        events.hello(4, .join(room: created.code, nickname: "Guess"), peer: Self.school)
        await Self.routed(events, transport, probe: 905)
        #expect(transport.types(to: 4).isEmpty)
        clock.advance(by: 10_000)
        _ = await transport.next("welcome", to: 4)
    }

    @Test func tooManyHellosAreRefusedWithTheSecondsToWait() async throws {
        let transport = RecordingTransport()
        var settings = RoomRegistry.Settings()
        settings.joinBurst = 1
        settings.joinsPerSecond = 0.25
        let (registry, events) = ServerFixtures.registry(transport: transport, settings: settings)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"), peer: Self.school)
        _ = await transport.next("welcome", to: 1)
        events.hello(2, .join(room: created.code, nickname: "Bea"), peer: Self.school)
        let refusal = try #require(Self.error(await transport.next("error", to: 2)))
        #expect(refusal.code == .rateLimited)
        #expect(refusal.params == ["retryAfter": "4"])
        // The teacher is not a hello to count.
        events.hello(3, .control(room: created.code, token: created.teacherToken), peer: Self.school)
        _ = await transport.next("welcome", to: 3)
    }

    @Test func roomCodesHaveTheDigitsTheServerIsSetFor() async throws {
        var settings = RoomRegistry.Settings()
        settings.roomCodeDigits = 9
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), settings: settings)
        for _ in 0..<20 {
            let code = try await registry.directory.createRoom(story: ServerFixtures.story).code
            #expect(code.count == 9 && code.allSatisfy(\.isNumber) && code.first != "0", "\(code)")
        }
        #expect(Tokens.roomCode().count == 6)
    }

    @Test func aBudgetSpentIntoDebtIsAWaitThatStopsGrowingAtItsLongest() {
        let limiter = AddressRateLimiter(burst: 2, perSecond: 0.1, maxWaitSeconds: 30)
        let start = ServerTime(milliseconds: 0)
        #expect(limiter.wait("a", at: start) == 0)
        limiter.debit("a", at: start)
        limiter.debit("a", at: start)
        #expect(limiter.wait("a", at: start) == 10_000)
        limiter.debit("a", at: start)
        #expect(limiter.wait("a", at: start) == 20_000)
        for _ in 0..<10 { limiter.debit("a", at: start) }
        #expect(limiter.wait("a", at: start) == 30_000)
        #expect(limiter.wait("a", at: start + 25_000) == 5_000)
        #expect(limiter.wait("b", at: start) == 0)
        #expect(limiter.retryAfterSeconds("a", at: start + 29_500) == 1)
        // A refill slower than the longest wait: an empty bucket waits that long, not the refill's time.
        let slow = AddressRateLimiter(burst: 1, perSecond: 1.0 / 60, maxWaitSeconds: 1)
        slow.debit("a", at: start)
        slow.debit("a", at: start)
        #expect(slow.wait("a", at: start) == 1_000)
        // Without a longest wait, the refill's time.
        let plain = AddressRateLimiter(burst: 1, perSecond: 0.25)
        #expect(plain.allow("a", at: start) && !plain.allow("a", at: start))
        #expect(plain.retryAfterSeconds("a", at: start) == 4)
    }
}

extension RoomRegistry.Settings {
    func with(nodeId: String) -> Self {
        var settings = self
        settings.nodeId = nodeId
        settings.leaseSeconds = 300
        return settings
    }
}
