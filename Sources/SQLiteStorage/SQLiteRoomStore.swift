import Foundation
import Synchronization
import Locking
import StoryCircleCore

/// Rooms in SQLite (WAL mode, `synchronous=FULL`): a record is durable when its completion runs.
///
/// Writes go through one writer thread that takes everything queued and commits it as one transaction
/// (group commit): under load, one fsync covers hundreds of answers from many rooms, and each record's
/// completion runs only after the commit that contains it. Reads use a second connection, which WAL lets
/// run beside the writer.
///
/// When a write fails, nothing in its transaction is reported durable:
/// - a failure of the database (full, read-only, I/O error, busy) fails the whole batch at once, and the
///   store stops at that first error: SQLite may already have rolled the transaction back, and the
///   statements after it would each commit on their own;
/// - a failure of one record (a constraint) fails that record alone: the transaction is rolled back and
///   the batch runs again without it, so other rooms' records do not pay for it.
/// Either way the rooms whose records failed are blocked (`RoomStore.append`) until they resume.
///
/// `@unchecked Sendable`: the write queue and the reader connection are behind their locks; the writer
/// connection, the blocked rooms and the leases are only used on the writer thread.
public final class SQLiteRoomStore: RoomStore, @unchecked Sendable {
    typealias Completion = @Sendable ((any Error)?) -> Void

    enum Job {
        case record(RoomRecord, room: String, resuming: Bool, lease: RoomLease?, done: Completion)
        case createRoom(RoomHeader, done: Completion)
        case purge(ServerTime, done: @Sendable (Result<Int, any Error>) -> Void)
        case probe(done: Completion)
        /// SQL for the writer connection itself (`runOnWriter`).
        case configure(String, done: Completion)
        case lease(LeaseRequest, done: @Sendable (Result<[RoomLease], any Error>) -> Void)
        case stop

        var isStop: Bool {
            if case .stop = self { true } else { false }
        }

        var kind: String {
            switch self {
            case .record(let record, _, _, _, _): record.kind
            case .createRoom: "room.created"
            case .purge: "purge"
            case .probe: "probe"
            case .configure: "configure"
            case .lease: "lease"
            case .stop: "stop"
            }
        }

        /// The sequence whose order this job is part of (records only): its room's records, as written by
        /// one holder of the room. Under a lease that is the room and the lease's epoch, so a new holder
        /// does not wait for a failure of the one before it (which started again from the store anyway).
        var room: String? {
            guard case .record(_, let room, _, let lease, _) = self else { return nil }
            return lease.map { "\(room)@\($0.epoch)" } ?? room
        }
    }

    public let path: String
    /// What the writer thread has still to take; `stopped` once it took `.stop`.
    private struct WriteQueue {
        var jobs: [Job] = []
        var stopped = false
    }

    private let queue = LockedCondition(WriteQueue())
    private let writerFinished = LockedCondition(false)
    private let reader: Locked<SQLiteDatabase>
    private let commits = Atomic<Int>(0)
    private let batches = Atomic<Int>(0)
    private let currentHealth = Locked<StoreHealth>(.ok)
    /// The most records one transaction takes, so one huge burst does not delay every completion.
    private let maxBatch = 4_096
    /// A commit that starts sooner than this after the last one ended finds the store busy...
    static let busyGap = Duration.milliseconds(2)
    /// ...and waits up to this long for this many records before it commits.
    static let gatherWindow = Duration.microseconds(1_000)
    static let gatherEnough = 8

    /// Opens (creating and migrating as needed) the database at `path`, and proves it can write there.
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let writer: Writer
        do {
            let database = try SQLiteDatabase(path: path)
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            try Migrations.migrate(database, now: Int64(Date().timeIntervalSince1970 * 1_000))
            let statements = try WriterStatements(database)
            // A real write, not a look at the permissions: SQLite quietly opens a file it cannot write
            // read-only, and a read-only mount or a full disk only shows when something is written.
            try database.transaction { try statements.probe() }
            writer = Writer(database: database, statements: statements)
            // Read-only: a slip in a read path fails loudly instead of writing beside the writer thread.
            reader = Locked(try SQLiteDatabase(path: path, readOnly: true))
        } catch let error as SQLiteError {
            throw OpenFailure(error: error, systemReason: Self.systemReasonForWriting(at: path))
        }
        // The thread takes the only reference to the writer, so the connection is closed when the loop
        // ends, before `close()` returns: nothing of it outlives the store's own idea of being closed.
        let handOff = Locked<Writer?>(writer)
        let thread = Thread { [self] in
            if let writer = handOff.withLock({ writer in defer { writer = nil }; return writer }) {
                self.writeLoop(writer)
            }
            self.writerFinished.withLockAndWake { $0 = true }
        }
        thread.name = "sqlite-writer"
        thread.start()
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
    public var commitCount: Int { commits.load(ordering: .relaxed) }

