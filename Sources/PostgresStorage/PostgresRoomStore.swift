import Foundation
import Locking
import StoryCircleCore

/// Rooms in PostgreSQL, with the same promises as `SQLiteRoomStore`, for several nodes sharing one
/// database: a record's completion runs only after the COMMIT that contains it.
///
/// Writes go through one writer thread and connection that takes everything queued and commits it as one
/// transaction (group commit), sent as a pipeline: the whole batch, its BEGIN and its COMMIT travel in one
/// round trip. When writes fail, nothing in the failed transaction is reported durable:
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
/// `@unchecked Sendable`: the write queue is guarded by its `LockedCondition`; the writer connection and the blocked
/// rooms are only used on the writer thread; the other connections only inside their `Locked`.
public final class PostgresRoomStore: RoomLeases, @unchecked Sendable {
    private typealias Completion = @Sendable ((any Error)?) -> Void

    private enum Job {
        case record(RoomRecord, room: String, resuming: Bool, lease: RoomLease?, done: Completion)
        case createRoom(RoomHeader, done: Completion)
        case purge(ServerTime, done: @Sendable (Result<Int, any Error>) -> Void)
        case probe(done: Completion)
        case stop

        var kind: String {
            switch self {
            case .record(let record, _, _, _, _): record.kind
            case .createRoom: "room.created"
            case .purge: "purge"
            case .probe: "probe"
            case .stop: "stop"
            }
        }
    }

    public let settings: PostgresSettings
    /// The jobs waiting for the writer, and whether it has taken the stop (later jobs then fail).
    private struct WriteQueue {
        var jobs: [Job] = []
        var stopped = false
    }

    private let queue = LockedCondition(WriteQueue())
    private let writerFinished = LockedCondition(false)
    private let reader: Locked<PostgresConnection?>
    private let leaseConnection = Locked<PostgresConnection?>(nil)
    /// Set by `close`: reads and lease calls then fail rather than open new connections.
    private let isClosed = Locked(false)
    private let commits = Locked(0)
    private let currentHealth = Locked<StoreHealth>(.ok)
    /// This store's row in `store_probe`, so that probes of several nodes never wait for each other.
    private let probeKey = UUID().uuidString
    /// The most records one transaction takes, so one huge burst does not delay every completion.
    private let maxBatch = 4_096
    /// The most statements one pipeline carries (see `PostgresConnection.pipeline`).
    private let pipelineLength = 256

    /// Connects, creating or migrating the schema as needed, and proves it can write there; fails if the
    /// database cannot be reached, cannot be written or is newer than this code.
    public init(_ settings: PostgresSettings) throws {
        self.settings = settings
        let writer = try PostgresConnection(settings.connectionParameters)
        try PostgresMigrations.migrate(writer, now: Self.now().milliseconds)
        try WriterStatements.prepare(on: writer)
        // A real write: a read-only server (a standby, default_transaction_read_only) only shows on one.
        let probe = WriterStatements.probe(key: probeKey, at: Self.now())
        try writer.pipeline([.sql("BEGIN"), probe.pipelined, .sql("COMMIT")]).forEach { outcome in
            if case .failed(let error) = outcome { throw error }
        }
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
        if let error = waitForWriter({ .createRoom(header, done: $0) }) { throw error }
    }

