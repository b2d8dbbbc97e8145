import Foundation
import StoryCircleCore

/// The schools' retention rules and the purges that apply them, in SQLite: a purge is one erasure (a
/// turn of the writer, then a checkpoint, as `SQLiteRoomStore+ChildData`) whose cutoff depends on each
/// row's school (`cutoff(_:_:)`), and answers what it deleted per school.
extension SQLiteRoomStore: RetentionBook {
    public func schoolRetentions() async throws -> [String: SchoolRetention] {
        try await read { database in
            let statement = try database.prepare("SELECT school_id, kind, days FROM school_retention")
            try statement.bind([])
            var rules: [String: SchoolRetention] = [:]
            while try statement.step() {
                guard let kind = RetentionKind(rawValue: statement.text(1)) else { continue }
                rules[statement.text(0), default: SchoolRetention()][kind] = statement.int(2)
            }
            return rules
        }
    }

    @discardableResult
    public func setRetention(_ rules: SchoolRetention, ofSchool id: String) async throws -> SchoolRetention {
        try await writerChange("retention") { database in
            let old = try database.prepare("SELECT kind, days FROM school_retention WHERE school_id = ?")
            try old.bind([.text(id)])
            var had = SchoolRetention()
            while try old.step() { RetentionKind(rawValue: old.text(0)).map { had[$0] = old.int(1) } }
            try database.prepare("DELETE FROM school_retention WHERE school_id = ?").run(.text(id))
            for (kind, days) in rules.days {
                try database.prepare("INSERT INTO school_retention (school_id, kind, days) VALUES (?, ?, ?)").run(.text(id), .text(kind.rawValue), .int(days))
            }
            return had
        }
    }

    public func purgeRooms(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        // Players, answers, events and released tokens go with their room (ON DELETE CASCADE).
        try await deleting("DELETE FROM rooms WHERE created_at < %@ RETURNING school_id", cutoffs, column: "school_id")
    }

    public func purgeRemovedMembers(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await erasure { database in
            let (cutoff, values) = Self.cutoff("c.school_id", cutoffs)
            let statement = try database.prepare("""
                SELECT m.id, m.class_id, c.school_id FROM class_members m JOIN classes c ON c.id = m.class_id
                WHERE m.removed_at IS NOT NULL AND m.removed_at < \(cutoff)
                  AND NOT EXISTS (SELECT 1 FROM rooms r WHERE r.class_id = m.class_id AND r.phase <> 'finished')
                  AND NOT EXISTS (SELECT 1 FROM players p JOIN rooms r ON r.code = p.room_code WHERE p.member_id = m.id AND r.phase <> 'finished')
                """)
            try statement.bind(values)
            var members: [(member: String, classID: String, school: String?)] = []
            while try statement.step() { members.append((statement.text(0), statement.text(1), statement.isNull(2) ? nil : statement.text(2))) }
            for (member, _, _) in members {
                // Every room the member played in, as `eraseMember`: their players go from all of them, so
                // their answers and released tokens must too, or they would outlive the player they are of.
                let inRooms = "SELECT room_code, id FROM players WHERE member_id = ?"
                try database.prepare("DELETE FROM answers WHERE (room_code, player_id) IN (\(inRooms))").run(.text(member))
                try database.prepare("DELETE FROM released_tokens WHERE (room_code, player_id) IN (\(inRooms))").run(.text(member))
                try database.prepare("DELETE FROM players WHERE member_id = ?").run(.text(member))
                try database.prepare("DELETE FROM class_members WHERE id = ?").run(.text(member))
            }
            for classID in Set(members.map(\.classID)) {
                try database.prepare("UPDATE classes SET version = version + 1, changed_at = ? WHERE id = ?").run(.integer(Self.now().milliseconds), .text(classID))
            }
            return members.reduce(into: RetentionCounts()) { $0[$1.school, default: 0] += 1 }
        }
    }

