import StoryCircleCore

/// Ownership in SQLite: the `owner_id` and `school_id` columns of classes, rooms, stories and pictures
/// (migration 9). Changes are turns of the writer thread, each one transaction, like the library's.
extension SQLiteRoomStore: OwnershipBook {
    public func adoptUnowned(by owner: Owner) async throws -> AdoptedCounts {
        try await writerChange("owner") { database in
            var counts = AdoptedCounts()
            // Unowned classes' names were unique among all classes, so none meets one of the new owner's.
            try database.prepare("UPDATE class_name_keys SET scope = ? WHERE scope = ''").run(.text(owner.accountID))
            for table in ["classes", "rooms", "stories", "pictures"] {
                try database.prepare("UPDATE \(table) SET owner_id = ?, school_id = ? WHERE owner_id IS NULL")
                    .run(.text(owner.accountID), .optional(owner.schoolID))
                switch table {
                case "classes": counts.classes = database.changes
                case "rooms": counts.rooms = database.changes
                case "stories": counts.stories = database.changes
                default: counts.pictures = database.changes
                }
            }
            return counts
        }
    }

    public func setStoryShared(_ id: String, _ shared: Bool) async throws -> StoryEntry {
        try await writerChange("owner") { database in
            try database.prepare("UPDATE stories SET shared = ? WHERE id = ?").run(.bool(shared), .text(id))
            guard database.changes == 1, let stored = try Self.loadStory(id, from: database) else { throw StoryLibraryError.notFound(id: id) }
            return stored.entry
        }
    }

    public func pictureOwner(_ id: String) async throws -> Owner?? {
        try await read { try Self.ownerRow("SELECT owner_id, school_id FROM pictures WHERE id = ?", id, in: $0) }
    }

    public func roomOwner(_ code: String) async throws -> Owner?? {
        try await read { try Self.ownerRow("SELECT owner_id, school_id FROM rooms WHERE code = ?", code, in: $0) }
    }

    // MARK: - Helpers

    /// The owner in columns `column` (owner_id) and `column + 1` (school_id) of the current row.
    static func owner(_ statement: SQLiteStatement, _ column: Int32) -> Owner? {
        statement.isNull(column) ? nil : Owner(accountID: statement.text(column), schoolID: statement.isNull(column + 1) ? nil : statement.text(column + 1))
    }

    private static func ownerRow(_ sql: String, _ key: String, in database: SQLiteDatabase) throws -> Owner?? {
        let statement = try database.prepare(sql)
        try statement.bind([.text(key)])
        guard try statement.step() else { return nil }
        return .some(owner(statement, 0))
    }

}

extension SQLiteValue {
    static func optional(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
}
