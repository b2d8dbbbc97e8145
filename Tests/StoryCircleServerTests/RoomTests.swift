import Foundation
import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer
import TransportCore

/// The `Room` actor and `RoomRegistry` with an in-memory transport and a manual clock: no sockets, no sleeps.
@Suite("Rooms")
struct RoomTests {
    /// A registry over `transport`, a room on the fixtures' story and Ana (connection 1) welcomed in it.
    static func roomWithAna(
        _ transport: RecordingTransport, clock: ManualClock = ManualClock(), narrator: ScriptedNarrator = ScriptedNarrator()
    ) async throws -> (events: AsyncStream<TransportEvent>.Continuation, created: CreatedRoom, room: Room) {
        let (registry, events) = ServerFixtures.registry(transport: transport, clock: clock, narrator: narrator)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        _ = await transport.next("welcome", to: 1)
        return (events, created, try #require(await registry.directory.room(created.code)))
    }

    /// A room let go before its `run` got its turn (a room dropped as soon as it was made) starts nothing: no
    /// message and no close from its first directives.
    @Test func aRoomShutDownBeforeItRanStartsNothing() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let store = MemoryRoomStore()
        var services = RoomServices(
            transport: transport, storage: store.offers, clock: clock, narrator: ScriptedNarrator(), lookalikes: LookalikeTable(), metrics: ServerMetrics(),
            logger: StoryCircleLog(label: "test", minimumLevel: .error, sink: { _ in })
        )
        services.storageRetryMs = 1_000
        let state = RoomState(code: "123456", story: ServerFixtures.story, credentials: RoomCredentials(teacherToken: "t", dashboardToken: "d"), lookalikes: LookalikeTable())
        let room = Room(state: state, createdAt: clock.now(), services: services)
        await room.shutDown()
        await room.run(initial: [
            .send(.pong(Pong(id: 1, clientTime: nil, serverTime: clock.now())), to: [ConnectionID(1)]),
            .close(ConnectionID(1), CloseReason(status: 1000, reason: "room_ended")),
        ])
        #expect(transport.messages(to: 1).isEmpty)
        #expect(transport.closeStatus(1) == nil)
    }

    @Test func narrationEventsArriveInOrderWithServerTimestamps() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let (events, _, room) = try await Self.roomWithAna(transport, clock: clock)
        let start = clock.now()

        _ = try await room.perform(.start)
        guard case .narrationPlan(let plan) = await transport.next("narration.plan", to: 1) else { Issue.record("expected .narrationPlan"); return }
        #expect(plan.startAt == start + 2_000)
        #expect(plan.sentences.map(\.durationMs) == [1_000, 2_000, 3_000])
        #expect(await transport.next("progress", to: 1) == .progress(SentenceProgress(sentence: 0, at: plan.startAt)))

