import Foundation
import StoryCircleCore

/// The schools' retention rules and the purges that apply them, in PostgreSQL: each purge one transaction
/// on the library's connection (as `PostgresRoomStore+ChildData`) whose cutoff depends on each row's school
/// (`cutoff(_:_:)`), answering what it deleted per school. Two nodes sweeping at once delete each row once:
/// the second waits for the first's row locks and finds the row gone, so no deletion is counted twice.
extension PostgresRoomStore: RetentionBook {
    public func schoolRetentions() async throws -> [String: SchoolRetention] {
        try await read { connection in
            let rows = try connection.query("SELECT school_id, kind, days FROM school_retention")
            var rules: [String: SchoolRetention] = [:]
            for row in 0..<rows.count {
                guard let kind = RetentionKind(rawValue: rows.text(row, 1)) else { continue }
                rules[rows.text(row, 0), default: SchoolRetention()][kind] = rows.int(row, 2)
            }
            return rules
        }
    }

    @discardableResult
    public func setRetention(_ rules: SchoolRetention, ofSchool id: String) async throws -> SchoolRetention {
        try await libraryChange("retention") { connection in
            // The school's row locked first: two administrators saving at once take turns, and each is told
            // what it replaced.
            _ = try connection.query("SELECT 1 FROM schools WHERE id = $1::text FOR UPDATE", [.text(id)])
            let old = try connection.query("SELECT kind, days FROM school_retention WHERE school_id = $1::text", [.text(id)])
            var had = SchoolRetention()
            for row in 0..<old.count { RetentionKind(rawValue: old.text(row, 0)).map { had[$0] = old.int(row, 1) } }
            try connection.query("DELETE FROM school_retention WHERE school_id = $1::text", [.text(id)])
            for (kind, days) in rules.days {
                try connection.query("INSERT INTO school_retention (school_id, kind, days) VALUES ($1::text, $2::text, $3::integer)", [.text(id), .text(kind.rawValue), .int(days)])
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
        return try await libraryChange("erasure") { connection in
            let (cutoff, values) = Self.cutoff("c.school_id", cutoffs)
            let rows = try connection.query("""
                SELECT m.id, m.class_id, c.school_id FROM class_members m JOIN classes c ON c.id = m.class_id
                WHERE m.removed_at IS NOT NULL AND m.removed_at < \(cutoff)
                  AND NOT EXISTS (SELECT 1 FROM rooms r WHERE r.class_id = m.class_id AND r.phase <> 'finished')
                  AND NOT EXISTS (SELECT 1 FROM players p JOIN rooms r ON r.code = p.room_code WHERE p.member_id = m.id AND r.phase <> 'finished')
                FOR UPDATE OF m
                """, values)
            let members = (0..<rows.count).map { (member: rows.text($0, 0), classID: rows.text($0, 1), school: rows.isNull($0, 2) ? nil : rows.text($0, 2)) }
            for (member, _, _) in members {
                // Every room the member played in, as `eraseMember`: their players go from all of them, so
                // their answers and released tokens must too, or they would outlive the player they are of.
                let inRooms = "SELECT room_code, id FROM players WHERE member_id = $1::text"
                try connection.query("DELETE FROM answers WHERE (room_code, player_id) IN (\(inRooms))", [.text(member)])
                try connection.query("DELETE FROM released_tokens WHERE (room_code, player_id) IN (\(inRooms))", [.text(member)])
                try connection.query("DELETE FROM players WHERE member_id = $1::text", [.text(member)])
                try connection.query("DELETE FROM class_members WHERE id = $1::text", [.text(member)])
            }
            for classID in Set(members.map(\.classID)) {
                try connection.query("UPDATE classes SET version = version + 1, changed_at = $1::bigint WHERE id = $2::text", [.integer(Self.now().milliseconds), .text(classID)])
            }
            return members.reduce(into: RetentionCounts()) { $0[$1.school, default: 0] += 1 }
        }
    }

    public func purgeClasses(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await libraryChange("erasure") { connection in
            let (cutoff, values) = Self.cutoff("c.school_id", cutoffs)
            let rows = try connection.query("""
                SELECT c.id, c.school_id FROM classes c
                WHERE c.changed_at < \(cutoff)
                  AND NOT EXISTS (SELECT 1 FROM rooms r WHERE r.class_id = c.id AND (r.created_at >= \(cutoff) OR r.phase <> 'finished'))
                FOR UPDATE OF c
                """, values)
            let classes = (0..<rows.count).map { (id: rows.text($0, 0), school: rows.isNull($0, 1) ? nil : rows.text($0, 1)) }
            for (id, _) in classes {
                // As `deleteClass`: its rooms go with it, and no player keeps a link to its members.
                try connection.query("UPDATE players SET member_id = NULL WHERE member_id IN (SELECT id FROM class_members WHERE class_id = $1::text)", [.text(id)])
                try connection.query("DELETE FROM rooms WHERE class_id = $1::text", [.text(id)])
                try connection.query("DELETE FROM classes WHERE id = $1::text", [.text(id)])
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
              AND NOT EXISTS (SELECT 1 FROM stories s WHERE strpos(s.document::text, pictures.id) > 0)
              AND NOT EXISTS (SELECT 1 FROM rooms r WHERE strpos(r.story::text, pictures.id) > 0)
            RETURNING school_id
            """, cutoffs, column: "pictures.school_id")
    }

    public func pruneAudit(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await libraryChange("audit") { connection in
            // The append-only trigger lets a row go only when it is older than the cutoff the transaction
            // names: the latest of the schools' (each row is then held to its own school's, which is earlier).
            try connection.query("SELECT set_config('storycircle.audit_prune_before', $1::text, true)", [.text(String(cutoffs.latest.milliseconds))])
            return try Self.counting(connection, "DELETE FROM audit_rows WHERE at < %@ RETURNING school_id", cutoffs, column: "school_id")
        }
    }

    // MARK: - Helpers

    /// Runs `sql` (a DELETE … RETURNING the school, each `%@` its row's cutoff) as one transaction.
    private func deleting(_ sql: String, _ cutoffs: RetentionCutoffs, column: String) async throws -> RetentionCounts {
        guard !cutoffs.keepsEverything else { return [:] }
        return try await libraryChange("erasure") { connection in try Self.counting(connection, sql, cutoffs, column: column) }
    }

    private static func counting(_ connection: PostgresConnection, _ sql: String, _ cutoffs: RetentionCutoffs, column: String) throws -> RetentionCounts {
        let (cutoff, values) = Self.cutoff(column, cutoffs)
        let rows = try connection.query(sql.replacingOccurrences(of: "%@", with: cutoff), values)
        var counts = RetentionCounts()
        for row in 0..<rows.count { counts[rows.isNull(row, 0) ? nil : rows.text(row, 0), default: 0] += 1 }
        return counts
    }

    /// The cutoff of a row whose school is in `column`: its school's own, or the fallback (numbered
    /// parameters, so one expression may be used twice with one list of values).
    private static func cutoff(_ column: String, _ cutoffs: RetentionCutoffs) -> (sql: String, values: [PostgresValue]) {
        let own = cutoffs.ordered
        guard !own.isEmpty else { return ("$1::bigint", [.integer(cutoffs.fallback.milliseconds)]) }
        let cases = own.indices.map { " WHEN $\($0 * 2 + 2)::text THEN $\($0 * 2 + 3)::bigint" }.joined()
        return ("(CASE \(column)\(cases) ELSE $1::bigint END)", [.integer(cutoffs.fallback.milliseconds)] + own.flatMap { [PostgresValue.text($0.school), .integer($0.cutoff.milliseconds)] })
    }
}
