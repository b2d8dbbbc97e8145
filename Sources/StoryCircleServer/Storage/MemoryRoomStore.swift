import Foundation
import Locking
import StoryCircleCore

/// Keeps rooms in memory only: for tests, and for `--database none` when nothing may be written to disk.
/// Appends are durable at once (there is nothing to wait for), and never fail, except under a lease that is
/// no longer the room's. Leases are kept here too, so two registries sharing one memory store (offered with
/// its leases) behave like two nodes sharing a database.
public final class MemoryRoomStore: RoomLeases {
    private struct Contents {
        var archives: [String: RoomArchive] = [:]
        var leases = RoomLeaseTable()
    }

    private let contents = Locked(Contents())
    /// Who read or erased what on this server, for as long as it runs.
    public let auditLog = MemoryAuditLog()

    public init() {}

    public func createRoom(_ header: RoomHeader) async throws {
        try contents.withLock { contents in
            // Room codes are unique, as in the databases' primary keys.
            guard contents.archives[header.code] == nil else {
                throw StoreFailure(.rejected, record: "room.created", reason: "room code \(header.code) is already taken")
            }
            contents.archives[header.code] = RoomArchive(header: header)
        }
    }

    public func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        contents.withLock { _ = $0.archives[code]?.apply(record) }
        whenDurable(nil)
    }

    public func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease {
        try contents.withLock { contents in
            guard contents.archives[room] != nil else { throw RoomLeaseError.unknownRoom(room) }
            return try contents.leases.acquire(room: room, node: node, for: duration, now: .now, wallClock: Self.wallClock()).get()
        }
    }

    public func renew(_ leases: [RoomLease], for duration: Duration) async throws -> [RoomLease] {
        contents.withLock { $0.leases.renew(leases, for: duration, now: .now, wallClock: Self.wallClock()) }
    }

    public func release(_ lease: RoomLease) async throws {
        contents.withLock { $0.leases.release(lease, now: .now) }
    }

    public func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        let held = contents.withLock { contents in
            guard contents.leases.holds(lease, at: .now) else { return false }
            _ = contents.archives[lease.room]?.apply(record)
            return true
        }
        whenDurable(held ? nil : RoomLeaseError.lost(room: lease.room, epoch: lease.epoch))
    }

    private static func wallClock() -> ServerTime {
        ServerTime(milliseconds: Int64(Date().timeIntervalSince1970 * 1_000))
    }

    public func archive(room code: String) async throws -> RoomArchive? {
        contents.withLock { $0.archives[code] }
    }

    public func unfinishedRooms() async throws -> [RoomArchive] {
        contents.withLock { $0.archives.values.filter { $0.lastPhase != .finished }.sorted { $0.header.createdAt < $1.header.createdAt } }
    }

    public func summaries() async throws -> [RoomSummary] {
        contents.withLock { contents in
            contents.archives.values
                .map { RoomSummary(code: $0.header.code, title: $0.header.story.title, phase: $0.lastPhase, players: $0.players.count - $0.kicked.count, createdAt: $0.header.createdAt, owner: $0.header.owner) }
                .sorted { $0.createdAt > $1.createdAt }
        }
    }

    public func codeExists(_ code: String) async throws -> Bool {
        contents.withLock { $0.archives[code] != nil }
    }

    public func purge(createdBefore cutoff: ServerTime) async throws -> Int {
        contents.withLock { contents in
            let old = contents.archives.filter { $0.value.header.createdAt < cutoff }.map(\.key)
            old.forEach { contents.archives[$0] = nil }
            return old.count
        }
    }

    public var health: StoreHealth { .ok }

    /// Rooms and the audit trail: one process keeps them, and nobody else can share them. Tests that run two nodes over
    /// one memory store offer its leases themselves (`Storage(rooms:leases:)`).
    public var offers: Storage { Storage(rooms: self, audit: auditLog) }

    public func probe() async -> StoreHealth { .ok }

    public func close() async {}
}
