import Locking
import StoryCircleCore

/// Keeps rooms in memory only: for tests, and for `--database none` when nothing may be written to disk.
/// Appends are durable at once (there is nothing to wait for), and never fail.
public final class MemoryRoomStore: RoomStore {
    private let archives = Locked<[String: RoomArchive]>([:])

    public init() {}

    public func createRoom(_ header: RoomHeader) throws {
        archives.withLock { $0[header.code] = RoomArchive(header: header) }
    }

    public func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        archives.withLock { $0[code]?.apply(record) }
        whenDurable(nil)
    }

    public func archive(room code: String) throws -> RoomArchive? {
        archives.withLock { $0[code] }
    }

    public func unfinishedRooms() throws -> [RoomArchive] {
        archives.withLock { $0.values.filter { $0.lastPhase != .finished }.sorted { $0.header.createdAt < $1.header.createdAt } }
    }

    public func summaries() throws -> [RoomSummary] {
        archives.withLock { archives in
            archives.values
                .map { RoomSummary(code: $0.header.code, title: $0.header.story.title, phase: $0.lastPhase, players: $0.players.count - $0.kicked.count, createdAt: $0.header.createdAt) }
                .sorted { $0.createdAt > $1.createdAt }
        }
    }

    public func codeExists(_ code: String) throws -> Bool {
        archives.withLock { $0[code] != nil }
    }

    public func purge(createdBefore cutoff: ServerTime) throws -> Int {
        archives.withLock { archives in
            let old = archives.filter { $0.value.header.createdAt < cutoff }.map(\.key)
            old.forEach { archives[$0] = nil }
            return old.count
        }
    }

    public var health: StoreHealth { .ok }

    public func probe(_ done: @escaping @Sendable (StoreHealth) -> Void) {
        done(.ok)
    }

    public func close() {}
}
