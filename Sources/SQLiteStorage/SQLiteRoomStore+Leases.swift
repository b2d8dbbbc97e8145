import Foundation
import Locking
import StoryCircleCore

/// Leases for SQLite, which serves one server per data directory: the table lives in memory on the writer
/// thread, and every lease call is a turn in the write queue, so it takes effect in order with the writes
/// it fences (see `GroupCommitWriter.commit`). Nothing of it needs to outlive the process: a restart is a
/// new owner anyway, and the queued writes of the old one died with it.
extension SQLiteRoomStore: RoomLeases {
    enum LeaseRequest: Sendable {
        case acquire(room: String, node: String, duration: Duration)
        case renew([RoomLease], duration: Duration)
        case release(RoomLease)

        func perform(on table: inout RoomLeaseTable, _ database: SQLiteDatabase) throws -> [RoomLease] {
            let now = ContinuousClock.now
            let wallClock = ServerTime(milliseconds: Int64(Date().timeIntervalSince1970 * 1_000))
            switch self {
            case .acquire(let room, let node, let duration):
                guard try database.integer("SELECT 1 FROM rooms WHERE code = ?", .text(room)) != nil else {
                    throw RoomLeaseError.unknownRoom(room)
                }
                return [try table.acquire(room: room, node: node, for: duration, now: now, wallClock: wallClock).get()]
            case .renew(let leases, let duration):
                return table.renew(leases, for: duration, now: now, wallClock: wallClock)
            case .release(let lease):
                table.release(lease, now: now)
                return []
            }
        }
    }

    public func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease {
        try await perform(.acquire(room: room, node: node, duration: duration))[0]
    }

    public func renew(_ leases: [RoomLease], for duration: Duration) async throws -> [RoomLease] {
        try await perform(.renew(leases, duration: duration))
    }

    public func release(_ lease: RoomLease) async throws {
        _ = try await perform(.release(lease))
    }

    public func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        writer.submit(.record(record, room: lease.room, lease: lease), resuming: resuming, whenDurable: whenDurable)
    }

    private func perform(_ request: LeaseRequest) async throws -> [RoomLease] {
        try await writer.turn(as: SQLiteCommitter.self) { committer in try request.perform(on: &committer.leases, committer.database) }
    }
}
