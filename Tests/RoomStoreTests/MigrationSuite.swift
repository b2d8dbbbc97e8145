import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// A database in use at an older step comes to the newest with every row it had, on every backend; and a
/// step recorded as missing below the newest is applied, whatever came after it.
@Suite("Schema migrations, every backend")
struct MigrationSuite {
    static let story = StoryLibrarySuite.story("Kept")

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// Rows as StoryCircle wrote them at step 8: a class with a member and its name key, a room of the
    /// class with a player and an answer, a story in the library the room was started from.
    static func insertStep8Rows(_ old: OldDatabase) throws {
        let document = quoted(String(decoding: try JSONEncoder().encode(story.jsonValue()), as: UTF8.self))
        let settings = quoted(String(decoding: try JSONEncoder().encode(RoomSettings(questionSeconds: 25, lateJoin: false)), as: UTF8.self))
        try old.execute("INSERT INTO classes (id, name, version, created_at, changed_at, speed_points) VALUES ('cls_kept', '3C', 4, 10, 20, TRUE)")
        try old.execute("INSERT INTO class_name_keys (key, class_id) VALUES ('3c', 'cls_kept')")
        try old.execute("INSERT INTO class_members (id, class_id, name, avatar, position) VALUES ('mem_zoe', 'cls_kept', 'Zoë', 'owl', 0)")
        try old.execute("""
            INSERT INTO stories (id, title, voice, questions, sentences, document, version, created_at, updated_at, updated_by)
            VALUES ('sto_kept', 'Kept', 'en', 1, 2, \(document), 2, 30, 40, 'admin')
            """)
        try old.execute("""
            INSERT INTO rooms (code, title, story, settings, teacher_token_hash, dashboard_token_hash, locked, phase, created_at, story_id, class_id)
            VALUES ('111111', 'Kept', \(document), \(settings), 'h1', 'h2', FALSE, 'finished', 500, 'sto_kept', 'cls_kept')
            """)
        try old.execute("INSERT INTO players (room_code, id, nickname, token_hash, joined_at, member_id) VALUES ('111111', 'p1', 'Zoë', 'th', 600, 'mem_zoe')")
        try old.execute("INSERT INTO answers (room_code, player_id, question, option, received_at, elapsed_ms, correct, points) VALUES ('111111', 'p1', 0, 2, 700, 200, TRUE, 900)")
    }

    /// What `insertStep8Rows` wrote, read through the store at the newest step.
    static func expectStep8Rows(_ store: any RoomLeases) async throws {
        let book = try #require(store.offers.classes)
        let kept = try #require(try await book.schoolClass("cls_kept"))
        #expect(kept.name == "3C" && kept.version == 4 && kept.speedPoints && kept.owner == nil)
        #expect(kept.members == [ClassMember(id: "mem_zoe", name: "Zoë", avatar: "owl")])
        let story = try #require(try await store.offers.library?.story("sto_kept"))
        #expect(story.story == Self.story)
        #expect(story.entry.version == 2 && story.entry.owner == nil && !story.entry.shared)
        let room = try #require(try await store.archive(room: "111111"))
        #expect(room.header.classID == "cls_kept" && room.header.storyID == "sto_kept" && room.header.owner == nil)
        #expect(room.players.map(\.nickname) == ["Zoë"])
        #expect(room.players.first?.member == MemberID("mem_zoe"))
        #expect(room.answers.map(\.points) == [900])
        // Its name key came along: the name is still taken, and the class still changes.
        await #expect(throws: ClassBookError.nameTaken(name: "3c")) {
            try await book.createClass(ClassDraft(name: "3c", nameKeys: ["3c"], children: []))
        }
        _ = try await book.updateClass("cls_kept", to: ClassDraft(name: "3C", nameKeys: ["3c"], children: [ClassDraft.Child(id: "mem_zoe", name: "Zoë", avatar: "fox")]), basedOn: 4)
    }

    @Test(arguments: Backend.all)
    func aDatabaseInUseAtStep8ComesToTheNewestWithItsRows(_ backend: Backend) async throws {
        let old = try OldDatabase(backend, at: 8)
        defer { old.remove() }
        try Self.insertStep8Rows(old)
        let store = try old.open()
        defer { closeAfterTest(store) }
        #expect(try await Self.schemaVersion(store) == Self.latest(backend))
        #expect(try old.count("SELECT count(*) FROM schema_migrations") == Self.latest(backend))
        try await Self.expectStep8Rows(store)
    }

    /// Step 9 never recorded though 10 and 11 were (a test taking a database back before it, or a step
    /// added below the newest on a branch): opening applies 9, and the rows stay.
    @Test(arguments: Backend.all)
    func aStepRecordedAsMissingBelowTheNewestIsApplied(_ backend: Backend) async throws {
        let old = try OldDatabase(backend, at: 8)
        defer { old.remove() }
        try Self.insertStep8Rows(old)
        try old.applyStep(10)
        try old.applyStep(11)
        #expect(try old.count("SELECT count(*) FROM schema_migrations WHERE version = 9") == 0)
        let store = try old.open()
        defer { closeAfterTest(store) }
        #expect(try old.count("SELECT count(*) FROM schema_migrations WHERE version = 9") == 1)
        #expect(try old.count("SELECT count(*) FROM schema_migrations") == Self.latest(backend))
        #expect(try old.count("SELECT count(*) FROM classes WHERE owner_id IS NULL") == 1, "step 9's columns are there")
        try await Self.expectStep8Rows(store)
    }

    static func latest(_ backend: Backend) -> Int {
        switch backend {
        case .sqlite: Migrations.latest
        case .postgres: PostgresMigrations.latest
        }
    }

    static func schemaVersion(_ store: any RoomStore) async throws -> Int {
        switch store {
        case let sqlite as SQLiteRoomStore: try await sqlite.schemaVersion()
        case let postgres as PostgresRoomStore: try await postgres.schemaVersion()
        default: 0
        }
    }
}
