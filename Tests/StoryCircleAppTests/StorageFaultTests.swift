import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// Rooms over a store that fails on demand, with a manual clock: no acknowledgement, no token and no
/// phase change without a commit; a failing record is retried, then given up, and the room rebuilds
/// itself from what the store holds; when the store heals, the room carries on.
@Suite("Storage faults", .timeLimit(.minutes(1)))
struct StorageFaultTests {
    let transport = RecordingTransport()
    let clock = ManualClock()
    let store: FailingStore
    let registry: RoomRegistry
    let events: AsyncStream<TransportEvent>.Continuation
    let metrics = ServerMetrics()

    init() {
        store = FailingStore(clock: clock)
        var settings = RoomRegistry.Settings()
        settings.storageRetrySeconds = 1
        (registry, events) = ServerFixtures.registry(transport: transport, store: store, clock: clock, settings: settings, metrics: metrics)
    }

    /// A room at its first question with the given children joined (connections 1, 2, …) and a teacher
    /// (connection 9); returns the room, its credentials, the children's tokens and the open question.
    private func roomAtTheFirstQuestion(_ names: [String]) async throws -> (Room, CreatedRoom, [String], QuestionView) {
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        var tokens: [String] = []
        for (index, name) in names.enumerated() {
            events.hello(UInt64(index + 1), .join(room: created.code, nickname: name))
            guard case .welcome(let welcome) = await transport.next("welcome", to: UInt64(index + 1)), let token = welcome.token else {
                throw Failure("no welcome for \(name)")
            }
            tokens.append(token)
        }
        events.hello(9, .control(room: created.code, token: created.teacherToken))
        _ = await transport.next("welcome", to: 9)
        let room = try #require(await registry.directory.room(created.code))
        _ = try await room.perform(.start)
        _ = try await room.perform(.skip)
        guard case .question(let question) = await transport.next("question", to: 1) else { throw Failure("no question") }
        clock.advance(to: question.opensAt + 500)
        return (room, created, tokens, question)
    }

    struct Failure: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// Makes sure connection `connection`'s earlier messages were handled by its room: a ping is answered
    /// at once (never held), after them.
    private func handled(_ connection: UInt64, _ id: Int) async {
        events.send(connection, .ping(id: id, clientTime: nil, roundTripMs: nil))
        _ = await transport.next("pong", to: connection)
    }

    /// Moves the clock through the outbox's retries of a record that first failed at `failedAt`, until it
    /// gives up (retry limit: 1 s). The retries come 100, 300, 700 and 1,000 ms after the first failure.
    private func retryUntilGivenUp(from failedAt: ServerTime, failuresBefore: Int = 1, whileRetrying check: () -> Void = {}) async {
        for (step, offset) in [100, 300, 700, 1_000].enumerated() {
            check()
            clock.advance(to: failedAt + offset)
            await store.waitForFailures(failuresBefore + step + 1)
        }
    }

