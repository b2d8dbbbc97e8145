import StoryCircleCore

/// Ownership in PostgreSQL: the `owner_id` and `school_id` columns of classes, rooms, stories and pictures
/// (migration 9). Changes use the library's connection, each one transaction, and are not tried again on a
/// lost connection (like the library's: the caller is told the store was unavailable).
extension PostgresRoomStore: OwnershipBook {
    public func adoptUnowned(by owner: Owner) async throws -> AdoptedCounts {
        try await libraryChange("owner") { connection in
            func adopt(_ table: String) throws -> Int {
                try connection.query(
                    "WITH adopted AS (UPDATE \(table) SET owner_id = $1::text, school_id = $2::text WHERE owner_id IS NULL RETURNING 1) SELECT count(*) FROM adopted",
                    [.text(owner.accountID), .optional(owner.schoolID)]
                ).int(0, 0)
            }
            // The classes first, then their name keys: a class being renamed meanwhile holds its row (then
            // its keys), so taking them in the same order waits for it instead of deadlocking, and finds the
            // keys it wrote. Unowned classes' names were unique among all classes, so none meets one of the
            // new owner's.
            let classes = try adopt("classes")
            try connection.query(
                "UPDATE class_name_keys k SET scope = $1::text FROM classes c WHERE c.id = k.class_id AND c.owner_id = $1::text AND k.scope = ''",
                [.text(owner.accountID)]
            )
            return AdoptedCounts(classes: classes, rooms: try adopt("rooms"), stories: try adopt("stories"), pictures: try adopt("pictures"))
        }
    }

    public func setStoryShared(_ id: String, _ shared: Bool) async throws -> StoryEntry {
        try await libraryChange("owner") { connection in
            let rows = try connection.query("UPDATE stories SET shared = $2::boolean WHERE id = $1::text RETURNING 1", [.text(id), .bool(shared)])
            guard rows.count == 1, let stored = try Self.loadStory(id, from: connection) else { throw StoryLibraryError.notFound(id: id) }
            return stored.entry
        }
    }

    public func pictureOwner(_ id: String) async throws -> Owner?? {
        try await read { connection in
            let rows = try connection.query("SELECT owner_id, school_id FROM pictures WHERE id = $1::text", [.text(id)])
            return rows.count == 1 ? .some(Self.owner(rows, 0, 0)) : nil
        }
    }

    public func roomOwner(_ code: String) async throws -> Owner?? {
        try await read { connection in
            let rows = try connection.query("SELECT owner_id, school_id FROM rooms WHERE code = $1::text", [.text(code)])
            return rows.count == 1 ? .some(Self.owner(rows, 0, 0)) : nil
        }
    }

    // MARK: - Helpers

    /// The owner in columns `column` (owner_id) and `column + 1` (school_id) of `row`.
    static func owner(_ rows: PostgresRows, _ row: Int, _ column: Int) -> Owner? {
        rows.isNull(row, column) ? nil : Owner(accountID: rows.text(row, column), schoolID: rows.isNull(row, column + 1) ? nil : rows.text(row, column + 1))
    }

}

extension PostgresValue {
    static func optional(_ value: String?) -> PostgresValue { value.map(PostgresValue.text) ?? .null }
}
