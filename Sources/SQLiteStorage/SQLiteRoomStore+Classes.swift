import Foundation
import StoryCircleCore

/// The classes in SQLite. Reads use the reader connection; changes are turns of the writer thread, each
/// one transaction, so they are ordered with the rooms' writes: a class erased while a room of it is
/// created cannot interleave with it.
extension SQLiteRoomStore: ClassBook {
    public func listClasses() async throws -> [ClassEntry] {
        try await listClasses(scope: .everything)
    }

    public func listClasses(scope: OwnerScope) async throws -> [ClassEntry] {
        try await read { database in
            let condition = scope.condition(alias: "c", sharedColumn: false) { _ in "?" }
            let statement = try database.prepare("""
                SELECT c.id, c.name, c.version, c.changed_at,
                       (SELECT count(*) FROM class_members m WHERE m.class_id = c.id AND m.removed_at IS NULL), c.owner_id, c.school_id
                FROM classes c \(condition.map { "WHERE " + $0.sql } ?? "") ORDER BY c.name, c.id
                """)
            try statement.bind((condition?.values ?? []).map(SQLiteValue.text))
            var entries: [ClassEntry] = []
            while try statement.step() {
                entries.append(ClassEntry(
                    id: statement.text(0), name: statement.text(1), children: statement.int(4), version: statement.int(2),
                    changedAt: ServerTime(milliseconds: statement.int64(3)), owner: Self.owner(statement, 5)
                ))
            }
            return entries
        }
    }

    public func schoolClass(_ id: String) async throws -> SchoolClass? {
        try await read { try Self.loadClass(id, from: $0) }
    }

    public func createClass(_ draft: ClassDraft) async throws -> SchoolClass {
        let now = Self.now()
        return try await writerChange("class") { database in
            let id = ClassIDs.makeClass()
            let scope = draft.owner?.accountID ?? ""
            try Self.claimName(draft, for: id, scope: scope, in: database)
            try database.prepare("INSERT INTO classes (id, name, version, created_at, changed_at, speed_points, owner_id, school_id) VALUES (?, ?, 1, ?, ?, ?, ?, ?)")
                .run(
                    .text(id), .text(draft.name), .integer(now.milliseconds), .integer(now.milliseconds), .int(draft.speedPoints == true ? 1 : 0),
                    .optional(draft.owner?.accountID), .optional(draft.owner?.schoolID)
                )
            try Self.insertKeys(draft, for: id, scope: scope, in: database)
            try Self.writeMembers(draft, for: id, at: now, in: database)
            return try Self.loadClass(id, from: database)!
        }
    }

    public func updateClass(_ id: String, to draft: ClassDraft, basedOn version: Int) async throws -> SchoolClass {
        let now = Self.now()
        return try await writerChange("class") { database in
            guard let current = try Self.loadClass(id, from: database) else { throw ClassBookError.notFound(id: id) }
            guard current.version == version else { throw ClassBookError.conflict(current: current) }
            let scope = current.owner?.accountID ?? ""
            try Self.claimName(draft, for: id, scope: scope, in: database)
            try database.prepare("UPDATE classes SET name = ?, version = version + 1, changed_at = ?, speed_points = ? WHERE id = ?")
                .run(.text(draft.name), .integer(now.milliseconds), .int((draft.speedPoints ?? current.speedPoints) ? 1 : 0), .text(id))
            try database.prepare("DELETE FROM class_name_keys WHERE class_id = ?").run(.text(id))
            try Self.insertKeys(draft, for: id, scope: scope, in: database)
            try Self.writeMembers(draft, for: id, at: now, in: database)
            return try Self.loadClass(id, from: database)!
        }
    }

    public func deleteClass(_ id: String) async throws {
        try await writerChange("class") { database in
            let rooms = try Self.liveRooms(of: id, in: database)
            guard rooms.isEmpty else { throw ClassBookError.inUse(id: id, rooms: rooms) }
            guard try database.integer("SELECT 1 FROM classes WHERE id = ?", .text(id)) != nil else { throw ClassBookError.notFound(id: id) }
            // The class's rooms (all finished) go with it, with their players, answers and events: without
            // the class nobody could erase a child's data from them any more. Before the class, whose
            // cascade takes the members the links below are found by.
            try database.prepare("UPDATE players SET member_id = NULL WHERE member_id IN (SELECT id FROM class_members WHERE class_id = ?)").run(.text(id))
            try database.prepare("DELETE FROM rooms WHERE class_id = ?").run(.text(id))
            try database.prepare("DELETE FROM classes WHERE id = ?").run(.text(id))
        }
        await checkpointAfterErasure()
    }

