import Foundation
import Locking
import RoomStoreSupport
import StoryCircleCore

/// Rooms in PostgreSQL, with the same promises as `SQLiteRoomStore`, for several nodes sharing one
/// database: a record's completion runs only after the COMMIT that contains it.
///
/// Writes go through the group-commit writer (`GroupCommitWriter`, shared with SQLite: one thread and
/// connection that takes everything queued and commits it as one transaction), sent as a pipeline: the
/// whole batch, its BEGIN and its COMMIT travel in one round trip. When writes fail, nothing in the failed
/// transaction is reported durable:
/// - a record that fails on its own data (a different record under its key, a room that does not exist)
///   is rejected alone: the transaction is rolled back and the batch runs again without it;
/// - a failure of the database (unreachable, shutting down, out of space) fails the whole batch. A lost
///   connection is first replaced and the batch run once more: every write is idempotent (natural keys,
///   compared on conflict), so a batch that did commit is recognised, not doubled. If that fails too, a
///   batch whose COMMIT had been sent is reported as failed all the same, its outcome unknown: the store,
///   not the report, is the truth, and writing the records again is safe.
/// Either way the rooms whose records failed are blocked (`RoomStore.append`) until they resume, so what
/// is stored of a room is always a prefix of what it decided. Reads and lease calls use connections of
/// their own, under locks.
///
/// `@unchecked Sendable`: the write queue, the writer connection and the blocked rooms belong to the
/// writer (`GroupCommitWriter` and its `PostgresCommitter`); the other connections are only used inside
/// their `Locked`.
public final class PostgresRoomStore: RoomLeases, @unchecked Sendable {
    public let settings: PostgresSettings
    let writer: GroupCommitWriter
    private let reader: Locked<PostgresConnection?>
    private let leaseConnection = Locked<PostgresConnection?>(nil)
    /// The story library's changes (`PostgresRoomStore+Stories`).
    let libraryConnection = Locked<PostgresConnection?>(nil)
    /// Three: reads, lease calls and the library's changes have a connection each.
    let threads = StoreThreads(name: "postgres-store", count: 3)
    /// Set by `close`: reads and lease calls then fail rather than open new connections.
    let isClosed = Locked(false)

    /// Connects, creating or migrating the schema as needed, and proves it can write there; fails if the
    /// database cannot be reached, cannot be written or is newer than this code.
    public init(_ settings: PostgresSettings) throws {
        self.settings = settings
        let connection = try PostgresConnection(settings.connectionParameters, answerTimeout: settings.answerTimeout)
        try PostgresMigrations.migrate(connection, now: Self.now().milliseconds)
        try WriterStatements.prepare(on: connection)
        // This store's row in `store_probe`, so that probes of several nodes never wait for each other.
        let probeKey = UUID().uuidString
        // A real write: a read-only server (a standby, default_transaction_read_only) only shows on one.
        let probe = WriterStatements.probe(key: probeKey, at: Self.now())
        try connection.pipeline([.sql("BEGIN"), probe.pipelined, .sql("COMMIT")]).forEach { outcome in
            if case .failed(let error) = outcome { throw error }
        }
        reader = Locked(try PostgresConnection(settings.connectionParameters, answerTimeout: settings.answerTimeout))
        writer = GroupCommitWriter(name: "postgres-writer", committer: PostgresCommitter(settings: settings, connection: connection, probeKey: probeKey))
    }

    /// Transactions committed so far (a measure of how well writes are grouped).
    public var commitCount: Int { writer.commitCount }

    /// The schema version of the database.
    public func schemaVersion() async throws -> Int {
        try await read { try $0.query("SELECT coalesce(max(version), 0) FROM schema_migrations").int(0, 0) }
    }

    // MARK: - RoomStore

    public func createRoom(_ header: RoomHeader) async throws {
        try await writer.write(.createRoom(header))
    }

