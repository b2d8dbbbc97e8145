import Foundation
import Synchronization
import Locking
import Testing
@testable import SQLiteStorage
@testable import StoryCircleCore

@Suite("SQLite room store")
struct SQLiteRoomStoreTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-store-\(UUID().uuidString)")
    var path: String { folder.appendingPathComponent("rooms.sqlite").path }

    static let story = Story(
        title: "Test Story", sentences: ["One.", "Two."],
        quiz: Quiz(questions: [Question(text: "Q?", options: ["A", "B"], answer: 1, timeLimit: 15, explanation: "Because.")])
    )

    static func header(_ code: String, createdAt: Int64 = 1_000, teacherToken: String = "teacher-secret-token") -> RoomHeader {
        RoomHeader(code: code, story: story, settings: RoomSettings(speedPoints: false), credentials: RoomCredentials(teacherToken: teacherToken, dashboardToken: "dashboard-secret-token"), createdAt: ServerTime(milliseconds: createdAt))
    }

    static let records: [RoomRecord] = [
        .playerJoined(PlayerRecord(id: "p1", nickname: "Ana", tokenHash: RoomCredentials.hash("ana-resume"), joinedAt: ServerTime(milliseconds: 2_000))),
        .playerJoined(PlayerRecord(id: "p2", nickname: "Robert'); DROP TABLE players;--", tokenHash: RoomCredentials.hash("ben-resume"), joinedAt: ServerTime(milliseconds: 2_100))),
        .roomUpdated(settings: RoomSettings(speedPoints: false, timer: false), locked: true, at: ServerTime(milliseconds: 2_200)),
        .phase(PhaseRecord(phase: .preparing, at: ServerTime(milliseconds: 3_000))),
        .phase(PhaseRecord(phase: .question, question: 0, at: ServerTime(milliseconds: 4_000))),
        .answer(AnswerRecord(player: "p1", question: 0, option: 1, receivedAt: ServerTime(milliseconds: 4_500), elapsedMs: 480, correct: true, points: 1_000)),
        .playerLeft(player: "p2", at: ServerTime(milliseconds: 4_600)),
        .playerKicked(player: "p2", at: ServerTime(milliseconds: 4_700)),
        .phase(PhaseRecord(phase: .reveal, question: 0, skipped: false, at: ServerTime(milliseconds: 5_000))),
    ]

    private func appendAndWait(_ store: SQLiteRoomStore, _ records: [RoomRecord], room: String) async throws {
        for record in records {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                store.append(record, room: room) { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }
            }
        }
    }

    @Test func aRoomComesBackExactlyAsItWasRecorded() async throws {
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        try await store.createRoom(Self.header("123456"))
        try await appendAndWait(store, Self.records, room: "123456")

        var expected = RoomArchive(header: Self.header("123456"))
        Self.records.forEach { expected.apply($0) }
        let stored = try #require(try await store.archive(room: "123456"))
        #expect(stored == expected)
        #expect(stored.settings == RoomSettings(speedPoints: false, timer: false))
        #expect(try await store.archive(room: "999999") == nil)
        #expect(try await store.unfinishedRooms().map(\.header.code) == ["123456"])
        #expect(try await store.summaries() == [RoomSummary(code: "123456", title: "Test Story", phase: .reveal, players: 1, createdAt: ServerTime(milliseconds: 1_000))])
        #expect(try await store.codeExists("123456"))
    }

    @Test func tokensAreNeverStoredInClear() async throws {
        let store = try SQLiteRoomStore(path: path)
        try await store.createRoom(Self.header("123456", teacherToken: "TEACHER-TOKEN-IN-CLEAR"))
        try await appendAndWait(store, Self.records, room: "123456")
        await store.close()
        defer { try? FileManager.default.removeItem(at: folder) }
        var bytes = Data()
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            bytes += FileManager.default.contents(atPath: folder.appendingPathComponent(file).path) ?? Data()
        }
        for secret in ["TEACHER-TOKEN-IN-CLEAR", "dashboard-secret-token", "ana-resume", "ben-resume"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the database files")
        }
        #expect(bytes.range(of: Data(RoomCredentials.hash("TEACHER-TOKEN-IN-CLEAR").utf8)) != nil, "the hash is what is kept")
        let reopened = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(reopened) }
        let credentials = try #require(try await reopened.archive(room: "123456")).header.credentials
        #expect(credentials.isTeacher("TEACHER-TOKEN-IN-CLEAR"))
        #expect(!credentials.isTeacher(RoomCredentials.hash("TEACHER-TOKEN-IN-CLEAR")), "a stolen hash is not a token")
    }

    @Test func anOlderDatabaseFileIsMigratedWithItsData() async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A version-1 file, as the first release wrote it.
        do {
            let old = try SQLiteDatabase(path: path)
            #expect(try Migrations.migrate(old, to: 1, now: 1) == [1])
            try old.execute("""
                INSERT INTO rooms (code, title, story, settings, teacher_token_hash, dashboard_token_hash, locked, phase, created_at)
                VALUES ('111111', 'Old', '\(String(decoding: try JSONEncoder().encode(Self.story.jsonValue()), as: UTF8.self))', '{"lateJoin":false,"narration":"devices","questionSeconds":25,"speedPoints":true,"timer":true}', 'h1', 'h2', 0, 'question', 500);
                INSERT INTO players (room_code, id, nickname, token_hash, joined_at) VALUES ('111111', 'p1', 'Zoë', 'th', 600);
                INSERT INTO answers VALUES ('111111', 'p1', 0, 1, 700, 200, 1, 1000);
                INSERT INTO transitions (room_code, phase, question, skipped, at) VALUES ('111111', 'question', 0, 0, 650);
                """)
            #expect(throws: SQLiteError.self) { try old.execute("UPDATE players SET left_at = 1") }
        }
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store) }
        #expect(try await store.schemaVersion() == Migrations.latest)
        let archive = try #require(try await store.archive(room: "111111"))
        #expect(archive.players.map(\.nickname) == ["Zoë"])
        #expect(archive.answers.map(\.points) == [1_000])
        #expect(archive.settings == RoomSettings(questionSeconds: 25, lateJoin: false), "settings the old file lacks take their defaults")
        try await appendAndWait(store, [.playerLeft(player: "p1", at: ServerTime(milliseconds: 800))], room: "111111")
    }

    @Test func aNewerDatabaseIsRefusedWithAClearMessage() async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let future = try SQLiteDatabase(path: path)
            try Migrations.migrate(future, now: 1)
            try future.execute("INSERT INTO schema_migrations VALUES (99, 1)")
        }
        #expect(performing: { _ = try SQLiteRoomStore(path: path) }, throws: { error in
            String(describing: error).contains("newer than this StoryCircle")
        })
    }

    @Test func roomsPastTheRetentionPeriodArePurgedWithEverythingInThem() async throws {
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        try await store.createRoom(Self.header("100001", createdAt: 1_000))
        try await store.createRoom(Self.header("100002", createdAt: 9_000))
        try await appendAndWait(store, Self.records, room: "100001")
        try await appendAndWait(store, Self.records, room: "100002")
        #expect(try await store.purge(createdBefore: ServerTime(milliseconds: 5_000)) == 1)
        #expect(try await store.archive(room: "100001") == nil)
        #expect(try await store.codeExists("100002"))
        let database = try SQLiteDatabase(path: path)
        #expect(try database.integer("SELECT count(*) FROM players WHERE room_code = '100001'") == 0)
        #expect(try database.integer("SELECT count(*) FROM answers WHERE room_code = '100001'") == 0)
        #expect(try database.integer("SELECT count(*) FROM transitions WHERE room_code = '100001'") == 0)
        #expect(try database.integer("SELECT count(*) FROM answers WHERE room_code = '100002'") == 1)
    }

    @Test func appendsQueuedWhileTheWriterIsBusyAreCommittedTogether() async throws {
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        for room in 0..<10 { try await store.createRoom(Self.header("20000\(room)")) }
        // Hold the writer at a gate: completions run on the writer thread, so while this one waits the
        // writer takes nothing, and every append below is queued before its next batch. How the appends
        // group then depends on the store alone, not on how the threads happen to be scheduled.
        let gate = DispatchSemaphore(value: 0)
        await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
            store.runOnWriter("SELECT 1") { _ in
                held.resume()
                gate.wait()
            }
        }
        let (commitsBefore, batchesBefore) = (store.commitCount, store.batchesTaken)
        let answers = 2_000
        let durable = Atomic<Int>(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.concurrentPerform(iterations: answers) { i in
                let record = RoomRecord.answer(AnswerRecord(player: "p\(i)", question: 0, option: 0, receivedAt: ServerTime(milliseconds: Int64(i)), elapsedMs: i, correct: true, points: 1_000))
                store.append(record, room: "20000\(i % 10)") { error in
                    precondition(error == nil, "\(error!)")
                    if durable.add(1, ordering: .relaxed).newValue == answers { done.resume() }
                }
            }
            // `append` queues before it returns: all of them are waiting now.
            gate.signal()
        }
        #expect(store.batchesTaken - batchesBefore == 1)
        #expect(store.commitCount - commitsBefore == 1, "\(answers) answers queued together took \(store.commitCount - commitsBefore) commits")
        var total = 0
        for room in 0..<10 { total += try await store.archive(room: "20000\(room)")?.answers.count ?? 0 }
        #expect(total == answers)
    }

    @Test func aStoredStoryThatNoLongerLoadsIsReportedAsSuchNotAsASQLiteFailure() async throws {
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        try await store.createRoom(Self.header("123456"))
        // What a tightened validation rule would do to a story saved by an older version.
        let editor = try SQLiteDatabase(path: path)
        try editor.execute("UPDATE rooms SET story = '{\"title\": \"\", \"text\": \"\"}' WHERE code = '123456'")
        await #expect(performing: { _ = try await store.archive(room: "123456") }, throws: { error in
            guard let unloadable = error as? UnloadableStory else { return false }
            return unloadable.room == "123456" && !unloadable.problems.isEmpty
                && String(describing: unloadable).hasPrefix("the stored story of room 123456 no longer loads: ")
        })
    }

    @Test func aReadOnlyConnectionCannotWrite() async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try SQLiteDatabase(path: path).execute("CREATE TABLE t (x INTEGER)")
        let reader = try SQLiteDatabase(path: path, readOnly: true)
        #expect(reader.isReadOnly)
        #expect(performing: { try reader.execute("INSERT INTO t VALUES (1)") }, throws: { error in
            (error as? SQLiteError)?.primaryCode == 8 // SQLITE_READONLY (the tests import no C)
        })
    }

    @Test func closingWritesWhatIsQueuedAndRefusesWhatComesAfter() async throws {
        let store = try SQLiteRoomStore(path: path)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await store.createRoom(Self.header("123456"))
        for record in Self.records { store.append(record, room: "123456") { _ in } }
        await store.close()
        let refused = Locked<(any Error)?>(nil)
        store.append(Self.records[0], room: "123456") { error in refused.withLock { $0 = error } }
        #expect(refused.withLock { $0 } != nil)
        let reopened = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(reopened) }
        #expect(try await reopened.archive(room: "123456")?.answers.count == 1)
    }
}