    public func purgeClasses(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await erasure { database in
            let (cutoff, values) = Self.cutoff("c.school_id", cutoffs)
            let statement = try database.prepare("""
                SELECT c.id, c.school_id FROM classes c
                WHERE c.changed_at < \(cutoff)
                  AND NOT EXISTS (SELECT 1 FROM rooms r WHERE r.class_id = c.id AND (r.created_at >= \(cutoff) OR r.phase <> 'finished'))
                """)
            try statement.bind(values + values)
            var classes: [(id: String, school: String?)] = []
            while try statement.step() { classes.append((statement.text(0), statement.isNull(1) ? nil : statement.text(1))) }
            for (id, _) in classes {
                // As `deleteClass`: its rooms go with it, and no player keeps a link to its members.
                try database.prepare("UPDATE players SET member_id = NULL WHERE member_id IN (SELECT id FROM class_members WHERE class_id = ?)").run(.text(id))
                try database.prepare("DELETE FROM rooms WHERE class_id = ?").run(.text(id))
                try database.prepare("DELETE FROM classes WHERE id = ?").run(.text(id))
            }
            return classes.reduce(into: RetentionCounts()) { $0[$1.school, default: 0] += 1 }
        }
    }

    public func purgeStories(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        try await deleting("""
            DELETE FROM stories WHERE updated_at < %@
              AND NOT EXISTS (SELECT 1 FROM rooms r WHERE r.story_id = stories.id AND (r.created_at >= %@ OR r.phase <> 'finished'))
            RETURNING school_id
            """, cutoffs, column: "stories.school_id")
    }

    public func purgePictures(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        // A picture's id is the SHA-256 of its bytes in hex: where a story or a room names it, its id is in
        // the stored JSON, and nowhere else by chance.
        try await deleting("""
            DELETE FROM pictures WHERE created_at < %@
              AND NOT EXISTS (SELECT 1 FROM stories s WHERE instr(s.document, pictures.id) > 0)
              AND NOT EXISTS (SELECT 1 FROM rooms r WHERE instr(r.story, pictures.id) > 0)
            RETURNING school_id
            """, cutoffs, column: "pictures.school_id")
    }

    public func pruneAudit(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await writerChange("audit") { database in
            try Self.counting(database, "DELETE FROM audit_rows WHERE at < %@ RETURNING school_id", cutoffs, column: "school_id")
        }
    }

    // MARK: - Helpers

    /// Runs `sql` (a DELETE … RETURNING the school, each `%@` its row's cutoff) as one erasure.
    private func deleting(_ sql: String, _ cutoffs: RetentionCutoffs, column: String) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await erasure { database in try Self.counting(database, sql, cutoffs, column: column) }
    }

    private static func counting(_ database: SQLiteDatabase, _ sql: String, _ cutoffs: RetentionCutoffs, column: String) throws -> RetentionCounts {
        let (cutoff, values) = Self.cutoff(column, cutoffs)
        let parts = sql.components(separatedBy: "%@")
        let statement = try database.prepare(parts.joined(separator: cutoff))
        try statement.bind(Array(repeating: values, count: parts.count - 1).flatMap { $0 })
        var counts = RetentionCounts()
        while try statement.step() { counts[statement.isNull(0) ? nil : statement.text(0), default: 0] += 1 }
        return counts
    }

    /// The cutoff of a row whose school is in `column`: its school's own, or the fallback.
    private static func cutoff(_ column: String, _ cutoffs: RetentionCutoffs) -> (sql: String, values: [SQLiteValue]) {
        let own = cutoffs.ordered
        guard !own.isEmpty else { return ("?", [.integer(cutoffs.fallback.milliseconds)]) }
        let sql = "(CASE \(column)" + String(repeating: " WHEN ? THEN ?", count: own.count) + " ELSE ? END)"
        return (sql, own.flatMap { [SQLiteValue.text($0.school), .integer($0.cutoff.milliseconds)] } + [.integer(cutoffs.fallback.milliseconds)])
    }
}