        clock.advance(to: plan.startAt + 1_300)
        #expect(await transport.next("progress", to: 1) == .progress(SentenceProgress(sentence: 1, at: plan.startAt + 1_300)))
        clock.advance(to: plan.startAt + 1_300 + 2_300)
        #expect(await transport.next("progress", to: 1) == .progress(SentenceProgress(sentence: 2, at: plan.startAt + 3_600)))
        let end = plan.startAt + 3_600 + 3_300
        clock.advance(to: end)
        #expect(await transport.next("narration.complete", to: 1) == .narrationComplete(Instant(at: end)))
        #expect(await transport.next("quiz.unlock", to: 1) == .quizUnlock(QuizUnlock(at: end + 1_500, questionCount: 2)))
        guard case .question(let question) = await transport.next("question", to: 1) else { Issue.record("expected .question"); return }
        #expect(question.opensAt == end + 1_500)
        #expect(question.deadline == end + 1_500 + 20_000)
        #expect(transport.types(to: 1).filter { $0 != "preparing" } == [
            "welcome", "narration.plan", "progress", "progress", "progress", "narration.complete", "quiz.unlock", "question",
        ])
    }

    @Test func anUnknownVoiceFailsAndRetryWithAValidVoiceRecoversKeepingChildren() async throws {
        let transport = RecordingTransport()
        let narrator = ScriptedNarrator(missingVoices: ["xx"])
        let (registry, events) = ServerFixtures.registry(transport: transport, narrator: narrator)
        var story = ServerFixtures.story
        story.narration.voice = "xx"
        let created = try await registry.directory.createRoom(story: story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        events.hello(2, .join(room: created.code, nickname: "Ben"))
        _ = await transport.next("welcome", to: 1)
        _ = await transport.next("welcome", to: 2)
        let room = try #require(await registry.directory.room(created.code))

        _ = try await room.perform(.start)
        // A child reads a kind sentence, never the voice's name (the teacher gets that: the core's tests).
        #expect(await transport.next("narration.error", to: 2) == .narrationError(NarrationFailure(message: "Pip could not get the story ready. Your teacher is fixing it: stay here!")))
        #expect(await room.report().phase == .error)

        _ = try await room.perform(.settings(RoomSettingsPatch(voice: "en")))
        _ = try await room.perform(.retry)
        _ = await transport.next("narration.plan", to: 2)
        let report = await room.report()
        #expect(report.phase == .narrating)
        #expect(report.players == 2)
        #expect(report.connectedPlayers == 2)
        #expect(narrator.received.map(\.settings.voice) == ["xx", "en"])
    }

    @Test func aVoiceChosenInTheLobbyIsHandedToTheNarratorToReadAheadForThatRoom() async throws {
        let transport = RecordingTransport()
        let narrator = ScriptedNarrator()
        let (events, created, room) = try await Self.roomWithAna(transport, narrator: narrator)

        _ = try await room.perform(.settings(RoomSettingsPatch(voice: "piper:en_US-joe-medium")))
        // From a teacher's page too: the WebSocket command takes the same way.
        events.hello(2, .control(room: created.code, token: created.teacherToken))
        _ = await transport.next("welcome", to: 2)
        events.send(2, .command(.settings(RoomSettingsPatch(voice: "en-gb"))))
        while case .room(let status) = await transport.next("room", to: 2), status.settings.voice != "en-gb" {}
        // Read ahead as it was created, with its story's voice, then with each voice chosen.
        #expect(narrator.readAheads.map(\.room) == [created.code, created.code, created.code])
        #expect(narrator.readAheads.map(\.request.settings.voice) == [ServerFixtures.story.narration.voice, "piper:en_US-joe-medium", "en-gb"])
        #expect(narrator.readAheads.allSatisfy { $0.request.sentences == ServerFixtures.story.sentences })
        #expect(narrator.received.isEmpty, "nothing was prepared: the room is still in its lobby")
        #expect(await room.report().phase == .lobby)
        #expect(narrator.stoppedReadingAhead.isEmpty)
        // A finished room wants nothing read ahead any more.
        _ = try await room.perform(.end)
        #expect(narrator.stoppedReadingAhead == [created.code])
    }

    @Test func anAnswerIsAcknowledgedOnlyOnceItIsDurable() async throws {
        let transport = RecordingTransport()
        let store = GatedStore()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        events.hello(2, .join(room: created.code, nickname: "Ben"))
        // Each hello finds its room in a task of its own, so Ben's welcome says nothing of Ana's: a child
        // welcomed after the skip gets the question inside her welcome, not as a message.
        _ = await transport.next("welcome", to: 1)
        _ = await transport.next("welcome", to: 2)
        let room = try #require(await registry.directory.room(created.code))
        _ = try await room.perform(.start)
        _ = try await room.perform(.skip)
        guard case .question(let question) = await transport.next("question", to: 1) else { Issue.record("expected .question"); return }
        clock.advance(to: question.opensAt + 800)

        store.hold()
        events.send(1, .answer(question: 0, option: 2))
        await store.waitForHeld(1)
        #expect(!transport.types(to: 1).contains("answer.ack"), "not durable yet, so not acknowledged")
        // Replies that carry no room state are not held back.
        events.send(1, .ping(id: 7, clientTime: 1.5, roundTripMs: 40))
        guard case .pong(let pong) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
        #expect(pong == Pong(id: 7, clientTime: 1.5, serverTime: clock.now()))
        #expect(!transport.types(to: 1).contains("answer.ack"))

        store.releaseAll()
        #expect(await transport.next("answer.ack", to: 1) == .answerAck(AnswerAck(question: 0, option: 2)))
        // Replies to one client go ahead of news for many in the transport's queue of connections to write.
        #expect(transport.priorities(of: "answer.ack") == [.reply] && transport.priorities(of: "pong") == [.reply])
        #expect(transport.priorities(of: "welcome") == [.reply] && transport.priorities(of: "question") == [.normal])
    }

    @Test func aRoomRestoredFromItsStoreLetsChildrenBackWithTheirPoints() async throws {
        let transport = RecordingTransport()
        let store = MemoryRoomStore()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        guard case .welcome(let welcome) = await transport.next("welcome", to: 1), let token = welcome.token else { Issue.record("expected .welcome"); return }
        let room = try #require(await registry.directory.room(created.code))
        _ = try await room.perform(.start)
        _ = try await room.perform(.skip)
        guard case .question(let question) = await transport.next("question", to: 1) else { Issue.record("expected .question"); return }
        clock.advance(to: question.opensAt)
        events.send(1, .answer(question: 0, option: 2))
        _ = await transport.next("reveal", to: 1)

        // A new registry over the same store: the server after a restart. The first one stops (and gives
        // up its leases, which the store keeps, as a restarted SQLite server would have lost them).
        await registry.shutDown()
        let after = RecordingTransport()
        let (restarted, restartedEvents) = ServerFixtures.registry(transport: after, store: store, clock: clock)
        #expect(try await restarted.directory.restoreRooms() == 1)
        restartedEvents.hello(9, .rejoin(room: created.code, token: token))
        guard case .welcome(let back) = await after.next("welcome", to: 9) else { Issue.record("expected .welcome"); return }
        #expect(back.player?.nickname == "Ana")
        #expect(back.room.you?.score == 1_000)
        #expect(back.room.phase == .reveal)
    }
}