    @Test func anAnswerOrAJoinThatCannotBeStoredIsNeverAcknowledgedAndTheRoomRebuildsFromTheStore() async throws {
        let (room, created, tokens, _) = try await roomAtTheFirstQuestion(["Ana", "Ben", "Dan"])
        events.send(2, .answer(question: 0, option: 2))
        #expect(await transport.next("answer.ack", to: 2) == .answerAck(AnswerAck(question: 0, option: 2)))

        store.breakWrites()
        let failedAt = clock.now()
        events.send(1, .answer(question: 0, option: 1))
        await store.waitForFailures(1)
        guard case .storage(let banner) = await transport.next("storage", to: 9) else { Issue.record("no storage banner"); return }
        #expect(banner == StoreHealthStatus.failing(FailingStore.diskFull))
        #expect(banner.reason == .diskFull, "the page words the cause from its code")
        #expect(await room.report().pendingRecords == 1)
        // A late joiner meanwhile: their record waits behind the failing one, and so does their welcome.
        events.hello(4, .join(room: created.code, nickname: "Cat"))
        await handled(4, 1)
        #expect(await room.report().pendingRecords == 2)

        await retryUntilGivenUp(from: failedAt) {
            #expect(!transport.types(to: 1).contains("answer.ack"), "not stored, so not acknowledged")
            #expect(!transport.types(to: 1).contains("error"), "held while it is tried again: the page says Sending…")
            #expect(!transport.types(to: 4).contains("welcome"), "no token before the child is stored")
        }

        // Given up: Ana is told, and finds the question open again; the store is the truth.
        #expect(await transport.next("error", to: 1) == .error(RoomError(.storageUnavailable, "Your answer could not be saved yet — tap again.")))
        guard case .welcome(let anaBack) = await transport.next("welcome", to: 1) else { Issue.record("no welcome"); return }
        #expect(anaBack.token == nil)
        #expect(anaBack.room.phase == .question && anaBack.room.yourAnswer == nil)
        let reopened = try #require(anaBack.room.question)
        #expect(reopened.opensAt == clock.now() + 5_000, "reopened as after a restart")
        guard case .welcome(let benBack) = await transport.next("welcome", to: 2) else { Issue.record("no welcome"); return }
        #expect(benBack.room.yourAnswer == 2, "his answer was stored before the failure")
        // Cat was never stored: no welcome, no token; the page can try again.
        guard case .error(let refused) = await transport.next("error", to: 4) else { Issue.record("no error"); return }
        #expect(refused.code == .storageUnavailable)
        #expect(await transport.closed(4) == CloseReason(status: 1013, reason: "storage_unavailable"))
        #expect(!transport.types(to: 4).contains("welcome"))
        #expect(!transport.types(to: 1).contains("answer.ack"))
        #expect(metrics.roomsRebuilt == 1)
        #expect(metrics.answersAccepted == 1, "only Ben's answer was acknowledged")
        // A teacher arriving while storage fails is told right after the welcome.
        events.hello(10, .control(room: created.code, token: created.teacherToken))
        #expect(await transport.next("welcome", to: 10).type == "welcome")
        #expect(await transport.next("storage", to: 10) == .storage(banner))

        // Space comes back: Ana taps again and is acknowledged, Cat gets in, the teacher hears it works.
        store.heal()
        clock.advance(to: reopened.opensAt + 100)
        events.send(1, .answer(question: 0, option: 1))
        #expect(await transport.next("answer.ack", to: 1) == .answerAck(AnswerAck(question: 0, option: 1)))
        #expect(store.resumes >= 1, "the room told the store to take its records again")
        var status = await transport.next("storage", to: 9)
        while status != .storage(StoreHealthStatus(ok: true)) { status = await transport.next("storage", to: 9) }
        events.hello(5, .join(room: created.code, nickname: "Cat"))
        guard case .welcome(let cat) = await transport.next("welcome", to: 5) else { Issue.record("no welcome"); return }
        #expect(cat.token != nil)

        let stored = try #require(try await store.archive(room: created.code))
        #expect(stored.answers.map(\.player).sorted() == ["p1", "p2"])
        #expect(stored.players.map(\.nickname) == ["Ana", "Ben", "Dan", "Cat"])
        // Every token handed out works.
        for (index, token) in (tokens + [cat.token!]).enumerated() {
            events.hello(UInt64(100 + index), .rejoin(room: created.code, token: token))
            guard case .welcome = await transport.next("welcome", to: UInt64(100 + index)) else { Issue.record("token \(index) refused"); return }
        }
    }

    /// The class is saved while its room reads itself back from the store (a pick could not be stored): the
    /// change waits with the room's other input and reaches the pickers once the room is rebuilt.
    @Test func aClassSavedWhileItsRoomReadsItselfBackReachesThePickersAfterTheRebuild() async throws {
        let ada = ClassMember(id: "mem_ada", name: "Ada", avatar: "owl")
        let created = try await registry.directory.createRoom(story: ServerFixtures.story, classRoster: ClassRoster(id: "cls_1b", name: "Class 1B", members: [ada], version: 1))
        events.hello(1, .names(room: created.code))
        guard case .names(let shown) = await transport.next("names", to: 1) else { Issue.record("no names"); return }
        #expect(shown.children.map(\.id) == ["mem_ada"])
        let room = try #require(await registry.directory.room(created.code))

        store.breakWrites()
        store.holdReads()
        let failedAt = clock.now()
        events.hello(2, .pick(room: created.code, member: "mem_ada"))
        await store.waitForFailures(1)
        await retryUntilGivenUp(from: failedAt)
        await store.waitForHeldRead()
        // Saved meanwhile (Cy joined the class): the room is reading itself back.
        await room.followClass(ClassRoster(id: "cls_1b", name: "Class 1B", members: [ada, ClassMember(id: "mem_cy", name: "Cy", avatar: "cat")], version: 2))
        store.heal()
        store.releaseReads()
        while case .names(let list) = await transport.next("names", to: 1), !list.children.contains(where: { $0.id == "mem_cy" }) {}
        let offered: [String] = transport.messages(to: 1).compactMap { message -> [String]? in
            if case .names(let list) = message { list.children.map(\.id) } else { nil }
        }.last ?? []
        #expect(offered == ["mem_ada", "mem_cy"])
        #expect(await room.classRoster?.version == 2)
    }

