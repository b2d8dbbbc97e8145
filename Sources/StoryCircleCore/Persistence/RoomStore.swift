/// Where rooms are kept: SQLite (`SQLiteStorage`, the default), PostgreSQL (`PostgresStorage`, for several
/// nodes) or memory. Reads are rare (creation, results, start-up, a room loaded on demand) and `async`:
/// a store runs its blocking work on threads of its own, never on the caller's (Swift's cooperative pool
/// has one thread per core, and every room waits when one of them is blocked). Appends never block: they
/// are batched, and report back once durable.
///
/// The store is the truth about a room: "acknowledged" means committed here. When writes fail, the server
/// rebuilds a room from what `archive(room:)` answers, exactly as a restart would.
public protocol RoomStore: AnyObject, Sendable {
    /// Stores a new room; it is durable when this returns. Throws a `StoreFailure` when it is not.
    func createRoom(_ header: RoomHeader) async throws
    /// Queues `record` for room `code`; `whenDurable` runs, on any thread, once it is committed (with `nil`)
    /// or could not be (with a `StoreFailure`). Never blocks.
    ///
    /// A room's records are committed in the order they were appended, and never past a gap: once one of
    /// them fails, every later record of that room fails too without being tried, until an append with
    /// `resuming: true` (the room starting again from its first unwritten record, or from what the store
    /// holds). So what is stored of a room is always a prefix of what it decided, and a restart (or a
    /// rebuild) never finds a reveal missing under the next question.
    func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void)
    /// Everything stored about room `code`.
    func archive(room code: String) async throws -> RoomArchive?
    /// Rooms that had not finished, to restore after a restart.
    func unfinishedRooms() async throws -> [RoomArchive]
    /// All stored rooms, newest first.
    func summaries() async throws -> [RoomSummary]
    /// The stored rooms in `scope` (`OwnerScope`), newest first.
    func summaries(scope: OwnerScope) async throws -> [RoomSummary]
    /// Whether a room with this code was ever stored (codes are not reused while their results are kept).
    func codeExists(_ code: String) async throws -> Bool
    /// Deletes rooms created before `cutoff` with everything about them; returns how many.
    func purge(createdBefore cutoff: ServerTime) async throws -> Int
    /// Whether writes are succeeding: `.failing` from the first failed write until one succeeds again.
    /// A locked read of what the writer last saw: never waits for the database.
    var health: StoreHealth { get }
    /// Tries a real write now (about the size of a good batch of records) and answers the health after it.
    /// While failing, this is how the store finds out it can write again without waiting for a room to
    /// write.
    func probe() async -> StoreHealth
    /// Writes what is queued, then closes; returns once the store's threads have ended.
    func close() async
    /// What this store offers besides rooms (`Storage`): asked once, when a server is put together.
    var offers: Storage { get }
}

extension RoomStore {
    /// Filters the whole list (memory and test stores); the database stores ask with a condition.
    public func summaries(scope: OwnerScope) async throws -> [RoomSummary] {
        try await summaries().filter { scope.admits($0.owner) }
    }

    public func append(_ record: RoomRecord, room code: String, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        append(record, room: code, resuming: false, whenDurable: whenDurable)
    }
}

/// Whether a store can write.
public enum StoreHealth: Sendable, Equatable {
    case ok
    /// Writes have failed since `since`; `reason` is the store's own words (SQLite's message, with the
    /// operating system's reason when there is one: "database or disk is full (No space left on device)").
    case failing(since: ServerTime, reason: String)

    public var isOK: Bool { self == .ok }

    public var reason: String? {
        if case .failing(_, let reason) = self { return reason }
        return nil
    }
}

/// Why a store could not write something.
public struct StoreFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The store cannot write now (disk full, read-only, I/O error, closed); the same write may
        /// succeed later. Also the outcome when a commit's result is unknown: the store is the truth.
        case unavailable
        /// This record can never be written as it is (a constraint): trying again is pointless.
        case rejected
    }

    public var kind: Kind
    /// What was being written (`RoomRecord.kind`, `room.created`, `probe`).
    public var record: String
    /// The store's own words.
    public var reason: String

    public init(_ kind: Kind, record: String, reason: String) {
        self.kind = kind
        self.record = record
        self.reason = reason
    }

    public var description: String { "\(record) could not be stored: \(reason)" }

    /// Any error from a store, as a failure (unknown errors count as "cannot write now").
    public static func from(_ error: any Error, record: String) -> StoreFailure {
        if let failure = error as? StoreFailure { return failure }
        return StoreFailure(.unavailable, record: record, reason: String(describing: error))
    }
}
