import Foundation
import Locking
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `RoomStore`, held to by every backend alike.
@Suite("Room store, every backend")
struct RoomStoreSuite {
    @Test(arguments: Backend.all)
    func aRoomComesBackExactlyAsItWasRecorded(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, Sample.records, room: "123456")

        let stored = try #require(try await store.archive(room: "123456"))
        #expect(stored == Sample.expected("123456"))
        #expect(stored.settings == RoomSettings(speedPoints: false, timer: false))
        #expect(try await store.archive(room: "999999") == nil)
        #expect(try await store.unfinishedRooms().map(\.header.code) == ["123456"])
        #expect(try await store.summaries() == [RoomSummary(code: "123456", title: "Test Story", phase: .reveal, players: 1, createdAt: ServerTime(milliseconds: 1_000))])
        #expect(try await store.codeExists("123456"))
        #expect(try await !store.codeExists("999999"))
    }

    @Test(arguments: Backend.all)
    func aBlockIsStoredKeepsAnEarlierKickAndComesBackAfterReopening(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let records: [RoomRecord] = [
            .playerJoined(PlayerRecord(id: "p1", nickname: "Ana", tokenHash: RoomCredentials.hash("ana"), joinedAt: ServerTime(milliseconds: 2_000))),
            .playerJoined(PlayerRecord(id: "p2", nickname: "Ben", tokenHash: RoomCredentials.hash("ben"), joinedAt: ServerTime(milliseconds: 2_100))),
            .playerJoined(PlayerRecord(id: "p3", nickname: "Cat", tokenHash: RoomCredentials.hash("cat"), joinedAt: ServerTime(milliseconds: 2_200))),
            .playerKicked(player: "p1", at: ServerTime(milliseconds: 3_000)),
            .playerBlocked(player: "p2", at: ServerTime(milliseconds: 3_100)),
            .playerKicked(player: "p3", at: ServerTime(milliseconds: 3_200)),
            .playerBlocked(player: "p3", at: ServerTime(milliseconds: 3_300)),
        ]
        try await fixture.store.createRoom(Sample.header("123456"))
        try await appendAndWait(fixture.store, records, room: "123456")
        await fixture.store.close()

        let reopened = try fixture.reopen()
        let stored = try #require(try await reopened.archive(room: "123456"))
        #expect(stored == Sample.expected("123456", records))
        #expect(stored.kicked == ["p1", "p2", "p3"])
        #expect(stored.blocked == ["p2", "p3"])
        #expect(try await reopened.summaries().first?.players == 0)
    }

    @Test(arguments: Backend.all)
    func finishedRoomsAreKeptButNotRestoredAndSummariesAreNewestFirst(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("100001", createdAt: 1_000))
        try await store.createRoom(Sample.header("100002", createdAt: 2_000))
        try await store.createRoom(Sample.header("100003", createdAt: 3_000))
        try await appendAndWait(store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: "100002")

        #expect(try await store.unfinishedRooms().map(\.header.code) == ["100001", "100003"])
        #expect(try await store.summaries().map(\.code) == ["100003", "100002", "100001"])
        #expect(try await store.summaries().map(\.phase) == [.lobby, .finished, .lobby])
        #expect(try await store.archive(room: "100002")?.lastPhase == .finished)
    }

    @Test(arguments: Backend.all)
    func tokensAreNeverStoredInClear(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        try await fixture.store.createRoom(Sample.header("123456", teacherToken: "TEACHER-TOKEN-IN-CLEAR"))
        try await appendAndWait(fixture.store, Sample.records, room: "123456")
        await fixture.store.close()

        let bytes = try fixture.storedBytes()
        for secret in ["TEACHER-TOKEN-IN-CLEAR", "dashboard-secret-token", "ana-resume", "ben-resume"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the database")
        }
        #expect(bytes.range(of: Data(RoomCredentials.hash("TEACHER-TOKEN-IN-CLEAR").utf8)) != nil, "the hash is what is kept")
        let reopened = try fixture.reopen()
        let credentials = try #require(try await reopened.archive(room: "123456")).header.credentials
        #expect(credentials.isTeacher("TEACHER-TOKEN-IN-CLEAR"))
        #expect(!credentials.isTeacher(RoomCredentials.hash("TEACHER-TOKEN-IN-CLEAR")), "a stolen hash is not a token")
    }

    @Test(arguments: Backend.all)
    func reopeningFindsTheSchemaCurrentAndTheDataIntact(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        #expect(try await fixture.schemaVersion(fixture.store) == fixture.latestSchemaVersion)
        try await fixture.store.createRoom(Sample.header("123456"))
        try await appendAndWait(fixture.store, Sample.records, room: "123456")
        await fixture.store.close()

        let reopened = try fixture.reopen()
        #expect(try await fixture.schemaVersion(reopened) == fixture.latestSchemaVersion)
        #expect(try await reopened.archive(room: "123456") == Sample.expected("123456"))
    }

    @Test(arguments: Backend.all)
    func aNewerSchemaIsRefusedWithAClearMessage(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        await fixture.store.close()
        try fixture.recordNewerSchema()
        #expect(performing: { _ = try fixture.reopen() }, throws: { error in
            String(describing: error).contains("newer than this StoryCircle")
        })
    }

    @Test(arguments: Backend.all)
    func roomsPastTheRetentionPeriodArePurgedWithEverythingInThem(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("100001", createdAt: 1_000))
        try await store.createRoom(Sample.header("100002", createdAt: 9_000))
        try await appendAndWait(store, Sample.records, room: "100001")
        try await appendAndWait(store, Sample.records, room: "100002")

        #expect(try await store.purge(createdBefore: ServerTime(milliseconds: 5_000)) == 1)
        #expect(try await store.archive(room: "100001") == nil)
        #expect(try await !store.codeExists("100001"))
        #expect(try await store.codeExists("100002"))
        for table in ["players", "answers", "transitions"] {
            #expect(try fixture.rows(in: table, room: "100001") == 0, "\(table) of the purged room")
        }
        #expect(try fixture.rows(in: "answers", room: "100002") == 1)
        #expect(try await store.purge(createdBefore: ServerTime(milliseconds: 5_000)) == 0)
    }

    @Test(arguments: Backend.all)
    func manyConcurrentAppendsAreGroupedIntoFewCommits(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        for room in 0..<10 { try await store.createRoom(Sample.header("20000\(room)")) }
        let before = fixture.commitCount
        let answers = 2_000
        let failures = Locked(0)
        let durable = Locked(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.concurrentPerform(iterations: answers) { i in
                let record = RoomRecord.answer(AnswerRecord(player: "p\(i)", question: 0, option: 0, receivedAt: ServerTime(milliseconds: Int64(i)), elapsedMs: i, correct: true, points: 1_000))
                store.append(record, room: "20000\(i % 10)") { error in
                    if error != nil { failures.withLock { $0 += 1 } }
                    if durable.withLock({ $0 += 1; return $0 }) == answers { done.resume() }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let commits = fixture.commitCount - before
        #expect(commits < answers / 4, "\(answers) answers took \(commits) commits")
        var total = 0
        for room in 0..<10 { total += try await store.archive(room: "20000\(room)")?.answers.count ?? 0 }
        #expect(total == answers)
    }

    @Test(arguments: Backend.all)
    func aConflictingRecordIsRejectedAndItsRoomWaitsUntilItResumesWhileOtherRoomsCommit(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("123456"))
        try await store.createRoom(Sample.header("654321"))
        let finished = RoomRecord.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 6_000)))
        let outcomes = await appendAll(store, [
            (Sample.answer("p1", option: 1), room: "123456"),
            (Sample.answer("p1", option: 0), room: "123456"),
            (Sample.answer("p9"), room: "654321"),
            (finished, room: "123456"),
        ])
        #expect(outcomes.map { $0 == nil } == [true, false, true, false])
        #expect((outcomes[1] as? StoreFailure)?.kind == .rejected, "another answer by the same child to the same question")
        #expect((outcomes[3] as? StoreFailure)?.kind == .unavailable, "decided after it: not stored without it")
        #expect(store.health == .ok, "a refused record says nothing about the database")
        #expect(try await store.archive(room: "123456")?.answers.map(\.option) == [1], "the first answer stands")
        #expect(try await store.archive(room: "123456")?.phases.isEmpty == true)
        #expect(try await store.archive(room: "654321")?.answers.count == 1)

        try await appendAndWait(store, [finished], room: "123456", resuming: true)
        #expect(try await store.archive(room: "123456")?.lastPhase == .finished)
        #expect(try await store.unfinishedRooms().map(\.header.code) == ["654321"])
    }

    @Test(arguments: Backend.all)
    func aProbeOfAHealthyStoreIsOK(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        #expect(fixture.store.health == .ok)
        #expect(await fixture.store.probe() == .ok)
    }

    @Test(arguments: Backend.all)
    func aRecordForAMissingRoomFailsWithoutTakingOtherRoomsDown(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        try await fixture.store.createRoom(Sample.header("123456"))
        let outcomes = await appendAll(fixture.store, [
            (Sample.answer("p1"), room: "123456"),
            (Sample.answer("p1"), room: "999999"),
            (Sample.answer("p2"), room: "123456"),
        ])
        #expect(outcomes.map { $0 == nil } == [true, false, true])
        #expect(try await fixture.store.archive(room: "123456")?.answers.map(\.player) == ["p1", "p2"])
        #expect(try await fixture.store.archive(room: "999999") == nil)
    }

    @Test(arguments: Backend.all)
    func creatingARoomWithATakenCodeFails(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        try await fixture.store.createRoom(Sample.header("123456"))
        await #expect(throws: (any Error).self) { try await fixture.store.createRoom(Sample.header("123456", createdAt: 7_000, teacherToken: "someone-else")) }
        #expect(try await fixture.store.archive(room: "123456")?.header == Sample.header("123456"))
    }

    @Test(arguments: Backend.all)
    func closingWritesWhatIsQueuedAndRefusesWhatComesAfter(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Sample.header("123456"))
        for record in Sample.records { store.append(record, room: "123456") { _ in } }
        await store.close()
        let refused = Locked<(any Error)?>(nil)
        store.append(Sample.records[0], room: "123456") { error in refused.withLock { $0 = error } }
        #expect(refused.withLock { $0 } != nil)
        await #expect(throws: (any Error).self) { try await store.createRoom(Sample.header("654321")) }
        let reopened = try fixture.reopen()
        #expect(try await reopened.archive(room: "123456") == Sample.expected("123456"))
    }
}