    @Test func aTeacherCommandThatCannotBeStoredAnswers503AndNeverHappens() async throws {
        let (room, created, _, question) = try await roomAtTheFirstQuestion(["Ana"])
        let api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: metrics, transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin"),
            publicURL: "http://127.0.0.1", startedAt: clock.now(), audio: nil, qrCodes: false
        )
        store.breakWrites()
        let failedAt = clock.now()
        async let response = api.handle(.testRequest(method: .post, path: "/api/rooms/\(created.code)/commands", headers: ["authorization": "Bearer \(created.teacherToken)"], body: Array(#"{"command":"next"}"#.utf8)))
        await store.waitForFailures(1)
        await retryUntilGivenUp(from: failedAt) {
            #expect(!transport.types(to: 1).contains("reveal"), "no phase change before it is stored")
        }
        let answered = await response
        #expect(answered.status == 503)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(answered.body)) as? [String: [String: String]])
        #expect(body["error"]?["code"] == "storage_unavailable")
        #expect(body["error"]?["message"]?.contains("No space left on device") == true)
        guard case .welcome(let back) = await transport.next("welcome", to: 1) else { Issue.record("no welcome"); return }
        #expect(back.room.phase == .question, "the reveal did not happen")
        #expect(back.room.question?.index == question.index)
        #expect(!transport.types(to: 1).contains("reveal"))
        #expect(await room.report().phase == .question)

        let health = await api.handle(.testRequest(method: .get, path: "/healthz"))
        #expect(health.status == 503)
        let healthBody = try #require(try JSONSerialization.jsonObject(with: Data(health.body)) as? [String: Any])
        #expect(healthBody["status"] as? String == "degraded")
        #expect(healthBody["reason"] as? String == FailingStore.diskFull)
        let metricsText = String(decoding: await api.handle(.testRequest(method: .get, path: "/metrics")).body, as: UTF8.self)
        #expect(metricsText.contains("storycircle_storage_healthy 0"))
        #expect(metricsText.contains("storycircle_rooms_rebuilt_total 1"))
        let create = await api.handle(.testRequest(method: .post, path: "/api/rooms", headers: ["authorization": "Bearer admin"], body: Array(try Fixtures.sampleStoryData())))
        #expect(create.status == 503, "a room that cannot be stored is not created")

        store.heal()
        let next = await api.handle(.testRequest(method: .post, path: "/api/rooms/\(created.code)/commands", headers: ["authorization": "Bearer \(created.teacherToken)"], body: Array(#"{"command":"next"}"#.utf8)))
        #expect(next.status == 200)
        #expect(await transport.next("reveal", to: 1).type == "reveal")
        #expect(await api.handle(.testRequest(method: .get, path: "/healthz")).status == 200)
    }

    @Test func aRecordThatFailsBrieflyIsRetriedAndWhatWasHeldGoesOutInOrder() async throws {
        _ = try await roomAtTheFirstQuestion(["Ana", "Ben"])
        store.failNext(2)
        let failedAt = clock.now()
        events.send(1, .answer(question: 0, option: 2))
        await store.waitForFailures(1)
        // Ben answers too: everyone has, so the room reveals; all of it waits behind Ana's answer.
        events.send(2, .answer(question: 0, option: 1))
        await handled(2, 1)
        clock.advance(to: failedAt + 100)
        await store.waitForFailures(2)
        #expect(!transport.types(to: 1).contains("answer.ack") && !transport.types(to: 2).contains("answer.ack"))
        clock.advance(to: failedAt + 300)

        #expect(await transport.next("reveal", to: 2).type == "reveal")
        #expect(transport.types(to: 1).suffix(2) == ["answer.ack", "reveal"])
        #expect(transport.types(to: 2).suffix(2) == ["answer.ack", "reveal"])
        #expect(!transport.types(to: 1).contains("error"))
        #expect(transport.types(to: 1).count { $0 == "welcome" } == 1, "no rebuild")
        #expect(metrics.roomsRebuilt == 0)
        #expect(store.failures == 2)
    }

    @Test func recordsInFlightWhenTheDiskFillsAreTriedAgainOldestFirstAndAcknowledgedInOrder() async throws {
        let (_, created, _, _) = try await roomAtTheFirstQuestion(["Ana", "Ben", "Dan", "Eve"])
        let appendsBefore = store.appends
        store.holdWrites()
        for connection: UInt64 in 1...3 { events.send(connection, .answer(question: 0, option: Int(connection))) }
        await store.waitForHeld(3)
        store.breakWrites()
        let failedAt = clock.now()
        store.releaseHeld()  // the whole batch fails, as SQLite's does
        await store.waitForFailures(3)
        for connection: UInt64 in 1...3 { #expect(!transport.types(to: connection).contains("answer.ack")) }

        store.heal()
        clock.advance(to: failedAt + 100)
        for connection: UInt64 in 1...3 {
            #expect(await transport.next("answer.ack", to: connection) == .answerAck(AnswerAck(question: 0, option: Int(connection))))
        }
        #expect(try await store.archive(room: created.code)?.answers.map(\.player) == ["p1", "p2", "p3"], "stored in the order they were decided")
        #expect(store.appends - appendsBefore == 3 + 3, "each tried twice: the oldest alone first, then the others behind it")
        #expect(metrics.roomsRebuilt == 0)
    }

    @Test func aRecordTheStoreRefusesIsGivenUpAtOnceAndTheRoomGoesOn() async throws {
        let (_, created, _, _) = try await roomAtTheFirstQuestion(["Ana", "Ben", "Dan"])
        store.reject { if case .answer(let answer) = $0 { answer.player == "p1" } else { false } }
        events.send(1, .answer(question: 0, option: 2))
        #expect(await transport.next("error", to: 1) == .error(RoomError(.storageUnavailable, "Your answer could not be saved yet — tap again.")))
        #expect(store.failures == 1, "a refused record is not tried again")
        guard case .welcome(let rebuilt) = await transport.next("welcome", to: 2), let reopened = rebuilt.room.question else { Issue.record("no welcome"); return }
        store.heal()
        clock.advance(to: reopened.opensAt)
        events.send(2, .answer(question: 0, option: 0))
        #expect(await transport.next("answer.ack", to: 2) == .answerAck(AnswerAck(question: 0, option: 0)))
        #expect(try await store.archive(room: created.code)?.answers.map(\.player) == ["p2"])
    }

    @Test func aRoomThatCannotBeReadBackClosesItsConnectionsAndComesBackOnTheNextHello() async throws {
        let (_, created, tokens, _) = try await roomAtTheFirstQuestion(["Ana", "Ben"])
        store.breakWrites()
        store.breakReads()
        let failedAt = clock.now()
        events.send(1, .answer(question: 0, option: 2))
        await store.waitForFailures(1)
        await retryUntilGivenUp(from: failedAt)
        for connection: UInt64 in [1, 2, 9] {
            #expect(await transport.closed(connection) == CloseReason(status: 1013, reason: "storage_unavailable"))
            guard case .error(let error) = await transport.next("error", to: connection) else { Issue.record("no error"); return }
            #expect(error.code == .storageUnavailable)
        }
        #expect(await registry.directory.room(created.code) == nil, "released")

        store.heal()
        events.hello(20, .rejoin(room: created.code, token: tokens[0]))
        guard case .welcome(let back) = await transport.next("welcome", to: 20) else { Issue.record("no welcome"); return }
        #expect(back.player?.nickname == "Ana")
        #expect(back.room.phase == .question)
    }
}

@Suite("Rooms out of memory", .timeLimit(.minutes(1)))
struct RoomLifetimeTests {
    @Test func aFinishedRoomIsLoadedFromTheStoreWhenAChildComesBack() async throws {
        let transport = RecordingTransport()
        let store = MemoryRoomStore()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        guard case .welcome(let welcome) = await transport.next("welcome", to: 1), let token = welcome.token else { Issue.record("no welcome"); return }
        let room = try #require(await registry.directory.room(created.code))
        _ = try await room.perform(.start)
        _ = try await room.perform(.skip)
        guard case .question(let question) = await transport.next("question", to: 1) else { Issue.record("no question"); return }
        clock.advance(to: question.opensAt)
        events.send(1, .answer(question: 0, option: 2))
        _ = await transport.next("reveal", to: 1)
        _ = try await room.perform(.end)
        let results = await room.results()

        // The server after a restart: finished rooms are not restored up front, but they are there. (The
        // first one stops and gives up its leases, which a restarted server would not find.)
        await registry.shutDown()
        let after = RecordingTransport()
        let (restarted, restartedEvents) = ServerFixtures.registry(transport: after, store: store, clock: clock)
        #expect(try await restarted.directory.restoreRooms() == 0)
        #expect(await restarted.directory.room(created.code) == nil)
        restartedEvents.hello(9, .rejoin(room: created.code, token: token))
        guard case .welcome(let back) = await after.next("welcome", to: 9) else { Issue.record("no welcome"); return }
        #expect(back.room.phase == .finished)
        #expect(back.room.finished?.you?.score == 1_000)
        #expect(await restarted.directory.room(created.code)?.results() == results, "results stay")
        restartedEvents.hello(10, .join(room: created.code, nickname: "Late"))
        guard case .error(let refused) = await after.next("error", to: 10) else { Issue.record("no error"); return }
        #expect(refused.code == .roomEnded, "not room_not_found")
    }

    @Test func aRoomRemovedByRetentionClosesItsConnectionsAndForgetsThem() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, clock: clock)
        let old = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: old.code, nickname: "Ana"))
        events.hello(2, .watch(room: old.code, token: old.dashboardToken))
        _ = await transport.next("welcome", to: 1)
        _ = await transport.next("welcome", to: 2)
        clock.advance(by: 31 * 86_400_000)
        let recent = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(3, .join(room: recent.code, nickname: "Ben"))
        _ = await transport.next("welcome", to: 3)

        let swept = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), createdBefore: clock.now() + -(30 * 86_400_000))
        #expect(swept.purged == 1)
        for connection: UInt64 in [1, 2] {
            #expect(await transport.closed(connection) == CloseReason(status: 1001, reason: "room_ended"))
            guard case .error(let error) = await transport.next("error", to: connection) else { Issue.record("no error"); return }
            #expect(error == RoomError(.roomEnded, "This room has been deleted: rooms are kept for 30 days."))
        }
        #expect(transport.closeStatus(3) == nil, "other rooms are untouched")
        // The connection is the old room's no more, and is not greeted again while its close goes out: what
        // it sends is answered by nobody (a tap is not a hello; its refusal would race the room's close).
        events.send(1, .answer(question: 0, option: 1))
        // A refused hello behind the tap in the stream shows the tap has been routed.
        events.hello(4, .join(room: "000000", nickname: "Zoe"))
        _ = await transport.next("error", to: 4)
        #expect(transport.types(to: 1) == ["welcome", "error"], "the tap was answered")
        #expect(transport.closeStatus(1) == 1001)
    }
}

