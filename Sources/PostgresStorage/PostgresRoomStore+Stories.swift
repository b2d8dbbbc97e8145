import Foundation
import StoryCircleCore

/// The story library in PostgreSQL, shared by every node. Reads use the reader connection; changes have
/// a connection of their own (`libraryConnection`), on the store's threads, each change one transaction.
///
/// Two editors saving the same version: both `UPDATE … WHERE version = $based`; the second waits for the
/// first's row lock, then finds the version moved and changes nothing, so exactly one wins and the other
/// is answered with the current story. Changes are not tried again on a lost connection: a create or an
/// update whose COMMIT went out may have happened, and trying again would make a second story or a
/// conflict with itself; the caller is told the store was unavailable and the list shows what is true.
extension PostgresRoomStore: StoryLibrary {
    static let entryColumns = "id, title, voice, questions, sentences, updated_at, updated_by, version, owner_id, school_id, shared"

    public func listStories(matching: String?, after cursor: StoryCursor?, limit: Int, scope: OwnerScope) async throws -> StoryPage {
        let limit = min(max(limit, 1), StoryLibraryIDs.maxPage)
        let (sql, values) = Self.storyListQuery(matching: matching, after: cursor, limit: limit, scope: scope)
        return try await read { connection in
            let rows = try connection.query(sql, values)
            return StoryPage(rows: (0..<rows.count).map { Self.entry(rows, $0) }, limit: limit)
        }
    }