    public func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        writer.submit(.record(record, room: code, lease: nil), resuming: resuming, whenDurable: whenDurable)
    }

    public func archive(room code: String) async throws -> RoomArchive? {
        try await read { try Self.loadArchives(.room(code), from: $0).first }
    }

    public func unfinishedRooms() async throws -> [RoomArchive] {
        try await read { try Self.loadArchives(.unfinished, from: $0) }
    }

    public func summaries() async throws -> [RoomSummary] {
        try await summaries(scope: .everything)
    }

    public func summaries(scope: OwnerScope) async throws -> [RoomSummary] {
        try await read { connection in
            let condition = scope.condition(alias: "r", sharedColumn: false) { "$\($0)::text" }
            let rows = try connection.query("""
                SELECT code, title, phase, created_at,
                       (SELECT count(*) FROM players p WHERE p.room_code = r.code AND p.kicked_at IS NULL), owner_id, school_id
                FROM rooms r \(condition.map { "WHERE " + $0.sql } ?? "") ORDER BY created_at DESC, code DESC
                """, (condition?.values ?? []).map(PostgresValue.text))
            return (0..<rows.count).map { row in
                RoomSummary(
                    code: rows.text(row, 0), title: rows.text(row, 1), phase: PhaseName(rawValue: rows.text(row, 2)) ?? .lobby,
                    players: rows.int(row, 4), createdAt: ServerTime(milliseconds: rows.int64(row, 3)), owner: Self.owner(rows, row, 5)
                )
            }
        }
    }

    public func codeExists(_ code: String) async throws -> Bool {
        try await read { try $0.query("SELECT 1 FROM rooms WHERE code = $1::text", [.text(code)]).count > 0 }
    }

    public func purge(createdBefore cutoff: ServerTime) async throws -> Int {
        try await writer.write(.purge(createdBefore: cutoff))
    }

    public var health: StoreHealth { writer.health }

    /// Everything, leases included: several nodes may share the database, so each room runs only on the
    /// node that holds its lease.
    public var offers: Storage { Storage(rooms: self, classes: self, library: self, pictures: self, leases: self, accounts: self, ownership: self, childData: self, audit: self, retention: self, roster: self) }

    public func probe() async -> StoreHealth {
        _ = try? await writer.write(.probe)
        return writer.health
    }

    /// Writes everything queued, then stops the writer and closes the connections. Appends after `close`
    /// fail.
    public func close() async {
        await writer.stop()
        isClosed.withLock { $0 = true }
        // After the calls already queued, on the threads whose connections these are.
        await threads.shutDown()
        reader.withLock { $0 = nil }
        leaseConnection.withLock { $0 = nil }
        libraryConnection.withLock { $0 = nil }
    }

    // MARK: - Connections

    /// Runs `body` on the reader, on the store's thread, replacing a lost connection and trying once more
    /// (reads are safe to repeat).
    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await threads.run { [self] in
            guard !isClosed.withLock({ $0 }) else { throw StoreFailure(.unavailable, record: "read", reason: GroupCommit.closedReason) }
            return try reader.withLock { connection in
                try Self.withConnection(&connection, settings, retrying: true, what: "read", body)
            }
        }
    }

    func withLeaseConnection<T: Sendable>(retrying: Bool, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await threads.run { [self] in
            guard !isClosed.withLock({ $0 }) else { throw StoreFailure(.unavailable, record: "lease", reason: GroupCommit.closedReason) }
            return try leaseConnection.withLock { connection in
                try Self.withConnection(&connection, settings, retrying: retrying, what: "lease", body)
            }
        }
    }

    static func now() -> ServerTime {
        ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
    }

    /// Runs `body` on `connection`, opening one first if there is none (or it broke). With `retrying`, a
    /// connection lost along the way is replaced and `body` run once more.
    static func withConnection<T>(
        _ connection: inout PostgresConnection?, _ settings: PostgresSettings, retrying: Bool, what: String,
        prepare: (PostgresConnection) throws -> Void = { _ in }, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        var attempts = retrying ? 2 : 1
        while true {
            attempts -= 1
            do {
                if connection?.isUsableAfterIdle != true {
                    connection = nil
                    let fresh = try PostgresConnection(settings.connectionParameters, answerTimeout: settings.answerTimeout)
                    try prepare(fresh)
                    connection = fresh
                }
                return try body(connection!)
            } catch let error as PostgresError where error.connectionLost {
                connection = nil
                if attempts == 0 { throw StoreFailure(.unavailable, record: what, reason: error.description) }
            }
        }
    }

    static func rollBack(_ connection: PostgresConnection) {
        guard connection.isUsable, connection.isInTransaction else { return }
        try? connection.execute("ROLLBACK")
    }

    /// `body` between `begin` and COMMIT on `connection`, rolled back if it throws.
    static func inTransaction<T>(_ connection: PostgresConnection, begin: StaticString = "BEGIN", _ body: (PostgresConnection) throws -> T) throws -> T {
        try connection.execute(begin)
        do {
            let result = try body(connection)
            try connection.execute("COMMIT")
            return result
        } catch {
            rollBack(connection)
            throw error
        }
    }

    /// Runs `body` in one transaction on the library's connection, on the store's threads: the changes of
    /// the library, classes, accounts, owners and children's data. Not tried again on a lost connection
    /// (the caller is told the store was unavailable, and may ask again). A unique index's refusal is
    /// `taken` when given (another node got there first; only the index `takenOn` names, if any); any other
    /// PostgreSQL failure is a `StoreFailure` about `record`. The caller's own errors pass as they are.
    @discardableResult
    func libraryChange<T: Sendable>(
        _ record: String, taken: (any Error)? = nil, takenOn index: String? = nil, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        do {
            return try await threads.run { [self] in
                guard !isClosed.withLock({ $0 }) else { throw StoreFailure(.unavailable, record: record, reason: "the room store is closed") }
                return try libraryConnection.withLock { connection in
                    try Self.withConnection(&connection, settings, retrying: false, what: record) { try Self.inTransaction($0, body) }
                }
            }
        } catch let error as PostgresError {
            if error.sqlState == "23505", let taken, index.map(error.message.contains) ?? true { throw taken }
            throw StoreFailure(error.isCausedByItsData ? .rejected : .unavailable, record: record, reason: error.description)
        }
    }

    // MARK: - Reading

    enum Selection {
        case room(String)
        case unfinished
        /// The rooms of a class, newest first.
        case ofClass(String)
    }

    /// Every room of `selection` with everything about it, from one snapshot (a repeatable-read transaction),
    /// in four queries whatever the number of rooms.
    static func loadArchives(_ selection: Selection, from connection: PostgresConnection) throws -> [RoomArchive] {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let archives = try loadArchivesInTransaction(selection, from: connection)
            try connection.execute("COMMIT")
            return archives
        } catch {
            rollBack(connection)
            throw error
        }
    }

    private static func loadArchivesInTransaction(_ selection: Selection, from connection: PostgresConnection) throws -> [RoomArchive] {
        let (rooms, parameters): (String, [PostgresValue]) = switch selection {
        case .room(let code): ("SELECT code FROM rooms WHERE code = $1::text", [.text(code)])
        case .unfinished: ("SELECT code FROM rooms WHERE phase <> 'finished'", [])
        case .ofClass(let id): ("SELECT code FROM rooms WHERE class_id = $1::text", [.text(id)])
        }
        let header = try connection.query("""
            SELECT code, title, story, settings, teacher_token_hash, dashboard_token_hash, locked, created_at, story_id, class_id, owner_id, school_id
            FROM rooms WHERE code IN (\(rooms)) ORDER BY created_at, code
            """, parameters)
        var archives: [RoomArchive] = []
        var positions: [String: Int] = [:]
        for row in 0..<header.count {
            let code = header.text(row, 0)
            guard let story = Story.load(json: Data(header.text(row, 2).utf8)).value else {
                throw PostgresError.client("the stored story of room \(code) no longer loads", "restoring room \(code)")
            }
            let settings = try JSONDecoder().decode(RoomSettings.self, from: Data(header.text(row, 3).utf8))
            let credentials = RoomCredentials(teacherTokenHash: header.text(row, 4), dashboardTokenHash: header.text(row, 5))
            var archive = RoomArchive(header: RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: ServerTime(milliseconds: header.int64(row, 7)), storyID: header.isNull(row, 8) ? nil : header.text(row, 8), classID: header.isNull(row, 9) ? nil : header.text(row, 9), owner: owner(header, row, 10)))
            archive.locked = header.bool(row, 6)
            positions[code] = archives.count
            archives.append(archive)
        }
        guard !archives.isEmpty else { return [] }

        let players = try connection.query("""
            SELECT room_code, id, nickname, token_hash, joined_at, kicked_at, blocked, member_id, released_at FROM players
            WHERE room_code IN (\(rooms)) ORDER BY room_code, joined_at, seq
            """, parameters)
        for row in 0..<players.count {
            guard let position = positions[players.text(row, 0)] else { continue }
            let id = PlayerID(players.text(row, 1))
            archives[position].players.append(PlayerRecord(
                id: id, nickname: players.text(row, 2), tokenHash: players.text(row, 3), joinedAt: ServerTime(milliseconds: players.int64(row, 4)),
                member: players.isNull(row, 7) ? nil : MemberID(players.text(row, 7))
            ))
            if !players.isNull(row, 5) { archives[position].kicked.insert(id) }
            if players.bool(row, 6) { archives[position].blocked.insert(id) }
            if !players.isNull(row, 8) { archives[position].released.insert(id) }
        }
        let releasedTokens = try connection.query("SELECT room_code, token_hash FROM released_tokens WHERE room_code IN (\(rooms))", parameters)
        for row in 0..<releasedTokens.count {
            guard let position = positions[releasedTokens.text(row, 0)] else { continue }
            archives[position].releasedTokenHashes.insert(releasedTokens.text(row, 1))
        }
        let answers = try connection.query("""
            SELECT room_code, player_id, question, option, received_at, elapsed_ms, correct, points FROM answers
            WHERE room_code IN (\(rooms)) ORDER BY room_code, received_at, seq
            """, parameters)
        for row in 0..<answers.count {
            guard let position = positions[answers.text(row, 0)] else { continue }
            archives[position].answers.append(AnswerRecord(
                player: PlayerID(answers.text(row, 1)), question: answers.int(row, 2), option: answers.int(row, 3), receivedAt: ServerTime(milliseconds: answers.int64(row, 4)),
                elapsedMs: answers.int(row, 5), correct: answers.bool(row, 6), points: answers.int(row, 7)
            ))
        }
        let transitions = try connection.query("""
            SELECT room_code, phase, question, skipped, at FROM transitions
            WHERE room_code IN (\(rooms)) ORDER BY room_code, seq
            """, parameters)
        for row in 0..<transitions.count {
            guard let position = positions[transitions.text(row, 0)], let phase = PhaseName(rawValue: transitions.text(row, 1)) else { continue }
            archives[position].phases.append(PhaseRecord(phase: phase, question: transitions.optionalInt(row, 2), skipped: transitions.bool(row, 3), at: ServerTime(milliseconds: transitions.int64(row, 4))))
        }
        return archives
    }
}
