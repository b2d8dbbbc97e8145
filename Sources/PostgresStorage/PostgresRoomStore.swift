import Foundation
import Locking
import StoryCircleCore

/// What the PostgreSQL store reports besides PostgreSQL's own errors.
public enum PostgresStoreError: Error, CustomStringConvertible, Sendable {
    /// The database could not be reached: nothing of the batch was stored.
    case unavailable(PostgresError)
    /// The connection was lost while the batch's COMMIT was on its way and could not be re-established to
    /// write it again: it may or may not be stored. Reported as a failure: the room goes back to the store,
    /// which holds the truth, and writing the records again is safe (each is recognised if already there).
    case commitOutcomeUnknown(PostgresError)
    /// A different record is already stored under this one's key (another answer to the same question by
    /// the same child, another player with the same id): nothing was written for it.
    case conflict(room: String, record: String)
    /// Another room already has this code.
    case codeTaken(String)
    /// The store was closed.
    case closed

    public var description: String {
        switch self {
        case .unavailable(let error): "the database is unavailable: \(error)"
        case .commitOutcomeUnknown(let error): "the connection was lost during a commit, whose outcome is unknown: \(error)"
        case .conflict(let room, let record): "room \(room) already has a different \(record) stored under the same key"
        case .codeTaken(let code): "room code \(code) is already taken"
        case .closed: "the room store is closed"
        }
    }
}

/// Rooms in PostgreSQL, with the same promises as `SQLiteRoomStore`, for several nodes sharing one
/// database: a record's completion runs only after the COMMIT that contains it.
///
/// Writes go through one writer thread and connection that takes everything queued and commits it as one
/// transaction (group commit), sent as a pipeline: the whole batch, its BEGIN and its COMMIT travel in one
/// round trip. Each record is one statement that reports what it did (written, already there, conflicting,
/// lease lost) instead of raising an error, so one bad record does not abort the others; a record that
/// still fails on its data is taken out and the batch is run again without it. A lost connection is
/// replaced and the batch run once more: every write is idempotent (natural keys, compared on conflict), so
/// running a batch that did commit again stores nothing twice. Reads and lease calls use connections of
/// their own, under locks.
///
/// `@unchecked Sendable`: the write queue is guarded by `condition`; the writer connection is only used on
/// the writer thread; the other connections only inside their `Locked`.
public final class PostgresRoomStore: RoomLeases, @unchecked Sendable {
    private enum Job {
        case record(RoomRecord, room: String, lease: RoomLease?, done: @Sendable ((any Error)?) -> Void)
        case createRoom(RoomHeader, done: @Sendable ((any Error)?) -> Void)
        case purge(ServerTime, done: @Sendable (Result<Int, any Error>) -> Void)
        case stop
    }

    public let settings: PostgresSettings
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopped = false
    private let writerFinished = DispatchSemaphore(value: 0)
    private let reader: Locked<PostgresConnection?>
    private let leaseConnection = Locked<PostgresConnection?>(nil)
    /// Set by `close`: reads and lease calls then fail rather than open new connections.
    private let isClosed = Locked(false)
    private let commits = Locked(0)
    /// The most records one transaction takes, so one huge burst does not delay every completion.
    private let maxBatch = 4_096
    /// The most statements one pipeline carries (see `PostgresConnection.pipeline`).
    private let pipelineLength = 256

    /// Connects, creating or migrating the schema as needed; fails if the database cannot be reached or is
    /// newer than this code.
    public init(_ settings: PostgresSettings) throws {
        self.settings = settings
        let writer = try PostgresConnection(settings.connectionParameters)
        try PostgresMigrations.migrate(writer, now: Int64(Date().timeIntervalSince1970 * 1_000))
        try WriterStatements.prepare(on: writer)
        reader = Locked(try PostgresConnection(settings.connectionParameters))
        let handOff = ConnectionHandOff(connection: writer)
        let thread = Thread { [self] in self.writeLoop(handOff.connection) }
        thread.name = "postgres-writer"
        thread.start()
    }

    /// Transactions committed so far (a measure of how well writes are grouped).
    public var commitCount: Int { commits.withLock { $0 } }

    /// The schema version of the database.
    public func schemaVersion() throws -> Int {
        try read { try $0.query("SELECT coalesce(max(version), 0) FROM schema_migrations").int(0, 0) }
    }

    // MARK: - RoomStore