@Suite("One server per data folder")
struct DataDirectoryLockTests {
    @Test func aSecondServerOnTheSameFolderIsRefusedNamingTheFirstsPid() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let web = folder.appendingPathComponent("web")
        try FileManager.default.createDirectory(at: web, withIntermediateDirectories: true)
        try "<!doctype html>".write(to: web.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        var configuration = ServerConfiguration()
        configuration.network.port = 0
        configuration.network.bindAddress = "127.0.0.1"
        configuration.files.webRoot = web.path
        configuration.files.dataDirectory = folder.appendingPathComponent("data").path
        configuration.storage.database = folder.appendingPathComponent("data/storycircle.sqlite").path
        configuration.network.adminToken = "admin"
        func start() async throws -> ClassroomServer {
            try await ClassroomServer.start(configuration: configuration, clock: ManualClock(), narrator: ScriptedNarrator(), logger: StoryCircleLog(label: "test", minimumLevel: .error))
        }
        let first = try await start()
        await #expect(performing: { _ = try await start() }, throws: { error in
            String(describing: error) == "another StoryCircle server (pid \(getpid())) is already using the data folder \(configuration.files.dataDirectory): stop it first, or give this one its own --data folder"
        })
        await first.stop()
        let again = try await start()
        await again.stop()
    }
}
