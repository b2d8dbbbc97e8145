import Foundation
import StoryCircleCore

/// The classes in PostgreSQL, shared by every node. Reads use the reader connection; changes the library's
/// connection, each one transaction that first locks the class's row, so two teachers saving one version
/// take turns and the second finds the version moved. Two classes given look-alike names at the same
/// moment meet on the lock of their key (`claimName`): one is refused as taken. Like the library's,
/// changes are not tried again on a lost connection.
extension PostgresRoomStore: ClassBook {
    public func listClasses() async throws -> [ClassEntry] {
        try await listClasses(scope: .everything)
    }

    public func listClasses(scope: OwnerScope) async throws -> [ClassEntry] {
        try await read { connection in
            let condition = scope.condition(alias: "c", sharedColumn: false) { "$\($0)::text" }
            let rows = try connection.query("""
                SELECT c.id, c.name, c.version, c.changed_at,
                       (SELECT count(*) FROM class_members m WHERE m.class_id = c.id AND m.removed_at IS NULL), c.owner_id, c.school_id
                FROM classes c \(condition.map { "WHERE " + $0.sql } ?? "") ORDER BY c.name, c.id
                """, (condition?.values ?? []).map(PostgresValue.text))
            return (0..<rows.count).map { row in
                ClassEntry(
                    id: rows.text(row, 0), name: rows.text(row, 1), children: rows.int(row, 4), version: rows.int(row, 2),
                    changedAt: ServerTime(milliseconds: rows.int64(row, 3)), owner: Self.owner(rows, row, 5)
                )
            }
        }
    }

    public func schoolClass(_ id: String) async throws -> SchoolClass? {
        try await read { try Self.loadClass(id, from: $0) }
    }

    public func createClass(_ draft: ClassDraft) async throws -> SchoolClass {
        let now = Self.now()
        return try await libraryChange("class", taken: ClassBookError.nameTaken(name: draft.name), takenOn: "class_name_keys") { connection in
            let id = ClassIDs.makeClass()
            let scope = draft.owner?.accountID ?? ""
            try Self.claimName(draft, for: id, scope: scope, on: connection)
            try connection.query(
                """
                INSERT INTO classes (id, name, version, created_at, changed_at, speed_points, owner_id, school_id)
                VALUES ($1::text, $2::text, 1, $3::bigint, $3::bigint, $4::boolean, $5::text, $6::text)
                """,
                [.text(id), .text(draft.name), .integer(now.milliseconds), .bool(draft.speedPoints ?? false), .optional(draft.owner?.accountID), .optional(draft.owner?.schoolID)]
            )
            try Self.insertKeys(draft, for: id, scope: scope, on: connection)
            try Self.writeMembers(draft, for: id, at: now, on: connection)
            return try Self.loadClass(id, from: connection)!
        }
    }

    public func updateClass(_ id: String, to draft: ClassDraft, basedOn version: Int) async throws -> SchoolClass {
        let now = Self.now()
        return try await libraryChange("class", taken: ClassBookError.nameTaken(name: draft.name), takenOn: "class_name_keys") { connection in
            guard try connection.query("SELECT 1 FROM classes WHERE id = $1::text FOR UPDATE", [.text(id)]).count == 1,
                  let current = try Self.loadClass(id, from: connection)
            else { throw ClassBookError.notFound(id: id) }
            guard current.version == version else { throw ClassBookError.conflict(current: current) }
            let scope = current.owner?.accountID ?? ""
            try Self.claimName(draft, for: id, scope: scope, on: connection)
            try connection.query(
                "UPDATE classes SET name = $1::text, version = version + 1, changed_at = $2::bigint, speed_points = $4::boolean WHERE id = $3::text",
                [.text(draft.name), .integer(now.milliseconds), .text(id), .bool(draft.speedPoints ?? current.speedPoints)]
            )
            try connection.query("DELETE FROM class_name_keys WHERE class_id = $1::text", [.text(id)])
            try Self.insertKeys(draft, for: id, scope: scope, on: connection)
            try Self.writeMembers(draft, for: id, at: now, on: connection)
            return try Self.loadClass(id, from: connection)!
        }
    }

    public func deleteClass(_ id: String) async throws {
        try await libraryChange("class") { connection in
            guard try connection.query("SELECT 1 FROM classes WHERE id = $1::text FOR UPDATE", [.text(id)]).count == 1 else {
                throw ClassBookError.notFound(id: id)
            }
            let rooms = try Self.liveRooms(of: id, on: connection)
            guard rooms.isEmpty else { throw ClassBookError.inUse(id: id, rooms: rooms) }
            // The class's rooms (all finished) go with it, with their players, answers and events: without
            // the class nobody could erase a child's data from them any more.
            try connection.query("UPDATE players SET member_id = NULL WHERE member_id IN (SELECT id FROM class_members WHERE class_id = $1::text)", [.text(id)])
            try connection.query("DELETE FROM rooms WHERE class_id = $1::text", [.text(id)])
            try connection.query("DELETE FROM classes WHERE id = $1::text", [.text(id)])
        }
    }