    public func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.record(record, room: code, resuming: resuming, lease: nil, done: whenDurable))
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
        try waitForWriter { .purge(cutoff, done: $0) }.get()
    }

    public var health: StoreHealth { currentHealth.withLock { $0 } }

    public func probe(_ done: @escaping @Sendable (StoreHealth) -> Void) {
        enqueue(.probe { [currentHealth] _ in done(currentHealth.withLock { $0 }) })
    }

    /// Writes everything queued, then stops the writer and closes the connections. Appends after `close`
    /// fail.
    public func close() {
        queue.withLockAndWake { queue in
            if !queue.stopped { queue.jobs.append(.stop) }
        }
        writerFinished.waitUntil({ $0 }, then: { _ in })
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
                        SET node = excluded.node, epoch = excluded.epoch, expires_at = excluded.expires_at,
                            wanted_by = NULL, wanted_at = NULL
                        WHERE o.expires_at <= now()
                    RETURNING o.epoch, floor(extract(epoch FROM o.expires_at) * 1000)::bigint
                    """, [.text(room), .text(node), .integer(milliseconds)])
            } catch let error as PostgresError where error.sqlState == "23503" {
                throw RoomLeaseError.unknownRoom(room)
            }
            guard rows.count == 1 else {
                // The holder reads the wish at its next renewal and hands the room over. Not recorded by the
                // holder itself (a hello racing its own handover), which would hide another node's wish.
                let wisher = try connection.query("""
                    UPDATE room_owners SET wanted_by = $2::text, wanted_at = now()
                    WHERE room_code = $1::text AND node <> $2::text AND expires_at > now()
                    RETURNING node
                    """, [.text(room), .text(node)])
                if wisher.count > 0 { throw RoomLeaseError.held(room: room, by: wisher.text(0, 0)) }
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
        var renewed: [Int64: (expiry: Int64, deadline: ContinuousClock.Instant, wantedBy: String?)] = [:]
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
                    RETURNING o.epoch, floor(extract(epoch FROM o.expires_at) * 1000)::bigint,
                        CASE WHEN o.wanted_by <> o.node AND o.wanted_at > now() - $5::integer * $4::bigint * interval '1 millisecond'
                            THEN o.wanted_by END
                    """, [.textArray(group.map(\.room)), .integerArray(group.map(\.epoch)), .text(node), .integer(milliseconds), .int(RoomLease.wantedWithin)])
                for row in 0..<rows.count {
                    let wantedBy = rows.isNull(row, 2) ? nil : rows.text(row, 2)
                    renewed[rows.int64(row, 0)] = (rows.int64(row, 1), sent + .milliseconds(milliseconds), wantedBy)
                }
            }
        }
        return leases.compactMap { lease in
            guard let match = renewed[lease.epoch] else { return nil }
            var extended = lease
            extended.expiresAt = ServerTime(milliseconds: match.expiry)
            extended.deadline = match.deadline
            extended.wantedBy = match.wantedBy
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

    public func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.record(record, room: lease.room, resuming: resuming, lease: lease, done: whenDurable))
    }

    // MARK: - Connections

    /// Runs `body` on the reader, replacing a lost connection and trying once more (reads are safe to repeat).
    private func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard !isClosed.withLock({ $0 }) else { throw StoreFailure(.unavailable, record: "read", reason: Self.closedReason) }
        return try reader.withLock { connection in
            try Self.withConnection(&connection, settings, retrying: true, what: "read", body)
        }
    }

    private func withLeaseConnection<T>(retrying: Bool, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard !isClosed.withLock({ $0 }) else { throw StoreFailure(.unavailable, record: "lease", reason: Self.closedReason) }
        return try leaseConnection.withLock { connection in
            try Self.withConnection(&connection, settings, retrying: retrying, what: "lease", body)
        }
    }

    private static let closedReason = "the room store is closed"

    private static func now() -> ServerTime {
        ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
    }

    /// Runs `body` on `connection`, opening one first if there is none (or it broke). With `retrying`, a
    /// connection lost along the way is replaced and `body` run once more.
    private static func withConnection<T>(
        _ connection: inout PostgresConnection?, _ settings: PostgresSettings, retrying: Bool, what: String,
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
                if attempts == 0 { throw StoreFailure(.unavailable, record: what, reason: error.description) }
            }
        }
    }

    // MARK: - Writing

    private func enqueue(_ job: Job) {
        let queued = queue.withLockAndWake { queue in
            if queue.stopped { return false }
            queue.jobs.append(job)
            return true
        }
        if !queued {
            Self.fail(job, StoreFailure(.unavailable, record: job.kind, reason: Self.closedReason))
        }
    }

    /// Queues the job `job` makes around its completion, and blocks until the writer has run that: the
    /// synchronous calls (room creation, purges), made from threads that may block.
    private func waitForWriter<Outcome: Sendable>(_ job: (@escaping @Sendable (Outcome) -> Void) -> Job) -> Outcome {
        let outcome = LockedCondition<Outcome?>(nil)
        enqueue(job { result in outcome.withLockAndWake { $0 = result } })
        return outcome.waitUntil({ $0 != nil }, then: { $0! })
    }

    private static func fail(_ job: Job, _ error: any Error) {
        switch job {
        case .record(_, _, _, _, let done), .createRoom(_, let done), .probe(let done): done(error)
        case .purge(_, let done): done(.failure(error))
        case .stop: break
        }
    }

    private func writeLoop(_ initial: PostgresConnection) {
        var connection: PostgresConnection? = initial
        /// Rooms with a record that failed, and why: their later records fail untried until one resumes.
        var blocked: [String: StoreFailure] = [:]
        while true {
            let (batch, stopping) = queue.waitUntil({ !$0.jobs.isEmpty }) { [maxBatch] queue in
                let batch = Array(queue.jobs.prefix(maxBatch))
                queue.jobs.removeFirst(batch.count)
                let stopping = batch.contains { if case .stop = $0 { true } else { false } }
                if stopping { queue.stopped = true }
                return (batch, stopping)
            }

            commit(batch, &connection, &blocked)
            if stopping {
                let leftovers = queue.withLock { queue in
                    defer { queue.jobs = [] }
                    return queue.jobs
                }
                leftovers.forEach { Self.fail($0, StoreFailure(.unavailable, record: $0.kind, reason: Self.closedReason)) }
                connection = nil
                writerFinished.withLockAndWake { $0 = true }
                return
            }
        }
    }

    /// One statement of a batch: which job it serves and what to send.
    private struct Work {
        var job: Int
        /// The room it writes to, which decides the order of lock taking.
        var room: String
        /// The sequence whose order it is part of (records only): its room's records, as written by one
        /// holder of the room. Under a lease that is the room and the lease's epoch, so a new holder does
        /// not wait for a failure of the one before it (which started again from the store anyway).
        var order: String?
        var statement: WriterStatements.Statement

        static func order(room: String, lease: RoomLease?) -> String {
            lease.map { "\(room)@\($0.epoch)" } ?? room
        }
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

    /// One transaction for the batch's records, rooms and probes, then one per purge; each job's completion
    /// runs after the commit that decides it, in the order the jobs were queued.
    private func commit(_ batch: [Job], _ connection: inout PostgresConnection?, _ blocked: inout [String: StoreFailure]) {
        var outcomes = [(any Error)?](repeating: nil, count: batch.count)
        var work: [Work] = []
        var purges: [Int] = []
        for (index, job) in batch.enumerated() {
            switch job {
            case .record(let record, let room, let resuming, let lease, _):
                let order = Work.order(room: room, lease: lease)
                if resuming { blocked[order] = nil }
                if let cause = blocked[order] {
                    outcomes[index] = Self.behind(cause, record: record.kind)
                    continue
                }
                do {
                    work.append(Work(job: index, room: room, order: order, statement: try WriterStatements.write(record, room: room, lease: lease)))
                } catch {
                    let failure = StoreFailure(.rejected, record: record.kind, reason: Self.reason(error))
                    outcomes[index] = failure
                    blocked[order] = failure
                }
            case .createRoom(let header, _):
                do {
                    work.append(Work(job: index, room: header.code, order: nil, statement: try WriterStatements.create(header)))
                } catch {
                    outcomes[index] = StoreFailure(.rejected, record: job.kind, reason: Self.reason(error))
                }
            case .probe:
                work.append(Work(job: index, room: "", order: nil, statement: WriterStatements.probe(key: probeKey, at: Self.now())))
            case .purge:
                purges.append(index)
            case .stop:
                break
            }
        }
        // Rooms in a fixed order, each room's records in theirs: every transaction that locks several lease
        // rows (this one, `renew`) takes them in the same order, so they cannot deadlock.
        work = work.enumerated().sorted { ($0.element.room, $0.offset) < ($1.element.room, $1.offset) }.map(\.element)

        var retried = false
        var mayHaveCommitted = false
        attempts: while !work.isEmpty {
            do {
                let statuses = try transaction(work, &connection)
                currentHealth.withLock { $0 = .ok }
                commits.withLock { $0 += 1 }
                // A record refused for its lease does not block its room: a lease that is lost stays lost,
                // so every later record under it is refused the same way.
                for (item, status) in zip(work, statuses) {
                    outcomes[item.job] = item.statement.outcome(status)
                }
                break attempts
            } catch let failure as StatementFailed {
                let item = work[failure.index]
                let refusal = StoreFailure(.rejected, record: item.statement.record, reason: failure.error.message)
                outcomes[item.job] = refusal
                var rest: [Work] = []
                for (offset, other) in work.enumerated() where offset != failure.index {
                    if offset > failure.index, let order = item.order, other.order == order {
                        outcomes[other.job] = Self.behind(refusal, record: other.statement.record)
                    } else {
                        rest.append(other)
                    }
                }
                if let order = item.order { blocked[order] = refusal }
                work = rest
            } catch let failure as BatchFailed {
                mayHaveCommitted = mayHaveCommitted || failure.mayHaveCommitted
                if failure.error.connectionLost {
                    connection = nil
                    // Once more on a new connection: the writes are idempotent, so a batch that did commit
                    // is recognised, not doubled.
                    if !retried {
                        retried = true
                        continue attempts
                    }
                }
                let reason = mayHaveCommitted && failure.error.connectionLost
                    ? "the connection was lost during a commit, whose outcome is unknown (\(failure.error.description))"
                    : failure.error.description
                failBatch(work, reason: reason, &outcomes, &blocked)
                break attempts
            } catch {
                failBatch(work, reason: Self.reason(error), &outcomes, &blocked)
                break attempts
            }
        }

        var purged: [Int: Int] = [:]
        for index in purges {
            guard case .purge(let cutoff, _) = batch[index] else { continue }
            do {
                purged[index] = try Self.withConnection(&connection, settings, retrying: true, what: "purge", prepare: WriterStatements.prepare(on:)) { connection in
                    try connection.query("WITH purged AS (DELETE FROM rooms WHERE created_at < $1::bigint RETURNING 1) SELECT count(*) FROM purged", [.integer(cutoff.milliseconds)]).int(0, 0)
                }
            } catch {
                outcomes[index] = StoreFailure.from(error, record: "purge")
            }
        }

        for (index, job) in batch.enumerated() {
            switch job {
            case .record(_, _, _, _, let done), .createRoom(_, let done), .probe(let done): done(outcomes[index])
            case .purge(_, let done): done(outcomes[index].map { .failure($0) } ?? .success(purged[index] ?? 0))
            case .stop: break
            }
        }
    }

    /// Fails every job of `work` for a failure of the database: the store is failing until a write succeeds
    /// (set before any completion runs, so whoever hears of the failure finds the store failing).
    private func failBatch(_ work: [Work], reason: String, _ outcomes: inout [(any Error)?], _ blocked: inout [String: StoreFailure]) {
        let now = Self.now()
        currentHealth.withLock { health in
            if case .failing(let since, _) = health {
                health = .failing(since: since, reason: reason)
            } else {
                health = .failing(since: now, reason: reason)
            }
        }
        for item in work {
            let failure = StoreFailure(.unavailable, record: item.statement.record, reason: reason)
            outcomes[item.job] = failure
            if let order = item.order { blocked[order] = failure }
        }
    }

    /// The failure of a record that was not tried because an earlier one of its room failed.
    private static func behind(_ cause: StoreFailure, record: String) -> StoreFailure {
        StoreFailure(.unavailable, record: record, reason: "an earlier record of this room was not stored (\(cause.reason))")
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as StoreFailure: failure.reason
        case let postgres as PostgresError: postgres.message
        default: String(describing: error)
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
            SELECT room_code, id, nickname, token_hash, joined_at, kicked_at, blocked FROM players
            WHERE room_code IN (\(rooms)) ORDER BY room_code, joined_at, seq
            """, parameters)
        for row in 0..<players.count {
            guard let position = positions[players.text(row, 0)] else { continue }
            let id = players.text(row, 1)
            archives[position].players.append(PlayerRecord(id: id, nickname: players.text(row, 2), tokenHash: players.text(row, 3), joinedAt: ServerTime(milliseconds: players.int64(row, 4))))
            if !players.isNull(row, 5) { archives[position].kicked.insert(id) }
            if players.bool(row, 6) { archives[position].blocked.insert(id) }
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