    public func createRoom(_ header: RoomHeader) throws {
        let result = Locked<(any Error)??>(nil)
        let done = DispatchSemaphore(value: 0)
        enqueue(.createRoom(header) { error in
            result.withLock { $0 = .some(error) }
            done.signal()
        })
        done.wait()
        if let error = result.withLock({ $0 }) ?? nil { throw error }
    }

    public func append(_ record: RoomRecord, room code: String, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.record(record, room: code, lease: nil, done: whenDurable))
    }

    public func archive(room code: String) throws -> RoomArchive? {
        try read { try Self.loadArchives(.room(code), from: $0).first }
    }

    public func unfinishedRooms() throws -> [RoomArchive] {
        try read { try Self.loadArchives(.unfinished, from: $0) }
    }

    public func summaries() throws -> [RoomSummary] {
        try read { connection in
            let rows = try connection.query("""
                SELECT code, title, phase, created_at,
                       (SELECT count(*) FROM players p WHERE p.room_code = r.code AND p.kicked_at IS NULL)
                FROM rooms r ORDER BY created_at DESC, code DESC
                """)
            return (0..<rows.count).map { row in
                RoomSummary(
                    code: rows.text(row, 0), title: rows.text(row, 1), phase: PhaseName(rawValue: rows.text(row, 2)) ?? .lobby,
                    players: rows.int(row, 4), createdAt: ServerTime(milliseconds: rows.int64(row, 3))
                )
            }
        }
    }

    public func codeExists(_ code: String) throws -> Bool {
        try read { try $0.query("SELECT 1 FROM rooms WHERE code = $1::text", [.text(code)]).count > 0 }
    }

    public func purge(createdBefore cutoff: ServerTime) throws -> Int {
        let result = Locked<Result<Int, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        enqueue(.purge(cutoff) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        })
        done.wait()
        return try result.withLock { $0 }!.get()
    }

    /// Writes everything queued, then stops the writer and closes the connections. Appends after `close`
    /// fail.
    public func close() {
        condition.lock()
        let alreadyStopped = stopped
        if !alreadyStopped {
            queue.append(.stop)
            condition.signal()
        }
        condition.unlock()
        if !alreadyStopped { writerFinished.wait() }
        isClosed.withLock { $0 = true }
        reader.withLock { $0 = nil }
        leaseConnection.withLock { $0 = nil }
    }

    // MARK: - RoomLeases

    public func acquire(room: String, node: String, for duration: Duration) throws -> RoomLease {
        let milliseconds = duration.leaseMilliseconds
        // Not retried on a lost connection: the lease may have been granted, and a second try would find it
        // held. It then lapses at its expiry like any lease of a node that went away.
        return try withLeaseConnection(retrying: false) { connection in
            let sent = ContinuousClock.now
            let rows: PostgresRows
            do {
                rows = try connection.query("""
                    INSERT INTO room_owners AS o (room_code, node, epoch, expires_at)
                    VALUES ($1::text, $2::text, nextval('room_lease_epochs'), now() + $3::bigint * interval '1 millisecond')
                    ON CONFLICT (room_code) DO UPDATE
                        SET node = excluded.node, epoch = excluded.epoch, expires_at = excluded.expires_at
                        WHERE o.expires_at <= now()
                    RETURNING o.epoch, floor(extract(epoch FROM o.expires_at) * 1000)::bigint
                    """, [.text(room), .text(node), .integer(milliseconds)])
            } catch let error as PostgresError where error.sqlState == "23503" {
                throw RoomLeaseError.unknownRoom(room)
            }
            guard rows.count == 1 else {
                let holder = try connection.query("SELECT node FROM room_owners WHERE room_code = $1::text", [.text(room)])
                throw RoomLeaseError.held(room: room, by: holder.count > 0 ? holder.text(0, 0) : "another node")
            }
            return RoomLease(
                room: room, node: node, epoch: rows.int64(0, 0), expiresAt: ServerTime(milliseconds: rows.int64(0, 1)),
                deadline: sent + .milliseconds(milliseconds)
            )
        }
    }

    public func renew(_ leases: [RoomLease], for duration: Duration) throws -> [RoomLease] {
        guard !leases.isEmpty else { return [] }
        let milliseconds = duration.leaseMilliseconds
        // By epoch, which is unique across rooms as well as within one.
        var renewed: [Int64: (expiry: Int64, deadline: ContinuousClock.Instant)] = [:]
        // One statement per node for all of its leases; rows are locked in room order, like the writer's.
        for (node, group) in Dictionary(grouping: leases, by: \.node) {
            try withLeaseConnection(retrying: true) { connection in
                let sent = ContinuousClock.now
                let rows = try connection.query("""
                    UPDATE room_owners AS o SET expires_at = now() + $4::bigint * interval '1 millisecond'
                    FROM (
                        SELECT r.room_code FROM room_owners r
                        JOIN unnest($1::text[], $2::bigint[]) AS l (room_code, epoch)
                            ON r.room_code = l.room_code AND r.epoch = l.epoch
                        WHERE r.node = $3::text AND r.expires_at > now()
                        ORDER BY r.room_code
                        FOR UPDATE OF r
                    ) AS live
                    WHERE o.room_code = live.room_code
                    RETURNING o.epoch, floor(extract(epoch FROM o.expires_at) * 1000)::bigint
                    """, [.textArray(group.map(\.room)), .integerArray(group.map(\.epoch)), .text(node), .integer(milliseconds)])
                for row in 0..<rows.count {
                    renewed[rows.int64(row, 0)] = (rows.int64(row, 1), sent + .milliseconds(milliseconds))
                }
            }
        }
        return leases.compactMap { lease in
            guard let match = renewed[lease.epoch] else { return nil }
            var extended = lease
            extended.expiresAt = ServerTime(milliseconds: match.expiry)
            extended.deadline = match.deadline
            return extended
        }
    }

    public func release(_ lease: RoomLease) throws {
        _ = try withLeaseConnection(retrying: true) { connection in
            try connection.query("""
                UPDATE room_owners SET expires_at = now()
                WHERE room_code = $1::text AND epoch = $2::bigint AND node = $3::text AND expires_at > now()
                """, [.text(lease.room), .integer(lease.epoch), .text(lease.node)])
        }
    }

    public func append(_ record: RoomRecord, under lease: RoomLease, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.record(record, room: lease.room, lease: lease, done: whenDurable))
    }

    // MARK: - Connections

    /// Runs `body` on the reader, replacing a lost connection and trying once more (reads are safe to repeat).
    private func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard !isClosed.withLock({ $0 }) else { throw PostgresStoreError.closed }
        return try reader.withLock { connection in
            try Self.withConnection(&connection, settings, retrying: true, body)
        }
    }

    private func withLeaseConnection<T>(retrying: Bool, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard !isClosed.withLock({ $0 }) else { throw PostgresStoreError.closed }
        return try leaseConnection.withLock { connection in
            try Self.withConnection(&connection, settings, retrying: retrying, body)
        }
    }

    /// Runs `body` on `connection`, opening one first if there is none (or it broke). With `retrying`, a
    /// connection lost along the way is replaced and `body` run once more.
    private static func withConnection<T>(
        _ connection: inout PostgresConnection?, _ settings: PostgresSettings, retrying: Bool,
        prepare: (PostgresConnection) throws -> Void = { _ in }, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        var attempts = retrying ? 2 : 1
        while true {
            attempts -= 1
            do {
                if connection?.isUsableAfterIdle != true {
                    connection = nil
                    let fresh = try PostgresConnection(settings.connectionParameters)
                    try prepare(fresh)
                    connection = fresh
                }
                return try body(connection!)
            } catch let error as PostgresError where error.connectionLost {
                connection = nil
                if attempts == 0 { throw PostgresStoreError.unavailable(error) }
            }
        }
    }

    // MARK: - Writing

    private func enqueue(_ job: Job) {
        condition.lock()
        if stopped {
            condition.unlock()
            Self.fail(job, PostgresStoreError.closed)
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    private static func fail(_ job: Job, _ error: any Error) {
        switch job {
        case .record(_, _, _, let done), .createRoom(_, let done): done(error)
        case .purge(_, let done): done(.failure(error))
        case .stop: break
        }
    }

    private func writeLoop(_ initial: PostgresConnection) {
        var connection: PostgresConnection? = initial
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let batch = Array(queue.prefix(maxBatch))
            queue.removeFirst(batch.count)
            let stopping = batch.contains { if case .stop = $0 { true } else { false } }
            if stopping { stopped = true }
            condition.unlock()

            commit(batch, &connection)
            if stopping {
                condition.lock()
                let leftovers = queue
                queue = []
                condition.unlock()
                leftovers.forEach { Self.fail($0, PostgresStoreError.closed) }
                connection = nil
                writerFinished.signal()
                return
            }
        }
    }

    /// One statement of a batch: which job it serves and what to send.
    private struct Work {
        var job: Int
        var room: String
        var statement: WriterStatements.Statement
    }

    /// A statement that failed on its own data: it is taken out and the rest run again.
    private struct StatementFailed: Error {
        var index: Int
        var error: PostgresError
    }

    /// A batch that failed as a whole; `mayHaveCommitted` when its COMMIT had been sent.
    private struct BatchFailed: Error {
        var error: PostgresError
        var mayHaveCommitted: Bool
    }

    /// One transaction for the batch's records and rooms, then one per purge; each job's completion runs
    /// after the commit that decides it.
    private func commit(_ batch: [Job], _ connection: inout PostgresConnection?) {
        var outcomes = [(any Error)?](repeating: nil, count: batch.count)
        var work: [Work] = []
        var purges: [Int] = []
        for (index, job) in batch.enumerated() {
            do {
                switch job {
                case .record(let record, let room, let lease, _):
                    work.append(Work(job: index, room: room, statement: try WriterStatements.write(record, room: room, lease: lease)))
                case .createRoom(let header, _):
                    work.append(Work(job: index, room: header.code, statement: try WriterStatements.create(header)))
                case .purge:
                    purges.append(index)
                case .stop:
                    break
                }
            } catch {
                outcomes[index] = error
            }
        }
        // Rooms in a fixed order, each room's records in theirs: every transaction that locks several lease
        // rows (this one, `renew`) takes them in the same order, so they cannot deadlock.
        work = work.enumerated().sorted { ($0.element.room, $0.offset) < ($1.element.room, $1.offset) }.map(\.element)

        var retried = false
        var mayHaveCommitted = false
        while !work.isEmpty {
            do {
                let statuses = try transaction(work, &connection)
                for (item, status) in zip(work, statuses) { outcomes[item.job] = item.statement.outcome(status) }
                commits.withLock { $0 += 1 }
                break
            } catch let failure as StatementFailed {
                let item = work[failure.index]
                outcomes[item.job] = failure.error.sqlState == "23505"
                    ? PostgresStoreError.conflict(room: item.room, record: item.statement.record)
                    : failure.error
                work.remove(at: failure.index)
            } catch let failure as BatchFailed {
                mayHaveCommitted = mayHaveCommitted || failure.mayHaveCommitted
                if failure.error.connectionLost {
                    connection = nil
                    // Once more on a new connection: the writes are idempotent, so a batch that did commit
                    // is recognised, not doubled.
                    if !retried {
                        retried = true
                        continue
                    }
                    let error: PostgresStoreError = mayHaveCommitted ? .commitOutcomeUnknown(failure.error) : .unavailable(failure.error)
                    work.forEach { outcomes[$0.job] = error }
                } else {
                    work.forEach { outcomes[$0.job] = failure.error }
                }
                break
            } catch {
                work.forEach { outcomes[$0.job] = error }
                break
            }
        }

        var purged: [Int: Int] = [:]
        for index in purges {
            guard case .purge(let cutoff, _) = batch[index] else { continue }
            do {
                purged[index] = try Self.withConnection(&connection, settings, retrying: true, prepare: WriterStatements.prepare(on:)) { connection in
                    try connection.query("WITH purged AS (DELETE FROM rooms WHERE created_at < $1::bigint RETURNING 1) SELECT count(*) FROM purged", [.integer(cutoff.milliseconds)]).int(0, 0)
                }
            } catch {
                outcomes[index] = error
            }
        }

        for (index, job) in batch.enumerated() {
            switch job {
            case .record(_, _, _, let done), .createRoom(_, let done): done(outcomes[index])
            case .purge(_, let done): done(outcomes[index].map { .failure($0) } ?? .success(purged[index] ?? 0))
            case .stop: break
            }
        }
    }

    /// Runs `work` as one transaction, in pipelines; returns each statement's status.
    private func transaction(_ work: [Work], _ connection: inout PostgresConnection?) throws -> [Int32] {
        let live: PostgresConnection
        do {
            if connection?.isUsableAfterIdle != true {
                connection = nil
                let fresh = try PostgresConnection(settings.connectionParameters)
                try WriterStatements.prepare(on: fresh)
                connection = fresh
            }
            live = connection!
        } catch let error as PostgresError {
            throw BatchFailed(error: error, mayHaveCommitted: false)
        }

        enum Role {
            case begin, statement(Int), commit
        }
        var statuses: [Int32] = []
        statuses.reserveCapacity(work.count)
        var commitSent = false
        do {
            var start = 0
            while start < work.count {
                let end = min(start + pipelineLength, work.count)
                var statements: [PipelineStatement] = []
                var roles: [Role] = []
                if start == 0 {
                    statements.append(.sql("BEGIN"))
                    roles.append(.begin)
                }
                for index in start..<end {
                    statements.append(work[index].statement.pipelined)
                    roles.append(.statement(index))
                }
                if end == work.count {
                    statements.append(.sql("COMMIT"))
                    roles.append(.commit)
                    commitSent = true
                }
                for (outcome, role) in zip(try live.pipeline(statements), roles) {
                    switch (outcome, role) {
                    case (.rows(let rows), .statement):
                        statuses.append(rows.count > 0 ? Int32(rows.int(0, 0)) : 0)
                    case (.rows(let rows), .commit) where rows.commandTag != "COMMIT":
                        throw PostgresError.client("the transaction ended with \(rows.commandTag) instead of COMMIT", "committing")
                    case (.rows, _), (.skipped, _):
                        continue
                    case (.failed(let error), .statement(let index)) where error.isCausedByItsData:
                        throw StatementFailed(index: index, error: error)
                    case (.failed(let error), _):
                        throw error
                    }
                }
                start = end
            }
        } catch let failure as StatementFailed {
            Self.rollBack(live)
            throw failure
        } catch let error as PostgresError {
            Self.rollBack(live)
            throw BatchFailed(error: error, mayHaveCommitted: commitSent && error.connectionLost)
        }
        return statuses
    }

    private static func rollBack(_ connection: PostgresConnection) {
        guard connection.isUsable, connection.isInTransaction else { return }
        try? connection.execute("ROLLBACK")
    }

    // MARK: - Reading

    private enum Selection {
        case room(String)
        case unfinished
    }

    /// Every room of `selection` with everything about it, from one snapshot (a repeatable-read transaction),
    /// in four queries whatever the number of rooms.
    private static func loadArchives(_ selection: Selection, from connection: PostgresConnection) throws -> [RoomArchive] {
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
        }
        let header = try connection.query("""
            SELECT code, title, story, settings, teacher_token_hash, dashboard_token_hash, locked, created_at
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
            var archive = RoomArchive(header: RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: ServerTime(milliseconds: header.int64(row, 7))))
            archive.locked = header.bool(row, 6)
            positions[code] = archives.count
            archives.append(archive)
        }
        guard !archives.isEmpty else { return [] }

        let players = try connection.query("""
            SELECT room_code, id, nickname, token_hash, joined_at, kicked_at FROM players
            WHERE room_code IN (\(rooms)) ORDER BY room_code, joined_at, seq
            """, parameters)
        for row in 0..<players.count {
            guard let position = positions[players.text(row, 0)] else { continue }
            let id = players.text(row, 1)
            archives[position].players.append(PlayerRecord(id: id, nickname: players.text(row, 2), tokenHash: players.text(row, 3), joinedAt: ServerTime(milliseconds: players.int64(row, 4))))
            if !players.isNull(row, 5) { archives[position].kicked.insert(id) }
        }
        let answers = try connection.query("""
            SELECT room_code, player_id, question, option, received_at, elapsed_ms, correct, points FROM answers
            WHERE room_code IN (\(rooms)) ORDER BY room_code, received_at, seq
            """, parameters)
        for row in 0..<answers.count {
            guard let position = positions[answers.text(row, 0)] else { continue }
            archives[position].answers.append(AnswerRecord(
                player: answers.text(row, 1), question: answers.int(row, 2), option: answers.int(row, 3), receivedAt: ServerTime(milliseconds: answers.int64(row, 4)),
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

/// Moves the writer connection to the writer thread. `@unchecked Sendable` because ownership is handed
/// over: after `init` passes it to the thread, nothing else ever touches it.
private struct ConnectionHandOff: @unchecked Sendable {
    let connection: PostgresConnection
}
