import Foundation
import Locking
import Testing
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The store under failures: a full disk, a record a constraint refuses, a transaction SQLite rolls back
/// by itself. Nothing it reports durable may be missing, and nothing may be stored out of a room's order.
@Suite("SQLite room store under failures")
struct SQLiteFaultTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-faults-\(UUID().uuidString)")
    var path: String { folder.appendingPathComponent("rooms.sqlite").path }

    static func answer(_ player: PlayerID, question: Int = 0, option: Int = 1) -> RoomRecord {
        .answer(AnswerRecord(player: player, question: question, option: option, receivedAt: ServerTime(milliseconds: 5_000), elapsedMs: 400, correct: true, points: 1_000))
    }

    static let reveal = RoomRecord.phase(PhaseRecord(phase: .reveal, question: 0, at: ServerTime(milliseconds: 9_000)))

    /// Appends `records` so that the writer takes them as one batch: it is kept busy (a lock held on the
    /// database from another connection) while they are queued. Returns each one's outcome, in order.
    private func appendAsOneBatch(_ store: SQLiteRoomStore, _ records: [(room: String, record: RoomRecord, resuming: Bool)]) async throws -> [StoreFailure?] {
        let blocker = try SQLiteDatabase(path: path)
        try blocker.execute("BEGIN IMMEDIATE")
        let outcomes = Locked<[Int: StoreFailure?]>([:])
        // The writer takes this probe and waits for the lock; the records queue up behind it meanwhile.
        let taken = store.batchesTaken
        Task { _ = await store.probe() }
        while store.batchesTaken == taken { await Task.yield() }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[StoreFailure?], any Error>) in
            for (index, item) in records.enumerated() {
                store.append(item.record, room: item.room, resuming: item.resuming) { error in
                    let done = outcomes.withLock { outcomes -> [StoreFailure?]? in
                        outcomes.updateValue(error.map { StoreFailure.from($0, record: "?") }, forKey: index)
                        return outcomes.count == records.count ? records.indices.map { outcomes[$0]! } : nil
                    }
                    if let done { continuation.resume(returning: done) }
                }
            }
            do {
                try blocker.execute("COMMIT")
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    private func appendAndWait(_ store: SQLiteRoomStore, _ record: RoomRecord, room: String, resuming: Bool = false) async -> StoreFailure? {
        await withCheckedContinuation { continuation in
            store.append(record, room: room, resuming: resuming) { error in
                continuation.resume(returning: error.map { StoreFailure.from($0, record: "?") })
            }
        }
    }

    private func store(rooms: [String]) async throws -> SQLiteRoomStore {
        let store = try SQLiteRoomStore(path: path)
        for code in rooms { try await store.createRoom(SQLiteRoomStoreTests.header(code)) }
        return store
    }

    @Test func aRecordAConstraintRefusesFailsAloneAndItsRoomWaitsWhileOtherRoomsCommit() async throws {
        let store = try await store(rooms: ["100001", "100002"])
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        #expect(await appendAndWait(store, Self.answer("p1"), room: "100001") == nil)

        let outcomes = try await appendAsOneBatch(store, [
            ("100001", Self.answer("p1"), false),  // the same answer again: the primary key refuses it
            ("100001", Self.reveal, false),  // decided after it: must not be stored without it
            ("100002", Self.answer("p1"), false),
            ("100002", Self.reveal, false),
        ])
        #expect(outcomes[0]?.kind == .rejected)
        #expect(outcomes[0]?.record == "answer")
        #expect(outcomes[0]?.reason.contains("UNIQUE constraint failed: answers") == true, "SQLite's own words: \(String(describing: outcomes[0]))")
        #expect(outcomes[1]?.kind == .unavailable)
        #expect(outcomes[1]?.record == "phase")
        #expect(outcomes[2] == nil && outcomes[3] == nil, "the other room's records are stored: \(outcomes)")
        #expect(store.health == .ok, "a refused record says nothing about the disk")

        #expect(try await store.archive(room: "100001")?.phases.isEmpty == true, "nothing of the first room after the refused record")
        #expect(try await store.archive(room: "100002")?.lastPhase == .reveal)
        // Until the room resumes, its records wait; then they are taken again, in order.
        #expect(await appendAndWait(store, Self.reveal, room: "100001")?.kind == .unavailable)
        #expect(await appendAndWait(store, Self.reveal, room: "100001", resuming: true) == nil)
        #expect(try await store.archive(room: "100001")?.lastPhase == .reveal)
    }

    @Test func aTransactionSQLiteRollsBackItselfIsRunAgainWithoutTheRecordAndNothingRunsOutsideIt() async throws {
        let store = try await store(rooms: ["100001", "100002", "100003"])
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        // RAISE(ROLLBACK) ends the whole transaction, as SQLite does by itself after SQLITE_FULL or an I/O
        // error: were the batch to go on, the statements after it would each commit on their own.
        let schema = try SQLiteDatabase(path: path)
        try schema.execute("CREATE TRIGGER refuse BEFORE INSERT ON answers WHEN NEW.player_id = 'p9' BEGIN SELECT RAISE(ROLLBACK, 'refused by a trigger'); END;")

        let outcomes = try await appendAsOneBatch(store, [
            ("100001", Self.answer("p1"), false),
            ("100002", Self.answer("p9"), false),
            ("100001", Self.reveal, false),
            ("100003", Self.answer("p1"), false),
            ("100003", Self.reveal, false),
        ])
        #expect(outcomes[1]?.kind == .rejected)
        #expect(outcomes[1]?.reason == "refused by a trigger")
        #expect(outcomes.enumerated().filter { $0.offset != 1 }.allSatisfy { $0.element == nil }, "\(outcomes)")
        for room in ["100001", "100003"] {
            let archive = try #require(try await store.archive(room: room))
            #expect(archive.answers.count == 1)
            #expect(archive.phases.count == 1, "stored once, not once outside the transaction and once in it")
        }
        #expect(try schema.integer("SELECT count(*) FROM transitions") == 2)
    }

    @Test func aFullDiskFailsTheWholeBatchStoresNothingAndTheRoomsWaitUntilTheyResume() async throws {
        let store = try await store(rooms: ["100001", "100002"])
        defer { closeAfterTest(store); try? FileManager.default.removeItem(at: folder) }
        #expect(await appendAndWait(store, Self.answer("p0"), room: "100001") == nil)
        let pages = try #require(try SQLiteDatabase(path: path).integer("PRAGMA page_count"))
        try await store.runOnWriter("PRAGMA max_page_count = \(pages)")

        // Enough answers to need a new page: SQLite meets the limit as it would meet a full disk.
        var records: [(room: String, record: RoomRecord, resuming: Bool)] = [("100002", Self.answer("p1"), false)]
        records += (1...400).map { ("100001", Self.answer("p\($0)"), false) }
        let outcomes = try await appendAsOneBatch(store, records)
        #expect(outcomes.allSatisfy { $0?.kind == .unavailable }, "the whole batch fails")
        #expect(outcomes[0]?.reason == "database or disk is full")
        #expect(try await store.archive(room: "100001")?.answers.count == 1, "nothing of the batch is stored")
        #expect(try await store.archive(room: "100002")?.answers.isEmpty == true)
        guard case .failing(_, let reason) = store.health else { Issue.record("the store should say it is failing"); return }
        #expect(reason == "database or disk is full")
        #expect(try await store.purge(createdBefore: ServerTime(milliseconds: 0)) == 0)
        #expect(!store.health.isOK, "a transaction that wrote nothing proves nothing (the sweep's purge made the banner flicker)")

        // Space comes back: a probe finds out, and the rooms go on once they resume, oldest record first.
        try await store.runOnWriter("PRAGMA max_page_count = 1073741823")
        #expect(await store.probe() == .ok)
        #expect(await appendAndWait(store, Self.answer("p1", question: 1), room: "100002")?.reason.hasPrefix("an earlier record of this room was not stored") == true)
        #expect(await appendAndWait(store, Self.answer("p1"), room: "100002", resuming: true) == nil)
        #expect(await appendAndWait(store, Self.answer("p1", question: 1), room: "100002") == nil)
        #expect(try await store.archive(room: "100002")?.answers.map(\.question) == [0, 1])
    }

    @Test func aDatabaseThatCannotBeWrittenIsRefusedAtOpenWithTheSystemsReason() async throws {
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("rooms.sqlite"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(performing: { _ = try SQLiteRoomStore(path: path) }, throws: { error in
            String(describing: error) == "unable to open database file (Is a directory)"
        })
    }
}