    /// One page of the list as one query: at most `limit + 1` rows, read in the order of an index
    /// (`stories_by_change`, or an owner's or a school's) from the cursor on, so a page's work does not grow
    /// with the library (StoryLibrarySuite asks PostgreSQL for its plan).
    static func storyListQuery(matching: String?, after cursor: StoryCursor?, limit: Int, scope: OwnerScope) -> (sql: String, values: [PostgresValue]) {
        var conditions: [String] = []
        var values: [PostgresValue] = []
        if let owned = scope.condition(alias: "", sharedColumn: true, placeholder: { "$\($0)::text" }) {
            conditions.append(owned.sql)
            values += owned.values.map(PostgresValue.text)
        }
        if let matching, !matching.isEmpty {
            values.append(.text(StoryLibraryIDs.likePattern(matching)))
            conditions.append("title ILIKE $\(values.count)::text ESCAPE '\\'")
        }
        if let cursor {
            values += [.integer(cursor.updatedAt.milliseconds), .text(cursor.id)]
            conditions.append("(updated_at, id) < ($\(values.count - 1)::bigint, $\(values.count)::text)")
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return ("SELECT \(Self.entryColumns) FROM stories \(filter) ORDER BY updated_at DESC, id DESC LIMIT \(limit + 1)", values)
    }

    public func story(_ id: String) async throws -> StoredStory? {
        try await read { try Self.loadStory(id, from: $0) }
    }

    public func createStory(_ story: Story, by author: String, owner: Owner?) async throws -> StoredStory {
        let stored = StoredStory(id: StoryLibraryIDs.make(), story: story, version: 1, updatedAt: Self.now(), updatedBy: author, owner: owner)
        try await libraryChange("story") { connection in try Self.insert(stored, on: connection) }
        return stored
    }

    public func updateStory(_ id: String, to story: Story, basedOn version: Int, by author: String) async throws -> StoredStory {
        let updated = StoredStory(id: id, story: story, version: version + 1, updatedAt: Self.now(), updatedBy: author)
        return try await libraryChange("story") { connection in
            let rows = try connection.query("""
                UPDATE stories SET title = $1::text, voice = $2::text, questions = $3::integer, sentences = $4::integer, document = $5::json,
                    version = version + 1, updated_at = $6::bigint, updated_by = $7::text
                WHERE id = $8::text AND version = $9::integer
                RETURNING version
                """, [
                .text(story.title), .text(story.narration.voice), .int(story.quiz.questions.count), .int(story.sentences.count),
                .text(updated.documentText), .integer(updated.entry.updatedAt.milliseconds), .text(author), .text(id), .int(version),
            ])
            // The story keeps its owner and sharing, which the caller's copy does not carry.
            if rows.count == 1 { return try Self.loadStory(id, from: connection) ?? updated }
            guard let current = try Self.loadStory(id, from: connection) else { throw StoryLibraryError.notFound(id: id) }
            throw StoryLibraryError.conflict(current: current)
        }
    }

    public func deleteStory(_ id: String) async throws {
        try await libraryChange("story") { connection in
            // The row lock first: a second delete or an update waits here, and what follows reads what
            // was committed before it.
            guard try connection.query("SELECT 1 FROM stories WHERE id = $1::text FOR UPDATE", [.text(id)]).count == 1 else {
                throw StoryLibraryError.notFound(id: id)
            }
            let rooms = try connection.query("SELECT code FROM rooms WHERE story_id = $1::text AND phase <> 'finished' ORDER BY created_at, code", [.text(id)])
            guard rooms.count == 0 else { throw StoryLibraryError.inUse(id: id, rooms: (0..<rooms.count).map { rooms.text($0, 0) }) }
            try connection.query("DELETE FROM stories WHERE id = $1::text", [.text(id)])
        }
    }

    public func seedStories(_ seeds: [StorySeed]) async throws -> Int {
        guard !seeds.isEmpty else { return 0 }
        let now = Self.now()
        return try await libraryChange("story") { connection in
            var added = 0
            for seed in seeds {
                // A node seeding at the same moment waits on the key, then finds it there.
                let claimed = try connection.query(
                    "INSERT INTO story_seeds (key, seeded_at) VALUES ($1::text, $2::bigint) ON CONFLICT (key) DO NOTHING RETURNING 1",
                    [.text(seed.key), .integer(now.milliseconds)]
                )
                guard claimed.count == 1 else { continue }
                try Self.insert(StoredStory(id: StoryLibraryIDs.make(), story: seed.story, version: 1, updatedAt: now, updatedBy: "sample"), on: connection)
                added += 1
            }
            return added
        }
    }

    // MARK: - Helpers

    private static func insert(_ stored: StoredStory, on connection: PostgresConnection) throws {
        let entry = stored.entry
        try connection.query("""
            INSERT INTO stories (id, title, voice, questions, sentences, document, version, created_at, updated_at, updated_by, owner_id, school_id, shared)
            VALUES ($1::text, $2::text, $3::text, $4::integer, $5::integer, $6::json, $7::integer, $8::bigint, $8::bigint, $9::text, $10::text, $11::text, $12::boolean)
            """, [
            .text(entry.id), .text(entry.title), .text(entry.voice), .int(entry.questions), .int(entry.sentences), .text(stored.documentText),
            .int(entry.version), .integer(entry.updatedAt.milliseconds), .text(entry.updatedBy),
            .optional(entry.owner?.accountID), .optional(entry.owner?.schoolID), .bool(entry.shared),
        ])
    }

    static func loadStory(_ id: String, from connection: PostgresConnection) throws -> StoredStory? {
        let rows = try connection.query("SELECT \(entryColumns), document FROM stories WHERE id = $1::text", [.text(id)])
        guard rows.count == 1 else { return nil }
        let loaded = Story.load(json: Data(rows.text(0, 11).utf8))
        guard let story = loaded.value else {
            throw StoreFailure(.rejected, record: "story", reason: "the stored story \(id) no longer loads: \(loaded.errors.map(\.description).joined(separator: "; "))")
        }
        return StoredStory(entry: entry(rows, 0), story: story)
    }

    static func entry(_ rows: PostgresRows, _ row: Int) -> StoryEntry {
        StoryEntry(
            id: rows.text(row, 0), title: rows.text(row, 1), voice: rows.text(row, 2), questions: rows.int(row, 3), sentences: rows.int(row, 4),
            updatedAt: ServerTime(milliseconds: rows.int64(row, 5)), updatedBy: rows.text(row, 6), version: rows.int(row, 7),
            owner: owner(rows, row, 8), shared: rows.bool(row, 10)
        )
    }
}