@Suite("Registry")
struct RegistryTests {
    @Test func theFirstMessageMustBeAHello() async throws {
        let transport = RecordingTransport()
        let (_, events) = ServerFixtures.registry(transport: transport)
        events.yield(.opened(connection: 1, peer: "10.0.0.1"))
        events.send(1, .answer(question: 0, option: 1))
        #expect(await transport.next("error", to: 1) == .error(RoomError(.helloRequired, "Say who you are first: join, rejoin, watch or control.")))
        #expect(transport.closeStatus(1) == 1008)
        events.yield(.opened(connection: 2, peer: "10.0.0.1"))
        events.raw(2, "{oops")
        guard case .error(let error) = await transport.next("error", to: 2) else { Issue.record("expected .error"); return }
        #expect(error.code == .invalidJSON)
        events.yield(.opened(connection: 3, peer: "10.0.0.1"))
        events.raw(3, #"{"type":"teleport"}"#)
        guard case .error(let unknown) = await transport.next("error", to: 3) else { Issue.record("expected .error"); return }
        #expect(unknown.code == .unknownType)
    }

    // Guessing codes and tokens, and what it does to the other devices of an address: HelloLimitTests.

    @Test func roomsAreIsolated() async throws {
        let transport = RecordingTransport()
        let (registry, events) = ServerFixtures.registry(transport: transport)
        let first = try await registry.directory.createRoom(story: ServerFixtures.story)
        let second = try await registry.directory.createRoom(story: ServerFixtures.story)
        #expect(first.code != second.code)
        events.hello(1, .join(room: first.code, nickname: "Ana"))
        events.hello(2, .join(room: second.code, nickname: "Ana"))
        _ = await transport.next("welcome", to: 1)
        _ = await transport.next("welcome", to: 2)
        _ = try await registry.directory.room(first.code)?.perform(.start)
        _ = await transport.next("narration.plan", to: 1)
        #expect(await registry.directory.room(second.code)?.report().phase == .lobby)
        #expect(!transport.types(to: 2).contains("narration.plan"))
    }
}
