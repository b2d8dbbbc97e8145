import Foundation
import Locking
import RoomStoreSupport
import StoryCircleCore

/// Rooms in SQLite (WAL mode, `synchronous=FULL`): a record is durable when its completion runs.
///
/// Writes go through the group-commit writer (`GroupCommitWriter`: one thread, everything queued in one
/// transaction, the failure rules). Reads use a second connection, which WAL lets run beside the writer,
/// on a thread of the store's own (`StoreThreads`), so an `async` caller never blocks a cooperative thread.
///
/// A failure of the database (full, read-only, I/O error, busy) fails the whole batch at once, and the
/// transaction stops at that first error: SQLite may already have rolled it back, and the statements
/// after it would each commit on their own. A failure of one record (a constraint) fails that record
/// alone, and the batch runs again without it.
///
/// `@unchecked Sendable`: the reader connection is behind its lock and used on the store's thread; the
/// writer connection and the leases belong to the writer thread.
public final class SQLiteRoomStore: RoomStore, @unchecked Sendable {
    public let path: String
    let writer: GroupCommitWriter
    private let reader: Locked<SQLiteDatabase>
    /// One: there is one reader connection, and SQLite reads are short.
    private let threads = StoreThreads(name: "sqlite-reader", count: 1)

    /// Opens (creating and migrating as needed) the database at `path`, and proves it can write there.
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let committer: SQLiteCommitter
        do {
            let database = try SQLiteDatabase(path: path)
            // `secure_delete`: a deleted row's bytes are overwritten, never left in a free page or a page's
            // free space (a child's erased data must really be gone; see `SQLiteRoomStore+ChildData`).
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA secure_delete=ON;")
            try Migrations.migrate(database, now: Int64(Date().timeIntervalSince1970 * 1_000))
            let statements = try WriterStatements(database)
            // A real write, not a look at the permissions: SQLite quietly opens a file it cannot write
            // read-only, and a read-only mount or a full disk only shows when something is written.
            try database.transaction { try statements.probe() }
            committer = SQLiteCommitter(path: path, database: database, statements: statements)
            // Read-only: a slip in a read path fails loudly instead of writing beside the writer thread.
            reader = Locked(try SQLiteDatabase(path: path, readOnly: true))
        } catch let error as SQLiteError {
            throw OpenFailure(error: error, systemReason: Self.systemReasonForWriting(at: path))
        }
        // The writer thread takes the only reference to the writer connection, so it is closed when the
        // writer ends, before `close()` returns.
        writer = GroupCommitWriter(name: "sqlite-writer", committer: committer)
    }

    /// Why a database could not be opened for writing, in SQLite's words and the system's.
    public struct OpenFailure: Error, CustomStringConvertible {
        public var error: SQLiteError
        /// What the operating system says when we try to write beside the database ourselves.
        public var systemReason: String?

        public var description: String {
            guard error.code != 0 else { return error.message }
            guard let systemReason, error.systemError == nil, !error.message.contains(systemReason) else { return error.reason }
            return "\(error.message) (\(systemReason))"
        }
    }

    /// Transactions committed so far (a measure of how well writes are grouped).
    public var commitCount: Int { writer.commitCount }

    /// Batches the writer has taken from its queue so far (tests use it to know what the writer is doing).
    var batchesTaken: Int { writer.batchesTaken }

    // MARK: - RoomStore

    public func createRoom(_ header: RoomHeader) async throws {
        try await writer.write(.createRoom(header))
    }

    public func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        writer.submit(.record(record, room: code, lease: nil), resuming: resuming, whenDurable: whenDurable)
    }

    public func archive(room code: String) async throws -> RoomArchive? {
        try await read { try Self.loadArchive(code, from: $0) }
    }

    public func unfinishedRooms() async throws -> [RoomArchive] {
        try await read { database in
            let statement = try database.prepare("SELECT code FROM rooms WHERE phase <> 'finished' ORDER BY created_at")
            try statement.bind([])
            var codes: [String] = []
            while try statement.step() { codes.append(statement.text(0)) }
            return try codes.compactMap { try Self.loadArchive($0, from: database) }
        }
    }

    public func summaries() async throws -> [RoomSummary] {
        try await summaries(scope: .everything)
    }

    public func summaries(scope: OwnerScope) async throws -> [RoomSummary] {
        try await read { database in
            let condition = scope.condition(alias: "r", sharedColumn: false) { _ in "?" }
            let statement = try database.prepare("""
                SELECT code, title, phase, created_at,
                       (SELECT count(*) FROM players p WHERE p.room_code = r.code AND p.kicked_at IS NULL), owner_id, school_id
                FROM rooms r \(condition.map { "WHERE " + $0.sql } ?? "") ORDER BY created_at DESC
                """)
            try statement.bind((condition?.values ?? []).map(SQLiteValue.text))
            var summaries: [RoomSummary] = []
            while try statement.step() {
                summaries.append(RoomSummary(
                    code: statement.text(0), title: statement.text(1), phase: PhaseName(rawValue: statement.text(2)) ?? .lobby,
                    players: statement.int(4), createdAt: ServerTime(milliseconds: statement.int64(3)), owner: Self.owner(statement, 5)
                ))
            }
            return summaries
        }
    }

    public func codeExists(_ code: String) async throws -> Bool {
        try await read { try $0.integer("SELECT 1 FROM rooms WHERE code = ?", .text(code)) != nil }
    }

    public func purge(createdBefore cutoff: ServerTime) async throws -> Int {
        let purged = try await writer.write(.purge(createdBefore: cutoff))
        // The deleted rooms' children are erased for good, as by an erasure.
        if purged > 0 { await checkpointAfterErasure() }
        return purged
    }

    public var health: StoreHealth { writer.health }

    /// Rooms, classes, the library, pictures, accounts, owners and the audit trail. No leases: one server runs on a data directory (its lock
    /// says so), and its leases in memory (`SQLiteRoomStore+Leases`) would fence nobody.
    public var offers: Storage { Storage(rooms: self, classes: self, library: self, pictures: self, accounts: self, ownership: self, childData: self, audit: self, retention: self, roster: self) }

    public func probe() async -> StoreHealth {
        _ = try? await writer.write(.probe)
        return writer.health
    }

    /// Writes everything queued, then stops the writer and the reader's thread. Appends after `close` fail.
    public func close() async {
        await writer.stop()
        await threads.shutDown()
    }

    /// Runs `sql` on the writer connection, in the writer's turn. Tests use it to make the writer meet a
    /// full disk (`PRAGMA max_page_count`) without filling one.
    func runOnWriter(_ sql: String, done: @escaping @Sendable ((any Error)?) -> Void) {
        writer.submit(.sql(sql), whenDurable: done)
    }

    func runOnWriter(_ sql: String) async throws {
        try await writer.write(.sql(sql))
    }

    /// The schema version of the database file.
    public func schemaVersion() async throws -> Int {
        try await read { Int(try $0.integer("SELECT max(version) FROM schema_migrations") ?? 0) }
    }

    /// What the operating system says when we try to write where the database lives: the database file
    /// itself (opened for writing, not changed) and a new file beside it (SQLite keeps its -wal and -shm
    /// files there). `nil` when both work.
    static func systemReasonForWriting(at path: String) -> String? {
        let database = open(path, O_WRONLY | O_CLOEXEC)
        if database >= 0 {
            _ = Glibc.close(database)
        } else if errno != ENOENT {
            return String(cString: strerror(errno))
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let probe = directory + "/.storycircle-write-test-\(getpid())"
        let file = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { return String(cString: strerror(errno)) }
        defer { unlink(probe) }
        let written = write(file, "x", 1)
        let writeError = errno
        let synced = written == 1 ? fsync(file) : 0
        let syncError = errno
        _ = Glibc.close(file)
        if written != 1 { return String(cString: strerror(writeError)) }
        if synced != 0 { return String(cString: strerror(syncError)) }
        return nil
    }

    // MARK: - Reading

    /// Runs `body` in one read transaction, on the store's thread: everything it reads comes from one
    /// committed state.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        try await threads.run { [self] in
            try reader.withLock { reader in
                try reader.execute("BEGIN")
                defer { reader.rollback() }
                return try body(reader)
            }
        }
    }

    /// Runs `body` as one transaction on the writer connection, at its turn in the writer's queue (so it is
    /// ordered with the rooms' writes), then `afterwards` in the same turn: the changes of the library,
    /// classes, accounts, owners and children's data. A SQLite failure is a `StoreFailure` about `record`;
    /// the caller's own errors pass as they are.
    @discardableResult
    func writerChange<T: Sendable>(
        _ record: String, afterwards: @escaping @Sendable (SQLiteDatabase) -> Void = { _ in }, _ body: @escaping @Sendable (SQLiteDatabase) throws -> T
    ) async throws -> T {
        do {
            return try await writer.turn(as: SQLiteCommitter.self) { committer in
                let result = try committer.database.transaction { try body(committer.database) }
                afterwards(committer.database)
                return result
            }
        } catch let error as SQLiteError {
            throw StoreFailure(error.isStatementProblem ? .rejected : .unavailable, record: record, reason: error.reason)
        }
    }

    static func loadArchive(_ code: String, from database: SQLiteDatabase) throws -> RoomArchive? {
        let room = try database.prepare("SELECT title, story, settings, teacher_token_hash, dashboard_token_hash, locked, created_at, story_id, class_id, owner_id, school_id FROM rooms WHERE code = ?")
        try room.bind([.text(code)])
        guard try room.step() else { return nil }
        let storyJSON = room.text(1)
        let loaded = Story.load(json: Data(storyJSON.utf8))
        guard let story = loaded.value else {
            throw UnloadableStory(room: code, problems: loaded.errors.map(\.description))
        }
        let settings = try JSONDecoder().decode(RoomSettings.self, from: Data(room.text(2).utf8))
        let credentials = RoomCredentials(teacherTokenHash: room.text(3), dashboardTokenHash: room.text(4))
        var archive = RoomArchive(header: RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: ServerTime(milliseconds: room.int64(6)), storyID: room.isNull(7) ? nil : room.text(7), classID: room.isNull(8) ? nil : room.text(8), owner: owner(room, 9)))
        archive.locked = room.int(5) != 0

        let players = try database.prepare("SELECT id, nickname, token_hash, joined_at, kicked_at, blocked, member_id, released_at FROM players WHERE room_code = ? ORDER BY joined_at, rowid")
        try players.bind([.text(code)])
        while try players.step() {
            let id = PlayerID(players.text(0))
            archive.players.append(PlayerRecord(
                id: id, nickname: players.text(1), tokenHash: players.text(2), joinedAt: ServerTime(milliseconds: players.int64(3)),
                member: players.isNull(6) ? nil : MemberID(players.text(6))
            ))
            if !players.isNull(4) { archive.kicked.insert(id) }
            if players.int(5) != 0 { archive.blocked.insert(id) }
            if !players.isNull(7) { archive.released.insert(id) }
        }
        let releasedTokens = try database.prepare("SELECT token_hash FROM released_tokens WHERE room_code = ?")
        try releasedTokens.bind([.text(code)])
        while try releasedTokens.step() { archive.releasedTokenHashes.insert(releasedTokens.text(0)) }
        let answers = try database.prepare("SELECT player_id, question, option, received_at, elapsed_ms, correct, points FROM answers WHERE room_code = ? ORDER BY received_at, rowid")
        try answers.bind([.text(code)])
        while try answers.step() {
            archive.answers.append(AnswerRecord(
                player: PlayerID(answers.text(0)), question: answers.int(1), option: answers.int(2), receivedAt: ServerTime(milliseconds: answers.int64(3)),
                elapsedMs: answers.int(4), correct: answers.int(5) != 0, points: answers.int(6)
            ))
        }
        let transitions = try database.prepare("SELECT phase, question, skipped, at FROM transitions WHERE room_code = ? ORDER BY seq")
        try transitions.bind([.text(code)])
        while try transitions.step() {
            guard let phase = PhaseName(rawValue: transitions.text(0)) else { continue }
            archive.phases.append(PhaseRecord(phase: phase, question: transitions.optionalInt(1), skipped: transitions.int(2) != 0, at: ServerTime(milliseconds: transitions.int64(3))))
        }
        return archive
    }
}

