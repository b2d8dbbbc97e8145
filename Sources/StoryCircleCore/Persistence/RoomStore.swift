/// Where rooms are kept. SQLite implements it (`Storage`); a PostgreSQL backend can be added behind the
/// same protocol. Reads are synchronous and rare (creation, results, start-up); appends are asynchronous
/// and batched, and report back once durable.
public protocol RoomStore: AnyObject, Sendable {
    /// Stores a new room; it is durable when this returns.
    func createRoom(_ header: RoomHeader) throws
    /// Queues `record` for room `code`; `whenDurable` runs, on any thread, once it is committed (with `nil`)
    /// or could not be (with the error).
    func append(_ record: RoomRecord, room code: String, whenDurable: @escaping @Sendable ((any Error)?) -> Void)
    /// Everything stored about room `code`.
    func archive(room code: String) throws -> RoomArchive?
    /// Rooms that had not finished, to restore after a restart.
    func unfinishedRooms() throws -> [RoomArchive]
    /// All stored rooms, newest first.
    func summaries() throws -> [RoomSummary]
    /// Whether a room with this code was ever stored (codes are not reused while their results are kept).
    func codeExists(_ code: String) throws -> Bool
    /// Deletes rooms created before `cutoff` with everything about them; returns how many.
    func purge(createdBefore cutoff: ServerTime) throws -> Int
    /// Waits for queued appends and closes.
    func close()
}
