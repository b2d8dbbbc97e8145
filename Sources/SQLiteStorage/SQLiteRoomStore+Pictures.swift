import StoryCircleCore

/// Pictures in SQLite. A picture is written on the writer connection in a turn of its own (between two
/// batches, in its own transaction), as SQLite has one writer: a second writing connection would make
/// the room writer meet a locked database. Reads use the reader connection.
extension SQLiteRoomStore: PictureStore {
    public func storePicture(_ picture: StoredPicture) async throws {
        try await writer.turn(as: SQLiteCommitter.self) { committer in
            let database = committer.database
            do {
                try database.execute("BEGIN IMMEDIATE")
                try database.prepare("""
                    INSERT OR IGNORE INTO pictures (id, mime_type, width, height, bytes, phone_mime_type, phone_width, phone_height, phone_bytes, created_at, owner_id, school_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).run(
                    .text(picture.id), .text(picture.large.mimeType), .int(picture.large.width), .int(picture.large.height), .blob(picture.large.bytes),
                    picture.phone.map { .text($0.mimeType) } ?? .null, .optional(picture.phone?.width), .optional(picture.phone?.height),
                    picture.phone.map { .blob($0.bytes) } ?? .null, .integer(picture.createdAt.milliseconds),
                    .optional(picture.owner?.accountID), .optional(picture.owner?.schoolID)
                )
                try database.execute("COMMIT")
            } catch {
                database.rollback()
                throw StoreFailure(.unavailable, record: "picture", reason: (error as? SQLiteError)?.reason ?? String(describing: error))
            }
        }
    }

    public func picture(id: String, size: PictureSize) async throws -> PictureRendition? {
        try await read { database in
            let statement = try database.prepare(size == .phone
                ? "SELECT coalesce(phone_mime_type, mime_type), coalesce(phone_width, width), coalesce(phone_height, height), coalesce(phone_bytes, bytes) FROM pictures WHERE id = ?"
                : "SELECT mime_type, width, height, bytes FROM pictures WHERE id = ?")
            try statement.bind([.text(id)])
            guard try statement.step() else { return nil }
            return PictureRendition(mimeType: statement.text(0), width: statement.int(1), height: statement.int(2), bytes: statement.blob(3))
        }
    }

    public func storedPictureIDs(among ids: [String]) async throws -> Set<String> {
        try await read { database in
            let statement = try database.prepare("SELECT 1 FROM pictures WHERE id = ?")
            var found: Set<String> = []
            for id in Set(ids) {
                try statement.bind([.text(id)])
                if try statement.step() { found.insert(id) }
            }
            return found
        }
    }
}