/// The writer connection and what only the writer thread knows: the transaction of a batch, and the
/// leases (see `SQLiteRoomStore+Leases`). Handed to the writer thread in `init`; nothing else touches it
/// after that (`@unchecked Sendable` for the turns that run on that thread).
final class SQLiteCommitter: BatchCommitter, @unchecked Sendable {
    let path: String
    let database: SQLiteDatabase
    fileprivate let statements: WriterStatements
    /// Who holds which room (see `RoomLeases`).
    var leases = RoomLeaseTable()

    fileprivate init(path: String, database: SQLiteDatabase, statements: WriterStatements) {
        self.path = path
        self.database = database
        self.statements = statements
    }

    func admits(_ lease: RoomLease) -> Bool {
        leases.holds(lease, at: .now)
    }

    func commit(_ writes: [BatchWrite]) -> BatchOutcome {
        let changesBefore = database.totalChanges
        do {
            try database.execute("BEGIN IMMEDIATE")
        } catch {
            return .unavailable(reason: databaseFailure(error))
        }
        var results: [Result<Int, any Error>] = []
        results.reserveCapacity(writes.count)
        for (index, write) in writes.enumerated() {
            do {
                switch write {
                case .record(let record, let room, _): try statements.write(record, room: room)
                case .createRoom(let header): try statements.create(header)
                case .purge(let cutoff):
                    results.append(.success(try statements.purge(cutoff)))
                    continue
                case .probe: try statements.probe()
                case .sql(let sql): try database.execute(sql)
                }
                results.append(.success(0))
            } catch {
                // Stop at the first error: after a failure of the database SQLite may have rolled the
                // transaction back already, and every statement after it would commit on its own.
                database.rollback()
                if let sqlite = error as? SQLiteError, !sqlite.isStatementProblem {
                    return .unavailable(reason: databaseFailure(sqlite))
                }
                return .rejected(index: index, reason: (error as? SQLiteError)?.reason ?? String(describing: error))
            }
        }
        do {
            try database.execute("COMMIT")
        } catch {
            database.rollback()
            return .unavailable(reason: databaseFailure(error))
        }
        return .committed(results: results, wrote: database.totalChanges != changesBefore)
    }