    public func eraseMember(_ member: String, ofClass id: String) async throws {
        try await writerChange("class") { database in
            guard try database.integer("SELECT 1 FROM classes WHERE id = ?", .text(id)) != nil else { throw ClassBookError.notFound(id: id) }
            let belongs = try database.integer("SELECT 1 FROM class_members WHERE id = ? AND class_id = ?", .text(member), .text(id)) != nil
            let played = try database.integer("SELECT 1 FROM players p JOIN rooms r ON r.code = p.room_code WHERE p.member_id = ? AND r.class_id = ?", .text(member), .text(id)) != nil
            guard belongs || played else { throw ClassBookError.memberNotFound(id: member) }
            let rooms = try Self.liveRooms(of: id, in: database)
            guard rooms.isEmpty else { throw ClassBookError.inUse(id: id, rooms: rooms) }
            let inRooms = "SELECT room_code, id FROM players WHERE member_id = ?"
            try database.prepare("DELETE FROM answers WHERE (room_code, player_id) IN (\(inRooms))").run(.text(member))
            try database.prepare("DELETE FROM released_tokens WHERE (room_code, player_id) IN (\(inRooms))").run(.text(member))
            try database.prepare("DELETE FROM players WHERE member_id = ?").run(.text(member))
            try database.prepare("DELETE FROM class_members WHERE id = ?").run(.text(member))
            // A change of the class like any other: a node holding its rooms sees the version move.
            try database.prepare("UPDATE classes SET version = version + 1, changed_at = ? WHERE id = ?").run(.integer(Self.now().milliseconds), .text(id))
        }
        // Gone from the files too, not only from the tables (`SQLiteRoomStore+ChildData`).
        await checkpointAfterErasure()
    }

    public func classRooms(_ id: String) async throws -> [RoomArchive] {
        try await read { database in
            let statement = try database.prepare("SELECT code FROM rooms WHERE class_id = ? ORDER BY created_at DESC, code DESC")
            try statement.bind([.text(id)])
            var codes: [String] = []
            while try statement.step() { codes.append(statement.text(0)) }
            return try codes.compactMap { try Self.loadArchive($0, from: database) }
        }
    }

    // MARK: - Helpers

    private static func liveRooms(of id: String, in database: SQLiteDatabase) throws -> [String] {
        let statement = try database.prepare("SELECT code FROM rooms WHERE class_id = ? AND phase <> 'finished' ORDER BY created_at, code")
        try statement.bind([.text(id)])
        var codes: [String] = []
        while try statement.step() { codes.append(statement.text(0)) }
        return codes
    }

    /// Throws `.nameTaken` when another class has a name sharing a key with the draft's and is its owner's
    /// (`scope`, the owner's account id) or unowned; an unowned class's (scope '') name meets every class's.
    static func claimName(_ draft: ClassDraft, for id: String, scope: String, in database: SQLiteDatabase) throws {
        for key in draft.nameKeys {
            let found = try database.integer(
                "SELECT 1 FROM class_name_keys WHERE key = ? AND class_id <> ? AND (? = '' OR scope IN (?, ''))",
                .text(key), .text(id), .text(scope), .text(scope)
            )
            if found != nil { throw ClassBookError.nameTaken(name: draft.name) }
        }
    }

    static func insertKeys(_ draft: ClassDraft, for id: String, scope: String, in database: SQLiteDatabase) throws {
        for key in Set(draft.nameKeys) {
            try database.prepare("INSERT INTO class_name_keys (scope, key, class_id) VALUES (?, ?, ?)").run(.text(scope), .text(key), .text(id))
        }
    }

    /// The draft's children become the class's members in its order; present members it leaves out are
    /// marked removed, and an id the class does not have is refused, unless the ids were `drawn` for new
    /// members by the caller (a roster import, which links them before they are stored).
    static func writeMembers(_ draft: ClassDraft, for id: String, at now: ServerTime, drawn: Bool = false, in database: SQLiteDatabase) throws {
        var kept: Set<String> = []
        for (position, child) in draft.children.enumerated() {
            let member = child.id ?? ClassIDs.makeMember()
            var stored = false
            if child.id != nil {
                try database.prepare("UPDATE class_members SET name = ?, avatar = ?, position = ?, removed_at = NULL WHERE id = ? AND class_id = ?")
                    .run(.text(child.name), .text(child.avatar), .int(position), .text(member), .text(id))
                stored = database.changes == 1
                // An id the class does not have: refused, unless the caller drew it for a new member.
                if !stored, try !drawn || database.integer("SELECT 1 FROM class_members WHERE id = ?", .text(member)) != nil {
                    throw ClassBookError.memberNotFound(id: member)
                }
            }
            if !stored {
                try database.prepare("INSERT INTO class_members (id, class_id, name, avatar, position) VALUES (?, ?, ?, ?, ?)")
                    .run(.text(member), .text(id), .text(child.name), .text(child.avatar), .int(position))
            }
            kept.insert(member)
        }
        let present = try database.prepare("SELECT id FROM class_members WHERE class_id = ? AND removed_at IS NULL")
        try present.bind([.text(id)])
        var leaving: [String] = []
        while try present.step() {
            let member = present.text(0)
            if !kept.contains(member) { leaving.append(member) }
        }
        for member in leaving {
            try database.prepare("UPDATE class_members SET removed_at = ? WHERE id = ?").run(.integer(now.milliseconds), .text(member))
        }
    }

    static func loadClass(_ id: String, from database: SQLiteDatabase) throws -> SchoolClass? {
        let row = try database.prepare("SELECT name, version, changed_at, speed_points, owner_id, school_id FROM classes WHERE id = ?")
        try row.bind([.text(id)])
        guard try row.step() else { return nil }
        var schoolClass = SchoolClass(
            id: id, name: row.text(0), version: row.int(1), changedAt: ServerTime(milliseconds: row.int64(2)), members: [], speedPoints: row.int(3) != 0,
            owner: owner(row, 4)
        )
        let members = try database.prepare("SELECT id, name, avatar FROM class_members WHERE class_id = ? AND removed_at IS NULL ORDER BY position, id")
        try members.bind([.text(id)])
        while try members.step() {
            schoolClass.members.append(ClassMember(id: members.text(0), name: members.text(1), avatar: members.text(2)))
        }
        return schoolClass
    }
}
