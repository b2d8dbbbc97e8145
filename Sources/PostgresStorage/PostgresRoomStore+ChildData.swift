import Foundation
import StoryCircleCore

/// One child's data in PostgreSQL: read on the reader connection from one snapshot, erased on the library's
/// connection, each erasure one transaction (its rows are deleted together or not at all, and on the
/// synchronous standby when the commit returns). PostgreSQL leaves deleted tuples in their pages until
/// vacuum reuses them; `docs/privacy.md` says so.
extension PostgresRoomStore: ChildDataBook {
    public func memberData(_ member: String, ofClass id: String) async throws -> ChildData {
        try await snapshot { connection in
            let className = try connection.query("SELECT name FROM classes WHERE id = $1::text", [.text(id)])
            guard className.count == 1 else { throw ClassBookError.notFound(id: id) }
            let row = try connection.query("SELECT name, avatar, removed_at FROM class_members WHERE id = $1::text AND class_id = $2::text", [.text(member), .text(id)])
            let membership = row.count == 1 ? ChildData.Membership(
                classID: id, className: className.text(0, 0), memberID: member, name: row.text(0, 0), avatar: row.text(0, 1),
                removedAt: row.isNull(0, 2) ? nil : ServerTime(milliseconds: row.int64(0, 2))
            ) : nil
            let rooms = try Self.appearances("p.member_id = $1::text AND r.class_id = $2::text", [.text(member), .text(id)], on: connection)
            guard membership != nil || !rooms.isEmpty else { throw ClassBookError.memberNotFound(id: member) }
            return ChildData(member: membership, rooms: rooms)
        }
    }

    public func playerData(_ player: String, inRoom code: String) async throws -> ChildData? {
        try await snapshot { connection in
            let rooms = try Self.appearances("p.room_code = $1::text AND p.id = $2::text", [.text(code), .text(player)], on: connection)
            return rooms.isEmpty ? nil : ChildData(member: nil, rooms: rooms)
        }
    }

    public func erasePlayer(_ player: String, inRoom code: String) async throws {
        try await libraryChange("erasure") { connection in
            let room = try connection.query("SELECT phase, class_id FROM rooms WHERE code = $1::text FOR UPDATE", [.text(code)])
            guard room.count == 1 else { throw ChildDataError.notFound(room: code, player: nil) }
            guard try connection.query("SELECT 1 FROM players WHERE room_code = $1::text AND id = $2::text", [.text(code), .text(player)]).count == 1 else {
                throw ChildDataError.notFound(room: code, player: player)
            }
            guard room.text(0, 0) == PhaseName.finished.rawValue else { throw ChildDataError.roomRunning(room: code) }
            for table in ["answers", "released_tokens"] {
                try connection.query("DELETE FROM \(table) WHERE room_code = $1::text AND player_id = $2::text", [.text(code), .text(player)])
            }
            try connection.query("DELETE FROM players WHERE room_code = $1::text AND id = $2::text", [.text(code), .text(player)])
            // A change of the room's class: a node holding its finished rooms sees the version move.
            if !room.isNull(0, 1) {
                try connection.query("UPDATE classes SET version = version + 1, changed_at = $1::bigint WHERE id = $2::text", [.integer(Self.now().milliseconds), .text(room.text(0, 1))])
            }
        }
    }

    public func deleteRoom(_ code: String) async throws {
        try await libraryChange("erasure") { connection in
            let room = try connection.query("SELECT phase FROM rooms WHERE code = $1::text FOR UPDATE", [.text(code)])
            guard room.count == 1 else { throw ChildDataError.notFound(room: code, player: nil) }
            guard room.text(0, 0) == PhaseName.finished.rawValue else { throw ChildDataError.roomRunning(room: code) }
            // Players, answers, events, released tokens and its lease go with it (ON DELETE CASCADE).
            try connection.query("DELETE FROM rooms WHERE code = $1::text", [.text(code)])
        }
    }

    // The purges of `ChildDataBook` with one cutoff everywhere: `RetentionBook`'s, whose cutoff can depend
    // on the school.
    public func purgeRemovedMembers(removedBefore cutoff: ServerTime) async throws -> Int {
        try await purgeRemovedMembers(RetentionCutoffs(fallback: cutoff)).total
    }

    public func purgeClasses(unusedSince cutoff: ServerTime) async throws -> Int {
        try await purgeClasses(RetentionCutoffs(fallback: cutoff)).total
    }

    public func purgeStories(unusedSince cutoff: ServerTime) async throws -> Int {
        try await purgeStories(RetentionCutoffs(fallback: cutoff)).total
    }

    public func purgePictures(storedBefore cutoff: ServerTime) async throws -> Int {
        try await purgePictures(RetentionCutoffs(fallback: cutoff)).total
    }

    // MARK: - Helpers

    /// `body` on the reader, in one repeatable-read transaction: a child's rooms and answers from one state.
    private func snapshot<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await read { try Self.inTransaction($0, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body) }
    }

    /// The players matching `condition` (on `players p JOIN rooms r`) with their rooms and answers.
    private static func appearances(_ condition: String, _ parameters: [PostgresValue], on connection: PostgresConnection) throws -> [ChildData.Appearance] {
        let rows = try connection.query("""
            SELECT p.room_code, p.id, p.nickname, p.member_id, p.joined_at, p.left_at, p.kicked_at, p.blocked, p.released_at,
                   r.story, r.created_at, r.phase, r.class_id,
                   (SELECT count(*) FROM released_tokens t WHERE t.room_code = p.room_code AND t.player_id = p.id)
            FROM players p JOIN rooms r ON r.code = p.room_code
            WHERE \(condition) ORDER BY r.created_at, r.code
            """, parameters)
        var found: [ChildData.Appearance] = []
        for row in 0..<rows.count {
            let code = rows.text(row, 0)
            guard let story = Story.load(json: Data(rows.text(row, 9).utf8)).value else {
                throw PostgresError.client("the stored story of room \(code) no longer loads", "exporting a child's data")
            }
            let time = { (column: Int) in rows.isNull(row, column) ? nil : ServerTime(milliseconds: rows.int64(row, column)) }
            found.append(ChildData.Appearance(
                room: code, story: story, roomCreatedAt: ServerTime(milliseconds: rows.int64(row, 10)), roomPhase: PhaseName(rawValue: rows.text(row, 11)) ?? .lobby,
                classID: rows.isNull(row, 12) ? nil : rows.text(row, 12), player: PlayerID(rows.text(row, 1)), nickname: rows.text(row, 2),
                member: rows.isNull(row, 3) ? nil : MemberID(rows.text(row, 3)), joinedAt: ServerTime(milliseconds: rows.int64(row, 4)),
                leftAt: time(5), kickedAt: time(6), blocked: rows.bool(row, 7), releasedAt: time(8), releasedTokens: rows.int(row, 13), answers: []
            ))
        }
        for index in found.indices {
            let answers = try connection.query(
                "SELECT question, option, received_at, elapsed_ms, correct, points FROM answers WHERE room_code = $1::text AND player_id = $2::text ORDER BY received_at, seq",
                [.text(found[index].room), .text(found[index].player.rawValue)]
            )
            for row in 0..<answers.count {
                found[index].answers.append(AnswerRecord(
                    player: found[index].player, question: answers.int(row, 0), option: answers.int(row, 1), receivedAt: ServerTime(milliseconds: answers.int64(row, 2)),
                    elapsedMs: answers.int(row, 3), correct: answers.bool(row, 4), points: answers.int(row, 5)
                ))
            }
        }
        return found
    }
}