    /// Batches the writer has taken from its queue so far (tests use it to know what the writer is doing).
    var batchesTaken: Int { batches.load(ordering: .acquiring) }

    // MARK: - RoomStore

    public func createRoom(_ header: RoomHeader) throws {
        if let error = waitForWriter({ .createRoom(header, done: $0) }) { throw error }
    }

    public func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.record(record, room: code, resuming: resuming, lease: nil, done: whenDurable))
    }

    public func archive(room code: String) throws -> RoomArchive? {
        try read { try Self.loadArchive(code, from: $0) }
    }

    public func unfinishedRooms() throws -> [RoomArchive] {
        try read { database in
            let statement = try database.prepare("SELECT code FROM rooms WHERE phase <> 'finished' ORDER BY created_at")
            try statement.bind([])
            var codes: [String] = []
            while try statement.step() { codes.append(statement.text(0)) }
            return try codes.compactMap { try Self.loadArchive($0, from: database) }
        }
    }

    public func summaries() throws -> [RoomSummary] {
        try read { database in
            let statement = try database.prepare("""
                SELECT code, title, phase, created_at,
                       (SELECT count(*) FROM players p WHERE p.room_code = r.code AND p.kicked_at IS NULL)
                FROM rooms r ORDER BY created_at DESC
                """)
            try statement.bind([])
            var summaries: [RoomSummary] = []
            while try statement.step() {
                summaries.append(RoomSummary(
                    code: statement.text(0), title: statement.text(1), phase: PhaseName(rawValue: statement.text(2)) ?? .lobby,
                    players: statement.int(4), createdAt: ServerTime(milliseconds: statement.int64(3))
                ))
            }
            return summaries
        }
    }

    public func codeExists(_ code: String) throws -> Bool {
        try read { try $0.integer("SELECT 1 FROM rooms WHERE code = ?", .text(code)) != nil }
    }

    public func purge(createdBefore cutoff: ServerTime) throws -> Int {
        try waitForWriter { .purge(cutoff, done: $0) }.get()
    }

    public var health: StoreHealth { currentHealth.withLock { $0 } }

    public func probe(_ done: @escaping @Sendable (StoreHealth) -> Void) {
        enqueue(.probe { [currentHealth] _ in done(currentHealth.withLock { $0 }) })
    }

    /// Writes everything queued, then stops the writer. Appends after `close` fail.
    public func close() {
        queue.withLockAndWake { queue in
            if !queue.stopped { queue.jobs.append(.stop) }
        }
        writerFinished.waitUntil({ $0 }, then: { _ in })
    }

    /// Runs `sql` on the writer connection, in the writer's turn. Tests use it to make the writer meet a
    /// full disk (`PRAGMA max_page_count`) without filling one.
    func runOnWriter(_ sql: String, done: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue(.configure(sql, done: done))
    }

    func runOnWriter(_ sql: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            runOnWriter(sql) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// The schema version of the database file.
    public func schemaVersion() throws -> Int {
        try read { Int(try $0.integer("SELECT max(version) FROM schema_migrations") ?? 0) }
    }

    // MARK: - Writing

    /// The writer connection and what only the writer thread knows. Handed to the writer thread in `init`;
    /// nothing else touches it after that (`@unchecked Sendable` for the hand-over).
    private final class Writer: @unchecked Sendable {
        let database: SQLiteDatabase
        let statements: WriterStatements
        /// Rooms with a record that failed, and why: their later records fail untried until one resumes.
        var blocked: [String: StoreFailure] = [:]
        /// Who holds which room (see `RoomLeases`).
        var leases = RoomLeaseTable()

        init(database: SQLiteDatabase, statements: WriterStatements) {
            self.database = database
            self.statements = statements
        }
    }

    func enqueue(_ job: Job) {
        let queued = queue.withLockAndWake { queue in
            if queue.stopped { return false }
            queue.jobs.append(job)
            return true
        }
        if !queued {
            Self.fail(job, StoreFailure(.unavailable, record: job.kind, reason: "the room store is closed"))
        }
    }

    /// Queues the job `job` makes around its completion, and blocks until the writer has run that: the
    /// synchronous calls (room creation, purges, leases), made from threads that may block.
    func waitForWriter<Outcome: Sendable>(_ job: (@escaping @Sendable (Outcome) -> Void) -> Job) -> Outcome {
        let outcome = LockedCondition<Outcome?>(nil)
        enqueue(job { result in outcome.withLockAndWake { $0 = result } })
        return outcome.waitUntil({ $0 != nil }, then: { $0! })
    }

    private static func fail(_ job: Job, _ failure: StoreFailure) {
        switch job {
        case .record(_, _, _, _, let done), .createRoom(_, let done), .probe(let done), .configure(_, let done): done(failure)
        case .purge(_, let done): done(.failure(failure))
        case .lease(_, let done): done(.failure(failure))
        case .stop: break
        }
    }

    private func writeLoop(_ writer: Writer) {
        var lastCommitEnded = ContinuousClock.now - .seconds(1)
        while true {
            queue.waitUntil({ !$0.jobs.isEmpty }) { _ in }
            // Group commit that gathers: when commits come back to back (the disk is the bottleneck, and
            // each commit's fsync costs the server CPU as well as time), a lone record waits a moment for
            // company, so one fsync serves several. An idle store commits at once.
            if ContinuousClock.now - lastCommitEnded < Self.busyGap {
                _ = queue.waitUntil({ $0.jobs.count >= Self.gatherEnough || $0.jobs.contains(where: \.isStop) }, timeout: Self.gatherWindow)
            }
            let (batch, stopping) = queue.waitUntil({ !$0.jobs.isEmpty }) { [maxBatch] queue in
                let batch = Array(queue.jobs.prefix(maxBatch))
                queue.jobs.removeFirst(batch.count)
                let stopping = batch.contains(where: \.isStop)
                if stopping { queue.stopped = true }
                return (batch, stopping)
            }
            batches.add(1, ordering: .releasing)

            commit(batch, writer)
            lastCommitEnded = .now
            if stopping {
                let leftovers = queue.withLock { queue in
                    defer { queue.jobs = [] }
                    return queue.jobs
                }
                leftovers.forEach { Self.fail($0, StoreFailure(.unavailable, record: $0.kind, reason: "the room store is closed")) }
                return
            }
        }
    }

    private enum Attempt {
        /// `wrote`: the transaction changed something, so its commit proved the disk takes writes (a
        /// purge with nothing to delete commits without writing a page).
        case committed(purged: [Int], wrote: Bool)
        /// Job `index` failed on its own (a constraint); the transaction was rolled back.
        case rejected(index: Int, reason: String)
        /// The database failed; the transaction was rolled back (by SQLite or by us).
        case unavailable(reason: String)
    }

    /// Commits `batch` as one transaction, taking out records that fail on their own. Completions run
    /// afterwards, in the order the jobs were queued.
    ///
    /// Leases are settled first, in queue order: a fenced record is checked against the table as it
    /// stands at its place in the queue, so a write queued before a takeover is judged before it and one
    /// queued after is refused. Nothing else changes the table between that check and the commit (only
    /// this thread does), and the new holder hears of its lease only after the commit, so what it then
    /// loads includes everything the old holder was allowed to write.
    private func commit(_ batch: [Job], _ writer: Writer) {
        var outcomes = [Result<Int, StoreFailure>?](repeating: nil, count: batch.count)
        var leaseOutcomes: [Int: Result<[RoomLease], any Error>] = [:]
        var lost: [Int: RoomLeaseError] = [:]
        var jobs: [(position: Int, job: Job)] = []
        for (position, job) in batch.enumerated() {
            if case .lease(let request, _) = job {
                leaseOutcomes[position] = Result { try request.perform(on: &writer.leases, writer.database) }
                continue
            }
            if case .record(let record, let room, let resuming, let lease, _) = job, let order = job.room {
                if resuming { writer.blocked[order] = nil }
                if let cause = writer.blocked[order] {
                    outcomes[position] = .failure(Self.behind(cause, record: record.kind))
                    continue
                }
                // No need to block the room after this: a lease that is lost stays lost, so every later
                // record under it is refused the same way.
                if let lease, !writer.leases.holds(lease, at: .now) {
                    lost[position] = RoomLeaseError.lost(room: room, epoch: lease.epoch)
                    continue
                }
            }
            jobs.append((position, job))
        }
        attempts: while !jobs.isEmpty {
            switch attempt(jobs.map(\.job), writer) {
            case .committed(let purged, let wrote):
                commits.add(1, ordering: .relaxed)
                if wrote { currentHealth.withLock { $0 = .ok } }
                var purgedCounts = purged.makeIterator()
                for (position, job) in jobs {
                    if case .purge = job { outcomes[position] = .success(purgedCounts.next() ?? 0) } else { outcomes[position] = .success(0) }
                }
                break attempts
            case .rejected(let index, let reason):
                let failure = StoreFailure(.rejected, record: jobs[index].job.kind, reason: reason)
                let room = jobs[index].job.room
                if let room { writer.blocked[room] = failure }
                outcomes[jobs[index].position] = .failure(failure)
                var rest: [(position: Int, job: Job)] = []
                for (offset, entry) in jobs.enumerated() where offset != index {
                    if offset > index, let room, entry.job.room == room {
                        outcomes[entry.position] = .failure(Self.behind(failure, record: entry.job.kind))
                    } else {
                        rest.append(entry)
                    }
                }
                jobs = rest
            case .unavailable(let reason):
                // The health changes before any completion runs, so whoever hears of the failure from a
                // completion finds the store failing.
                let now = ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
                currentHealth.withLock { health in
                    if case .failing(let since, _) = health {
                        health = .failing(since: since, reason: reason)
                    } else {
                        health = .failing(since: now, reason: reason)
                    }
                }
                for (position, job) in jobs {
                    let failure = StoreFailure(.unavailable, record: job.kind, reason: reason)
                    if let room = job.room { writer.blocked[room] = failure }
                    outcomes[position] = .failure(failure)
                }
                break attempts
            }
        }
        for (position, (job, outcome)) in zip(batch, outcomes).enumerated() {
            if case .lease(_, let done) = job, let result = leaseOutcomes[position] {
                done(result)
                continue
            }
            if let refusal = lost[position] {
                Self.complete(job, refusal)
                continue
            }
            switch (job, outcome) {
            case (.stop, _), (_, nil): break
            case (.purge(_, let done), .success(let count)?): done(.success(count))
            case (_, .success?): Self.complete(job, nil)
            case (_, .failure(let failure)?): Self.fail(job, failure)
            }
        }
    }

    private static func complete(_ job: Job, _ error: (any Error)?) {
        switch job {
        case .record(_, _, _, _, let done), .createRoom(_, let done), .probe(let done), .configure(_, let done): done(error)
        case .purge(_, let done): done(error.map { .failure($0) } ?? .success(0))
        case .lease(_, let done): done(error.map { .failure($0) } ?? .success([]))
        case .stop: break
        }
    }

    /// The failure of a record that was not tried because an earlier one of its room failed.
    private static func behind(_ cause: StoreFailure, record: String) -> StoreFailure {
        StoreFailure(.unavailable, record: record, reason: "an earlier record of this room was not stored (\(cause.reason))")
    }

    private func attempt(_ jobs: [Job], _ writer: Writer) -> Attempt {
        let database = writer.database
        let changesBefore = database.totalChanges
        do {
            try database.execute("BEGIN IMMEDIATE")
        } catch {
            return .unavailable(reason: databaseFailure(error))
        }
        var purged: [Int] = []
        for (index, job) in jobs.enumerated() {
            do {
                switch job {
                case .record(let record, let room, _, _, _): try writer.statements.write(record, room: room)
                case .createRoom(let header, _): try writer.statements.create(header)
                case .purge(let cutoff, _): purged.append(try writer.statements.purge(cutoff))
                case .probe: try writer.statements.probe()
                case .configure(let sql, _): try database.execute(sql)
                case .lease, .stop: break
                }
            } catch {
                // Stop at the first error: after a failure of the database SQLite may have rolled the
                // transaction back already, and every statement after it would commit on its own.
                database.rollback()
                if let sqlite = error as? SQLiteError, !sqlite.isStatementProblem {
                    return .unavailable(reason: databaseFailure(sqlite))
                }
                return .rejected(index: index, reason: Self.reason(error))
            }
        }
        do {
            try database.execute("COMMIT")
        } catch {
            database.rollback()
            return .unavailable(reason: databaseFailure(error))
        }
        return .committed(purged: purged, wrote: database.totalChanges != changesBefore)
    }

    /// SQLite's words for a failure of the database, with the system's reason. SQLite does not always
    /// keep the `errno` of the call that failed ("disk I/O error" alone says little), so then we try a
    /// write beside the database ourselves and say what the system says ("Read-only file system").
    private func databaseFailure(_ error: any Error) -> String {
        guard let sqlite = error as? SQLiteError else { return String(describing: error) }
        guard sqlite.systemError == nil, !sqlite.isStatementProblem, let system = Self.systemReasonForWriting(at: path) else { return sqlite.reason }
        return "\(sqlite.message) (\(system))"
    }

    private static func reason(_ error: any Error) -> String {
        (error as? SQLiteError)?.reason ?? String(describing: error)
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

    /// Runs `body` in one read transaction: everything it reads comes from one committed state.
    private func read<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try reader.withLock { reader in
            try reader.execute("BEGIN")
            defer { reader.rollback() }
            return try body(reader)
        }
    }

    private static func loadArchive(_ code: String, from database: SQLiteDatabase) throws -> RoomArchive? {
        let room = try database.prepare("SELECT title, story, settings, teacher_token_hash, dashboard_token_hash, locked, created_at FROM rooms WHERE code = ?")
        try room.bind([.text(code)])
        guard try room.step() else { return nil }
        let storyJSON = room.text(1)
        let loaded = Story.load(json: Data(storyJSON.utf8))
        guard let story = loaded.value else {
            throw UnloadableStory(room: code, problems: loaded.errors.map(\.description))
        }
        let settings = try JSONDecoder().decode(RoomSettings.self, from: Data(room.text(2).utf8))
        let credentials = RoomCredentials(teacherTokenHash: room.text(3), dashboardTokenHash: room.text(4))
        var archive = RoomArchive(header: RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: ServerTime(milliseconds: room.int64(6))))
        archive.locked = room.int(5) != 0

        let players = try database.prepare("SELECT id, nickname, token_hash, joined_at, kicked_at, blocked FROM players WHERE room_code = ? ORDER BY joined_at, rowid")
        try players.bind([.text(code)])
        while try players.step() {
            let id = players.text(0)
            archive.players.append(PlayerRecord(id: id, nickname: players.text(1), tokenHash: players.text(2), joinedAt: ServerTime(milliseconds: players.int64(3))))
            if !players.isNull(4) { archive.kicked.insert(id) }
            if players.int(5) != 0 { archive.blocked.insert(id) }
        }
        let answers = try database.prepare("SELECT player_id, question, option, received_at, elapsed_ms, correct, points FROM answers WHERE room_code = ? ORDER BY received_at, rowid")
        try answers.bind([.text(code)])
        while try answers.step() {
            archive.answers.append(AnswerRecord(
                player: answers.text(0), question: answers.int(1), option: answers.int(2), receivedAt: ServerTime(milliseconds: answers.int64(3)),
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

/// The writer's prepared statements, made once.
private final class WriterStatements {
    let createRoom, insertPlayer, playerLeft, playerKicked, playerBlocked, insertAnswer, insertTransition, updatePhase, updateRoom, purgeRooms, writeProbe: SQLiteStatement

    init(_ database: SQLiteDatabase) throws {
        createRoom = try database.prepare("INSERT INTO rooms (code, title, story, settings, teacher_token_hash, dashboard_token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
        insertPlayer = try database.prepare("INSERT INTO players (room_code, id, nickname, token_hash, joined_at) VALUES (?, ?, ?, ?, ?)")
        playerLeft = try database.prepare("UPDATE players SET left_at = ? WHERE room_code = ? AND id = ?")
        playerKicked = try database.prepare("UPDATE players SET kicked_at = ? WHERE room_code = ? AND id = ?")
        playerBlocked = try database.prepare("UPDATE players SET kicked_at = coalesce(kicked_at, ?), blocked = 1 WHERE room_code = ? AND id = ?")
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
            .text(header.credentials.teacherTokenHash), .text(header.credentials.dashboardTokenHash), .integer(header.createdAt.milliseconds)
        )
    }

    func write(_ record: RoomRecord, room code: String) throws {
        switch record {
        case .playerJoined(let player):
            try insertPlayer.run(.text(code), .text(player.id), .text(player.nickname), .text(player.tokenHash), .integer(player.joinedAt.milliseconds))
        case .playerLeft(let player, let at):
            try playerLeft.run(.integer(at.milliseconds), .text(code), .text(player))
        case .playerKicked(let player, let at):
            try playerKicked.run(.integer(at.milliseconds), .text(code), .text(player))
        case .playerBlocked(let player, let at):
            try playerBlocked.run(.integer(at.milliseconds), .text(code), .text(player))
        case .answer(let answer):
            try insertAnswer.run(
                .text(code), .text(answer.player), .int(answer.question), .int(answer.option), .integer(answer.receivedAt.milliseconds),
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
