import Foundation
import StoryCircleCore

/// The story library in SQLite. Reads use the reader connection on the store's thread; changes are turns
/// of the writer thread (`GroupCommitWriter.turn`), each its own transaction on the writer connection, so
/// they are ordered with the rooms' writes (a room created from a story and that story's deletion cannot
/// interleave) and durable (`synchronous=FULL`) when they return.
extension SQLiteRoomStore: StoryLibrary {
    static let entryColumns = "id, title, voice, questions, sentences, updated_at, updated_by, version, owner_id, school_id, shared"

    public func listStories(matching: String?, after cursor: StoryCursor?, limit: Int, scope: OwnerScope) async throws -> StoryPage {
        let limit = min(max(limit, 1), StoryLibraryIDs.maxPage)
        let (sql, values) = Self.storyListQuery(matching: matching, after: cursor, limit: limit, scope: scope)
        return try await read { database in
            let statement = try database.prepare(sql)
            try statement.bind(values)
            var rows: [StoryEntry] = []
            while try statement.step() { rows.append(Self.entry(statement)) }
            return StoryPage(rows: rows, limit: limit)
        }
    }

    /// One page of the list as one query: at most `limit + 1` rows, read in the order of an index
    /// (`stories_by_change`, or an owner's or a school's) from the cursor on, so a page's work does not grow
    /// with the library (StoryLibrarySuite asks SQLite for its plan).
    static func storyListQuery(matching: String?, after cursor: StoryCursor?, limit: Int, scope: OwnerScope) -> (sql: String, values: [SQLiteValue]) {
        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let owned = scope.condition(alias: "", sharedColumn: true, placeholder: { _ in "?" }) {
            conditions.append(owned.sql)
            values += owned.values.map(SQLiteValue.text)
        }
        if let matching, !matching.isEmpty {
            conditions.append("title LIKE ? ESCAPE '\\'")
            values.append(.text(StoryLibraryIDs.likePattern(matching)))
        }
        if let cursor {
            // A row value, which SQLite seeks in the index; the same test written with OR scans from the start.
            conditions.append("(updated_at, id) < (?, ?)")
            values += [.integer(cursor.updatedAt.milliseconds), .text(cursor.id)]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return ("SELECT \(Self.entryColumns) FROM stories \(filter) ORDER BY updated_at DESC, id DESC LIMIT \(limit + 1)", values)
    }

    public func story(_ id: String) async throws -> StoredStory? {
        try await read { try Self.loadStory(id, from: $0) }
    }

    public func createStory(_ story: Story, by author: String, owner: Owner?) async throws -> StoredStory {
        let stored = StoredStory(id: StoryLibraryIDs.make(), story: story, version: 1, updatedAt: Self.now(), updatedBy: author, owner: owner)
        try await writerChange("story") { database in
            try Self.insert(stored, into: database)
            return stored
        }
        return stored
    }

    public func updateStory(_ id: String, to story: Story, basedOn version: Int, by author: String) async throws -> StoredStory {
        let updated = StoredStory(id: id, story: story, version: version + 1, updatedAt: Self.now(), updatedBy: author)
        return try await writerChange("story") { database in
            try database.prepare("""
                UPDATE stories SET title = ?, voice = ?, questions = ?, sentences = ?, document = ?, version = version + 1,
                    updated_at = ?, updated_by = ?
                WHERE id = ? AND version = ?
                """).run(
                .text(story.title), .text(story.narration.voice), .int(story.quiz.questions.count), .int(story.sentences.count),
                .text(updated.documentText), .integer(updated.entry.updatedAt.milliseconds), .text(author), .text(id), .int(version)
            )
            // The story keeps its owner and sharing, which the caller's copy does not carry.
            if database.changes == 1 { return try Self.loadStory(id, from: database) ?? updated }
            guard let current = try Self.loadStory(id, from: database) else { throw StoryLibraryError.notFound(id: id) }
            throw StoryLibraryError.conflict(current: current)
        }
    }

    public func deleteStory(_ id: String) async throws {
        try await writerChange("story") { database in
            let rooms = try database.prepare("SELECT code FROM rooms WHERE story_id = ? AND phase <> 'finished' ORDER BY created_at")
            try rooms.bind([.text(id)])
            var codes: [String] = []
            while try rooms.step() { codes.append(rooms.text(0)) }
            guard codes.isEmpty else { throw StoryLibraryError.inUse(id: id, rooms: codes) }
            try database.prepare("DELETE FROM stories WHERE id = ?").run(.text(id))
            guard database.changes == 1 else { throw StoryLibraryError.notFound(id: id) }
        }
    }

    public func seedStories(_ seeds: [StorySeed]) async throws -> Int {
        guard !seeds.isEmpty else { return 0 }
        let now = Self.now()
        return try await writerChange("story") { database in
            var added = 0
            for seed in seeds {
                try database.prepare("INSERT OR IGNORE INTO story_seeds (key, seeded_at) VALUES (?, ?)").run(.text(seed.key), .integer(now.milliseconds))
                guard database.changes == 1 else { continue }
                try Self.insert(StoredStory(id: StoryLibraryIDs.make(), story: seed.story, version: 1, updatedAt: now, updatedBy: "sample"), into: database)
                added += 1
            }
            return added
        }
    }

    // MARK: - Helpers

    private static func insert(_ stored: StoredStory, into database: SQLiteDatabase) throws {
        let entry = stored.entry
        try database.prepare("""
            INSERT INTO stories (id, title, voice, questions, sentences, document, version, created_at, updated_at, updated_by, owner_id, school_id, shared)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run(
            .text(entry.id), .text(entry.title), .text(entry.voice), .int(entry.questions), .int(entry.sentences), .text(stored.documentText),
            .int(entry.version), .integer(entry.updatedAt.milliseconds), .integer(entry.updatedAt.milliseconds), .text(entry.updatedBy),
            .optional(entry.owner?.accountID), .optional(entry.owner?.schoolID), .bool(entry.shared)
        )
    }

    static func loadStory(_ id: String, from database: SQLiteDatabase) throws -> StoredStory? {
        let statement = try database.prepare("SELECT \(entryColumns), document FROM stories WHERE id = ?")
        try statement.bind([.text(id)])
        guard try statement.step() else { return nil }
        let loaded = Story.load(json: Data(statement.text(11).utf8))
        guard let story = loaded.value else {
            throw StoreFailure(.rejected, record: "story", reason: "the stored story \(id) no longer loads: \(loaded.errors.map(\.description).joined(separator: "; "))")
        }
        return StoredStory(entry: entry(statement), story: story)
    }

    static func entry(_ statement: SQLiteStatement) -> StoryEntry {
        StoryEntry(
            id: statement.text(0), title: statement.text(1), voice: statement.text(2), questions: statement.int(3), sentences: statement.int(4),
            updatedAt: ServerTime(milliseconds: statement.int64(5)), updatedBy: statement.text(6), version: statement.int(7),
            owner: owner(statement, 8), shared: statement.int(10) != 0
        )
    }

    static func now() -> ServerTime {
        ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
    }
}