    /// SQLite's words for a failure of the database, with the system's reason. SQLite does not always
    /// keep the `errno` of the call that failed ("disk I/O error" alone says little), so then we try a
    /// write beside the database ourselves and say what the system says ("Read-only file system").
    private func databaseFailure(_ error: any Error) -> String {
        guard let sqlite = error as? SQLiteError else { return String(describing: error) }
        guard sqlite.systemError == nil, !sqlite.isStatementProblem, let system = SQLiteRoomStore.systemReasonForWriting(at: path) else { return sqlite.reason }
        return "\(sqlite.message) (\(system))"
    }
}

/// The writer's prepared statements, made once.
fileprivate final class WriterStatements {
    let createRoom, insertPlayer, playerLeft, playerKicked, playerBlocked, playerReadmitted, playerReleased, releaseToken, playerReclaimed, insertAnswer, insertTransition, updatePhase, updateRoom, purgeRooms, writeProbe: SQLiteStatement

    init(_ database: SQLiteDatabase) throws {
        createRoom = try database.prepare("INSERT INTO rooms (code, title, story, settings, teacher_token_hash, dashboard_token_hash, created_at, story_id, class_id, owner_id, school_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        insertPlayer = try database.prepare("INSERT INTO players (room_code, id, nickname, token_hash, joined_at, member_id) VALUES (?, ?, ?, ?, ?, ?)")
        playerLeft = try database.prepare("UPDATE players SET left_at = ? WHERE room_code = ? AND id = ?")
        playerKicked = try database.prepare("UPDATE players SET kicked_at = ? WHERE room_code = ? AND id = ?")
        playerBlocked = try database.prepare("UPDATE players SET kicked_at = coalesce(kicked_at, ?), blocked = 1 WHERE room_code = ? AND id = ?")
        // A blocked player is never let back in, whatever a record says.
        playerReadmitted = try database.prepare("UPDATE players SET kicked_at = NULL WHERE room_code = ? AND id = ? AND blocked = 0")
        releaseToken = try database.prepare("INSERT OR IGNORE INTO released_tokens (room_code, token_hash, player_id, released_at) SELECT room_code, token_hash, id, ? FROM players WHERE room_code = ? AND id = ?")
        playerReleased = try database.prepare("UPDATE players SET released_at = ? WHERE room_code = ? AND id = ?")
        playerReclaimed = try database.prepare("UPDATE players SET released_at = NULL, token_hash = ? WHERE room_code = ? AND id = ?")
        insertAnswer = try database.prepare("INSERT INTO answers (room_code, player_id, question, option, received_at, elapsed_ms, correct, points) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        insertTransition = try database.prepare("INSERT INTO transitions (room_code, phase, question, skipped, at) VALUES (?, ?, ?, ?, ?)")
        updatePhase = try database.prepare("UPDATE rooms SET phase = ? WHERE code = ?")
        updateRoom = try database.prepare("UPDATE rooms SET settings = ?, locked = ? WHERE code = ?")
        purgeRooms = try database.prepare("DELETE FROM rooms WHERE created_at < ?")
        writeProbe = try database.prepare("INSERT OR REPLACE INTO store_probe (id, written_at, padding) VALUES (1, ?, zeroblob(65536))")
    }

    func probe() throws {
        try writeProbe.run(.integer(Int64(Date().timeIntervalSince1970 * 1_000)))
    }

    func create(_ header: RoomHeader) throws {
        let story = String(decoding: try JSONEncoder().encode(header.story.jsonValue()), as: UTF8.self)
        try createRoom.run(
            .text(header.code), .text(header.story.title), .text(story), .text(try Self.json(header.settings)),
            .text(header.credentials.teacherTokenHash), .text(header.credentials.dashboardTokenHash), .integer(header.createdAt.milliseconds),
            header.storyID.map(SQLiteValue.text) ?? .null, header.classID.map(SQLiteValue.text) ?? .null,
            .optional(header.owner?.accountID), .optional(header.owner?.schoolID)
        )
    }

    func write(_ record: RoomRecord, room code: String) throws {
        switch record {
        case .playerJoined(let player):
            try insertPlayer.run(.text(code), .text(player.id.rawValue), .text(player.nickname), .text(player.tokenHash), .integer(player.joinedAt.milliseconds), player.member.map { .text($0.rawValue) } ?? .null)
        case .playerLeft(let player, let at):
            try playerLeft.run(.integer(at.milliseconds), .text(code), .text(player.rawValue))
        case .playerKicked(let player, let at):
            try playerKicked.run(.integer(at.milliseconds), .text(code), .text(player.rawValue))
        case .playerBlocked(let player, let at):
            try playerBlocked.run(.integer(at.milliseconds), .text(code), .text(player.rawValue))
        case .playerReadmitted(let player, _):
            try playerReadmitted.run(.text(code), .text(player.rawValue))
        case .playerReleased(let player, let at):
            try releaseToken.run(.integer(at.milliseconds), .text(code), .text(player.rawValue))
            try playerReleased.run(.integer(at.milliseconds), .text(code), .text(player.rawValue))
        case .playerReclaimed(let player, let tokenHash, _):
            try playerReclaimed.run(.text(tokenHash), .text(code), .text(player.rawValue))
        case .answer(let answer):
            try insertAnswer.run(
                .text(code), .text(answer.player.rawValue), .int(answer.question), .int(answer.option), .integer(answer.receivedAt.milliseconds),
                .int(answer.elapsedMs), .bool(answer.correct), .int(answer.points)
            )
        case .phase(let phase):
            try insertTransition.run(.text(code), .text(phase.phase.rawValue), .optional(phase.question), .bool(phase.skipped), .integer(phase.at.milliseconds))
            try updatePhase.run(.text(phase.phase.rawValue), .text(code))
        case .roomUpdated(let settings, let locked, _):
            try updateRoom.run(.text(try Self.json(settings)), .bool(locked), .text(code))
        }
    }

    func purge(_ cutoff: ServerTime) throws -> Int {
        try purgeRooms.run(.integer(cutoff.milliseconds))
        return purgeRooms.changes
    }

    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
