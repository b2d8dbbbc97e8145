import Foundation
import Locking
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The stores the suite runs against. PostgreSQL is left out only on explicit request
/// (`STORYCIRCLE_TEST_POSTGRES=skip`); otherwise a missing server fails its cases.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static var all: [Backend] {
        TestPostgres.optedOut ? [.sqlite] : allCases
    }

    var testDescription: String { rawValue }
}

/// A fresh, empty database of one backend and the stores open on it; `close()` removes it all.
final class StoreFixture: @unchecked Sendable {
    let backend: Backend
    /// The first node's store.
    let store: any RoomLeases
    private var others: [any RoomLeases] = []
    private let folder: URL?
    let schema: TestPostgres.Schema?

    init(_ backend: Backend) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-suite-\(UUID().uuidString)")
            self.folder = folder
            schema = nil
            store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
        case .postgres:
            let schema = try TestPostgres.freshSchema()
            self.schema = schema
            folder = nil
            store = try PostgresRoomStore(schema.settings)
        }
    }

    var sqlitePath: String? { folder?.appendingPathComponent("rooms.sqlite").path }

    /// Another node's store on the same database. SQLite serves one server per data directory, so its
    /// "other node" is the same store under another node name: the leases are what is shared.
    func anotherNode() throws -> any RoomLeases {
        switch backend {
        case .sqlite:
            return store
        case .postgres:
            let other = try PostgresRoomStore(schema!.settings)
            others.append(other)
            return other
        }
    }

    /// A new store on the same database (after closing the first, for SQLite).
    func reopen() throws -> any RoomLeases {
        let reopened: any RoomLeases = switch backend {
        case .sqlite: try SQLiteRoomStore(path: sqlitePath!)
        case .postgres: try PostgresRoomStore(schema!.settings)
        }
        others.append(reopened)
        return reopened
    }

    var commitCount: Int {
        switch store {
        case let sqlite as SQLiteRoomStore: sqlite.commitCount
        case let postgres as PostgresRoomStore: postgres.commitCount
        default: 0
        }
    }

    func schemaVersion(_ store: any RoomStore) async throws -> Int {
        switch store {
        case let sqlite as SQLiteRoomStore: try await sqlite.schemaVersion()
        case let postgres as PostgresRoomStore: try await postgres.schemaVersion()
        default: 0
        }
    }

    var latestSchemaVersion: Int {
        switch backend {
        case .sqlite: Migrations.latest
        case .postgres: PostgresMigrations.latest
        }
    }

    /// Pretends a newer StoryCircle migrated the database.
    func recordNewerSchema() throws {
        switch backend {
        case .sqlite: try SQLiteDatabase(path: sqlitePath!).execute("INSERT INTO schema_migrations VALUES (99, 1)")
        case .postgres: try schema!.admin().query("INSERT INTO schema_migrations VALUES (99, 1)")
        }
    }

    /// Rows of `table` kept for `room`, counted behind the store's back.
    func rows(in table: String, room: String) throws -> Int {
        precondition(["players", "answers", "transitions", "released_tokens"].contains(table))
        switch backend {
        case .sqlite:
            return Int(try SQLiteDatabase(path: sqlitePath!).integer("SELECT count(*) FROM \(table) WHERE room_code = ?", .text(room)) ?? 0)
        case .postgres:
            return try schema!.admin().query("SELECT count(*) FROM \(table) WHERE room_code = $1::text", [.text(room)]).int(0, 0)
        }
    }

    /// Everything the database keeps, as bytes: SQLite's files; every row of every table in PostgreSQL.
    func storedBytes() throws -> Data {
        switch backend {
        case .sqlite:
            var bytes = Data()
            for file in try FileManager.default.contentsOfDirectory(atPath: folder!.path) {
                bytes += FileManager.default.contents(atPath: folder!.appendingPathComponent(file).path) ?? Data()
            }
            return bytes
        case .postgres:
            let admin = try schema!.admin()
            let tables = try admin.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1::text", [.text(schema!.name)])
            var text = ""
            for row in 0..<tables.count {
                let rows = try admin.query("SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM \"\(tables.text(row, 0))\" t")
                text += rows.text(0, 0) + "\n"
            }
            return Data(text.utf8)
        }
    }

    func close() {
        closeAfterTest(store)
        others.forEach { closeAfterTest($0) }
        if let folder { try? FileManager.default.removeItem(at: folder) }
        schema?.drop()
    }
}

/// Closes `store` in the background: for `defer`, which cannot await. What a test wrote it has awaited
/// already; this only ends the store's threads.
func closeAfterTest(_ store: any RoomStore) {
    Task { await store.close() }
}

/// Appends `records` one after another, each waiting for its completion; throws the first failure.
/// `resuming` goes with the first.
func appendAndWait(_ store: any RoomStore, _ records: [RoomRecord], room: String, resuming: Bool = false) async throws {
    for (index, record) in records.enumerated() {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            store.append(record, room: room, resuming: resuming && index == 0) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }
}

/// Appends `record` under `lease` and returns what its completion said.
func appendOutcome(_ store: any RoomLeases, _ record: RoomRecord, under lease: RoomLease) async -> (any Error)? {
    await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
        store.append(record, under: lease) { continuation.resume(returning: $0) }
    }
}

/// Appends every record at once (so they share batches) and returns each one's outcome, in order.
func appendAll(_ store: any RoomStore, _ records: [(RoomRecord, room: String)]) async -> [(any Error)?] {
    let outcomes = Locked<[Int: (any Error)?]>([:])
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        for (index, (record, room)) in records.enumerated() {
            store.append(record, room: room) { error in
                let count = outcomes.withLock { $0[index] = .some(error); return $0.count }
                if count == records.count { done.resume() }
            }
        }
    }
    return outcomes.withLock { outcomes in records.indices.map { outcomes[$0] ?? nil } }
}

enum Sample {
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

    static func answer(_ player: PlayerID, option: Int = 1, at: Int64 = 4_500) -> RoomRecord {
        .answer(AnswerRecord(player: player, question: 0, option: option, receivedAt: ServerTime(milliseconds: at), elapsedMs: 480, correct: option == 1, points: option == 1 ? 1_000 : 0))
    }

    static func expected(_ code: String, _ records: [RoomRecord] = records) -> RoomArchive {
        var archive = RoomArchive(header: header(code))
        records.forEach { archive.apply($0) }
        return archive
    }
}
