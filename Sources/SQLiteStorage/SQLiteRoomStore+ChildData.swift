import Foundation
import StoryCircleCore

/// One child's data in SQLite: read on the reader connection, erased in turns of the writer thread (one
/// transaction each, ordered with the rooms' writes). The writer connection runs with `secure_delete`
/// (deleted content is overwritten, not left in free pages), and every erasure ends with a checkpoint
/// that truncates the write-ahead log, so the erased bytes are in none of the database's files
/// (`checkpointAfterErasure`).
extension SQLiteRoomStore: ChildDataBook {
    public func memberData(_ member: String, ofClass id: String) async throws -> ChildData {
        try await read { database in
            let className = try database.prepare("SELECT name FROM classes WHERE id = ?")
            try className.bind([.text(id)])
            guard try className.step() else { throw ClassBookError.notFound(id: id) }
            let row = try database.prepare("SELECT name, avatar, removed_at FROM class_members WHERE id = ? AND class_id = ?")
            try row.bind([.text(member), .text(id)])
            var membership: ChildData.Membership?
            if try row.step() {
                membership = ChildData.Membership(
                    classID: id, className: className.text(0), memberID: member, name: row.text(0), avatar: row.text(1),
                    removedAt: row.isNull(2) ? nil : ServerTime(milliseconds: row.int64(2))
                )
            }
            let rooms = try Self.appearances("p.member_id = ? AND r.class_id = ?", [.text(member), .text(id)], in: database)
            guard membership != nil || !rooms.isEmpty else { throw ClassBookError.memberNotFound(id: member) }
            return ChildData(member: membership, rooms: rooms)
        }
    }

    public func playerData(_ player: String, inRoom code: String) async throws -> ChildData? {
        try await read { database in
            let rooms = try Self.appearances("p.room_code = ? AND p.id = ?", [.text(code), .text(player)], in: database)
            return rooms.isEmpty ? nil : ChildData(member: nil, rooms: rooms)
        }
    }

    public func erasePlayer(_ player: String, inRoom code: String) async throws {
        try await erasure { database in
            let room = try database.prepare("SELECT phase, class_id FROM rooms WHERE code = ?")
            try room.bind([.text(code)])
            guard try room.step() else { throw ChildDataError.notFound(room: code, player: nil) }
            let (phase, classID) = (room.text(0), room.isNull(1) ? nil : room.text(1))
            guard try database.integer("SELECT 1 FROM players WHERE room_code = ? AND id = ?", .text(code), .text(player)) != nil else {
                throw ChildDataError.notFound(room: code, player: player)
            }
            guard phase == PhaseName.finished.rawValue else { throw ChildDataError.roomRunning(room: code) }
            for table in ["answers", "released_tokens"] {
                try database.prepare("DELETE FROM \(table) WHERE room_code = ? AND player_id = ?").run(.text(code), .text(player))
            }
            try database.prepare("DELETE FROM players WHERE room_code = ? AND id = ?").run(.text(code), .text(player))
            // A change of the room's class: a node holding its finished rooms sees the version move and
            // reads them again.
            if let classID {
                try database.prepare("UPDATE classes SET version = version + 1, changed_at = ? WHERE id = ?").run(.integer(Self.now().milliseconds), .text(classID))
            }
        }
    }

    public func deleteRoom(_ code: String) async throws {
        try await erasure { database in
            let room = try database.prepare("SELECT phase FROM rooms WHERE code = ?")
            try room.bind([.text(code)])
            guard try room.step() else { throw ChildDataError.notFound(room: code, player: nil) }
            guard room.text(0) == PhaseName.finished.rawValue else { throw ChildDataError.roomRunning(room: code) }
            // Players, answers, events and released tokens go with it (ON DELETE CASCADE).
            try database.prepare("DELETE FROM rooms WHERE code = ?").run(.text(code))
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

    // MARK: - Erasing for good

    /// Runs `body` as one transaction in a turn of the writer, then truncates the write-ahead log.
    @discardableResult
    func erasure<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        try await writerChange("erasure", afterwards: { Self.checkpoint($0) }, body)
    }

    /// After a class's child or the class itself was erased (`SQLiteRoomStore+Classes`): the same checkpoint,
    /// in a turn of its own.
    func checkpointAfterErasure() async {
        _ = try? await writer.turn(as: SQLiteCommitter.self) { committer in Self.checkpoint(committer.database) }
    }

    /// Copies every page of the write-ahead log into the database (where `secure_delete` has zeroed what was
    /// deleted) and truncates the log to nothing, so the old pages with the erased rows are in no file. It
    /// waits (SQLite's busy timeout) for a read under way to finish; if a reader still holds an older
    /// snapshot it is tried again, and otherwise left to the next erasure (the erasure itself has committed).
    static func checkpoint(_ database: SQLiteDatabase) {
        for _ in 0..<3 {
            guard let statement = try? database.prepare("PRAGMA wal_checkpoint(TRUNCATE)"), (try? statement.step()) == true else { return }
            if statement.int(0) == 0 { return }
        }
    }

    // MARK: - Reading

    /// The players matching `condition` (on `players p JOIN rooms r`) with their rooms and answers.
    private static func appearances(_ condition: String, _ values: [SQLiteValue], in database: SQLiteDatabase) throws -> [ChildData.Appearance] {
        let statement = try database.prepare("""
            SELECT p.room_code, p.id, p.nickname, p.member_id, p.joined_at, p.left_at, p.kicked_at, p.blocked, p.released_at,
                   r.story, r.created_at, r.phase, r.class_id,
                   (SELECT count(*) FROM released_tokens t WHERE t.room_code = p.room_code AND t.player_id = p.id)
            FROM players p JOIN rooms r ON r.code = p.room_code
            WHERE \(condition) ORDER BY r.created_at, r.code
            """)
        try statement.bind(values)
        var found: [ChildData.Appearance] = []
        while try statement.step() {
            let code = statement.text(0)
            let loaded = Story.load(json: Data(statement.text(9).utf8))
            guard let story = loaded.value else { throw UnloadableStory(room: code, problems: loaded.errors.map(\.description)) }
            let time = { (column: Int32) in statement.isNull(column) ? nil : ServerTime(milliseconds: statement.int64(column)) }
            found.append(ChildData.Appearance(
                room: code, story: story, roomCreatedAt: ServerTime(milliseconds: statement.int64(10)), roomPhase: PhaseName(rawValue: statement.text(11)) ?? .lobby,
                classID: statement.isNull(12) ? nil : statement.text(12), player: PlayerID(statement.text(1)), nickname: statement.text(2),
                member: statement.isNull(3) ? nil : MemberID(statement.text(3)), joinedAt: ServerTime(milliseconds: statement.int64(4)),
                leftAt: time(5), kickedAt: time(6), blocked: statement.int(7) != 0, releasedAt: time(8), releasedTokens: statement.int(13), answers: []
            ))
        }
        for index in found.indices {
            let answers = try database.prepare("SELECT question, option, received_at, elapsed_ms, correct, points FROM answers WHERE room_code = ? AND player_id = ? ORDER BY received_at, rowid")
            try answers.bind([.text(found[index].room), .text(found[index].player.rawValue)])
            while try answers.step() {
                found[index].answers.append(AnswerRecord(
                    player: found[index].player, question: answers.int(0), option: answers.int(1), receivedAt: ServerTime(milliseconds: answers.int64(2)),
                    elapsedMs: answers.int(3), correct: answers.int(4) != 0, points: answers.int(5)
                ))
            }
        }
        return found
    }
}
