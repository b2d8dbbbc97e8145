import StoryCircleCore

/// Pictures in PostgreSQL, on the store's read connection (a picture is written once per story, and
/// never waits behind, or holds up, the room writer). Bytes travel as bytea in hex, as every parameter
/// here travels as text.
extension PostgresRoomStore: PictureStore {
    public func storePicture(_ picture: StoredPicture) async throws {
        try await read { connection in
            // One statement, committed on its own; storing the same id again (another node, a retry after
            // a lost connection) changes nothing.
            _ = try connection.query("""
                INSERT INTO pictures (id, mime_type, width, height, bytes, phone_mime_type, phone_width, phone_height, phone_bytes, created_at, owner_id, school_id)
                VALUES ($1::text, $2::text, $3::integer, $4::integer, $5::text::bytea, $6::text, $7::integer, $8::integer, $9::text::bytea, $10::bigint, $11::text, $12::text)
                ON CONFLICT (id) DO NOTHING
                """, [
                .text(picture.id), .text(picture.large.mimeType), .int(picture.large.width), .int(picture.large.height), .text(Self.byteaHex(picture.large.bytes)),
                picture.phone.map { .text($0.mimeType) } ?? .null, .optional(picture.phone?.width), .optional(picture.phone?.height),
                picture.phone.map { .text(Self.byteaHex($0.bytes)) } ?? .null, .integer(picture.createdAt.milliseconds),
                .optional(picture.owner?.accountID), .optional(picture.owner?.schoolID),
            ])
            return ()
        }
    }

    public func picture(id: String, size: PictureSize) async throws -> PictureRendition? {
        try await read { connection in
            let rows = try connection.query(size == .phone
                ? "SELECT coalesce(phone_mime_type, mime_type), coalesce(phone_width, width), coalesce(phone_height, height), coalesce(phone_bytes, bytes) FROM pictures WHERE id = $1::text"
                : "SELECT mime_type, width, height, bytes FROM pictures WHERE id = $1::text", [.text(id)])
            guard rows.count == 1 else { return nil }
            return PictureRendition(mimeType: rows.text(0, 0), width: rows.int(0, 1), height: rows.int(0, 2), bytes: try Self.bytes(fromByteaHex: rows.text(0, 3)))
        }
    }

    public func storedPictureIDs(among ids: [String]) async throws -> Set<String> {
        let wanted = Array(Set(ids))
        guard !wanted.isEmpty else { return [] }
        return try await read { connection in
            let rows = try connection.query("SELECT id FROM pictures WHERE id = ANY($1::text[])", [.textArray(wanted)])
            return Set((0..<rows.count).map { rows.text($0, 0) })
        }
    }

    static func byteaHex(_ bytes: [UInt8]) -> String {
        "\\x" + SHA256.hex(bytes)
    }

    /// bytea's text output (`bytea_output = hex`, the default since PostgreSQL 9.0): `\x` and two digits a byte.
    static func bytes(fromByteaHex text: String) throws -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == 0x5C, utf8[1] == 0x78, utf8.count % 2 == 0 else {
            throw StoreFailure(.unavailable, record: "picture", reason: "bytea is not in hex output (set bytea_output = hex)")
        }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case 0x30...0x39: digit - 0x30
            case 0x61...0x66: digit - 0x61 + 10
            case 0x41...0x46: digit - 0x41 + 10
            default: nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else {
                throw StoreFailure(.unavailable, record: "picture", reason: "bytea hex output has a stray character")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
