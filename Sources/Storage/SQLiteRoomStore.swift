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
/// `@unchecked Sendable`: the write queue is guarded by `condition`; the writer connection is only used on
/// the writer thread; the reader connection only under `readLock`.
public final class SQLiteRoomStore: RoomStore, @unchecked Sendable {
    private enum Job {
        case record(RoomRecord, room: String, done: @Sendable ((any Error)?) -> Void)
        case createRoom(RoomHeader, done: @Sendable ((any Error)?) -> Void)
        case purge(ServerTime, done: @Sendable (Result<Int, any Error>) -> Void)
        case stop
    }

    public let path: String
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopped = false
    private let writerFinished = DispatchSemaphore(value: 0)
    private let reader: SQLiteDatabase
    private let readLock = NSLock()
    private let commits = Atomic<Int>(0)
    /// The most records one transaction takes, so one huge burst does not delay every completion.
    private let maxBatch = 4_096

    /// Opens (creating and migrating as needed) the database at `path`.
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
        try Migrations.migrate(writer, now: Int64(Date().timeIntervalSince1970 * 1_000))
        reader = try SQLiteDatabase(path: path)
        try reader.execute("PRAGMA foreign_keys=ON;")
        let handOff = WriterHandOff(database: writer, statements: try WriterStatements(writer))
        let thread = Thread { [self] in self.writeLoop(handOff.database, handOff.statements) }
        thread.name = "sqlite-writer"
        thread.start()
    }

    /// Transactions committed so far (a measure of how well writes are grouped).
    public var commitCount: Int { commits.load(ordering: .relaxed) }

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
        enqueue(.record(record, room: code, done: whenDurable))
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
        let result = Locked<Result<Int, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        enqueue(.purge(cutoff) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        })
        done.wait()
        return try result.withLock { $0 }!.get()
    }

    /// Writes everything queued, then stops the writer. Appends after `close` fail.
    public func close() {
        condition.lock()
        let alreadyStopped = stopped
        if !alreadyStopped {
            queue.append(.stop)
            condition.signal()
        }
        condition.unlock()
        if !alreadyStopped { writerFinished.wait() }
    }

    /// The schema version of the database file.
    public func schemaVersion() throws -> Int {
        try read { Int(try $0.integer("SELECT max(version) FROM schema_migrations") ?? 0) }
    }

    // MARK: - Writing

    private func enqueue(_ job: Job) {
        condition.lock()
        if stopped {
            condition.unlock()
            Self.fail(job, StoreClosed())
            return
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    private struct StoreClosed: Error, CustomStringConvertible {
        var description: String { "the room store is closed" }
    }

    private static func fail(_ job: Job, _ error: any Error) {
        switch job {
        case .record(_, _, let done), .createRoom(_, let done): done(error)
        case .purge(_, let done): done(.failure(error))
        case .stop: break
        }
    }

    private func writeLoop(_ database: SQLiteDatabase, _ statements: WriterStatements) {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let batch = Array(queue.prefix(maxBatch))
            queue.removeFirst(batch.count)
            let stopping = batch.contains { if case .stop = $0 { true } else { false } }
            if stopping { stopped = true }
            condition.unlock()

            commit(batch, database, statements)
            if stopping {
                condition.lock()
                let leftovers = queue
                queue = []
                condition.unlock()
                leftovers.forEach { Self.fail($0, StoreClosed()) }
                writerFinished.signal()
                return
            }
        }
    }

    /// One transaction for the whole batch; a record that fails is reported alone and the rest commit.
    private func commit(_ batch: [Job], _ database: SQLiteDatabase, _ statements: WriterStatements) {
        var outcomes: [(any Error)?] = []
        var purged: [Int] = []
        do {
            try database.execute("BEGIN IMMEDIATE")
            for job in batch {
                do {
                    switch job {
                    case .record(let record, let room, _): try statements.write(record, room: room)
                    case .createRoom(let header, _): try statements.create(header)
                    case .purge(let cutoff, _): purged.append(try statements.purge(cutoff))
                    case .stop: break
                    }
                    outcomes.append(nil)
                } catch {
                    outcomes.append(error)
                }
            }
            try database.execute("COMMIT")
            commits.add(1, ordering: .relaxed)
        } catch {
            try? database.execute("ROLLBACK")
            batch.forEach { Self.fail($0, error) }
            return
        }
        var purgeResults = purged.makeIterator()
        for (job, outcome) in zip(batch, outcomes) {
            switch job {
            case .record(_, _, let done), .createRoom(_, let done): done(outcome)
            case .purge(_, let done): done(outcome.map { .failure($0) } ?? .success(purgeResults.next() ?? 0))
            case .stop: break
            }
        }
    }

    // MARK: - Reading

    private func read<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        readLock.lock()
        defer { readLock.unlock() }
        return try body(reader)
    }

    private static func loadArchive(_ code: String, from database: SQLiteDatabase) throws -> RoomArchive? {
        let room = try database.prepare("SELECT title, story, settings, teacher_token_hash, dashboard_token_hash, locked, created_at FROM rooms WHERE code = ?")
        try room.bind([.text(code)])
        guard try room.step() else { return nil }
        let storyJSON = room.text(1)
        guard let story = Story.load(json: Data(storyJSON.utf8)).value else {
            throw SQLiteError(code: 0, message: "the stored story of room \(code) no longer loads", context: "restoring room \(code)")
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

/// Moves the writer connection to the writer thread. `@unchecked Sendable` because ownership is handed
/// over: after `init` passes it to the thread, nothing else ever touches these objects.
private struct WriterHandOff: @unchecked Sendable {
    let database: SQLiteDatabase
    let statements: WriterStatements
}

/// The writer's prepared statements, made once.
private final class WriterStatements {
    let createRoom, insertPlayer, playerLeft, playerKicked, playerBlocked, insertAnswer, insertTransition, updatePhase, updateRoom, purgeRooms: SQLiteStatement

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