    public func eraseMember(_ member: String, ofClass id: String) async throws {
        try await libraryChange("class") { connection in
            guard try connection.query("SELECT 1 FROM classes WHERE id = $1::text FOR UPDATE", [.text(id)]).count == 1 else {
                throw ClassBookError.notFound(id: id)
            }
            let belongs = try connection.query("SELECT 1 FROM class_members WHERE id = $1::text AND class_id = $2::text", [.text(member), .text(id)]).count == 1
            let played = try connection.query(
                "SELECT 1 FROM players p JOIN rooms r ON r.code = p.room_code WHERE p.member_id = $1::text AND r.class_id = $2::text LIMIT 1",
                [.text(member), .text(id)]
            ).count == 1
            guard belongs || played else { throw ClassBookError.memberNotFound(id: member) }
            let rooms = try Self.liveRooms(of: id, on: connection)
            guard rooms.isEmpty else { throw ClassBookError.inUse(id: id, rooms: rooms) }
            let inRooms = "SELECT room_code, id FROM players WHERE member_id = $1::text"
            try connection.query("DELETE FROM answers WHERE (room_code, player_id) IN (\(inRooms))", [.text(member)])
            try connection.query("DELETE FROM released_tokens WHERE (room_code, player_id) IN (\(inRooms))", [.text(member)])
            try connection.query("DELETE FROM players WHERE member_id = $1::text", [.text(member)])
            try connection.query("DELETE FROM class_members WHERE id = $1::text", [.text(member)])
            // A change of the class like any other: a node holding its rooms sees the version move.
            try connection.query("UPDATE classes SET version = version + 1, changed_at = $1::bigint WHERE id = $2::text", [.integer(Self.now().milliseconds), .text(id)])
        }
    }

    public func classRooms(_ id: String) async throws -> [RoomArchive] {
        try await read { try Self.loadArchives(.ofClass(id), from: $0).reversed() }
    }

    // MARK: - Helpers

    private static func liveRooms(of id: String, on connection: PostgresConnection) throws -> [String] {
        let rows = try connection.query("SELECT code FROM rooms WHERE class_id = $1::text AND phase <> 'finished' ORDER BY created_at, code", [.text(id)])
        return (0..<rows.count).map { rows.text($0, 0) }
    }

    /// Throws `.nameTaken` when another class has a name sharing a key with the draft's and is its owner's
    /// (`scope`, the owner's account id) or unowned; an unowned class's (scope '') name meets every class's.
    /// Each key is first locked for the transaction (in order, so two claims never wait for each other in a
    /// circle): an owned and an unowned class given one name on two nodes at once meet on no primary key.
    static func claimName(_ draft: ClassDraft, for id: String, scope: String, on connection: PostgresConnection) throws {
        for key in Set(draft.nameKeys).sorted() {
            try connection.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.storycircle.class_name.' || $1::text))", [.text(key)])
        }
        for key in draft.nameKeys {
            let found = try connection.query(
                "SELECT 1 FROM class_name_keys WHERE key = $1::text AND class_id <> $2::text AND ($3::text = '' OR scope IN ($3::text, ''))",
                [.text(key), .text(id), .text(scope)]
            )
            if found.count > 0 { throw ClassBookError.nameTaken(name: draft.name) }
        }
    }

    static func insertKeys(_ draft: ClassDraft, for id: String, scope: String, on connection: PostgresConnection) throws {
        for key in Set(draft.nameKeys) {
            try connection.query("INSERT INTO class_name_keys (scope, key, class_id) VALUES ($1::text, $2::text, $3::text)", [.text(scope), .text(key), .text(id)])
        }
    }

    /// As SQLite's `writeMembers`: ids the class does not have are refused unless `drawn` for new members.
    static func writeMembers(_ draft: ClassDraft, for id: String, at now: ServerTime, drawn: Bool = false, on connection: PostgresConnection) throws {
        var kept: Set<String> = []
        for (position, child) in draft.children.enumerated() {
            let member = child.id ?? ClassIDs.makeMember()
            var stored = false
            if child.id != nil {
                let updated = try connection.query("""
                    UPDATE class_members SET name = $1::text, avatar = $2::text, position = $3::integer, removed_at = NULL
                    WHERE id = $4::text AND class_id = $5::text RETURNING 1
                    """, [.text(child.name), .text(child.avatar), .int(position), .text(member), .text(id)])
                stored = updated.count == 1
                if !stored, try !drawn || connection.query("SELECT 1 FROM class_members WHERE id = $1::text", [.text(member)]).count != 0 {
                    throw ClassBookError.memberNotFound(id: member)
                }
            }
            if !stored {
                try connection.query(
                    "INSERT INTO class_members (id, class_id, name, avatar, position) VALUES ($1::text, $2::text, $3::text, $4::text, $5::integer)",
                    [.text(member), .text(id), .text(child.name), .text(child.avatar), .int(position)]
                )
            }
            kept.insert(member)
        }
        let present = try connection.query("SELECT id FROM class_members WHERE class_id = $1::text AND removed_at IS NULL", [.text(id)])
        for row in 0..<present.count where !kept.contains(present.text(row, 0)) {
            try connection.query("UPDATE class_members SET removed_at = $1::bigint WHERE id = $2::text", [.integer(now.milliseconds), .text(present.text(row, 0))])
        }
    }

    static func loadClass(_ id: String, from connection: PostgresConnection) throws -> SchoolClass? {
        let row = try connection.query("SELECT name, version, changed_at, speed_points, owner_id, school_id FROM classes WHERE id = $1::text", [.text(id)])
        guard row.count == 1 else { return nil }
        let members = try connection.query(
            "SELECT id, name, avatar FROM class_members WHERE class_id = $1::text AND removed_at IS NULL ORDER BY position, id", [.text(id)]
        )
        return SchoolClass(
            id: id, name: row.text(0, 0), version: row.int(0, 1), changedAt: ServerTime(milliseconds: row.int64(0, 2)),
            members: (0..<members.count).map { ClassMember(id: members.text($0, 0), name: members.text($0, 1), avatar: members.text($0, 2)) },
            speedPoints: row.bool(0, 3), owner: owner(row, 0, 4)
        )
    }
}
