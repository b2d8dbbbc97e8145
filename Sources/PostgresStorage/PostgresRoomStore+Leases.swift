import Foundation
import RoomStoreSupport
import StoryCircleCore

/// Leases in `room_owners`: one row per room naming the node that holds it, the epoch of its holding and
/// when it lapses, compared with the database's own clock (`now()`), so that nodes' clocks never decide.
extension PostgresRoomStore {
    public func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease {
        let milliseconds = duration.leaseMilliseconds
        // Not retried on a lost connection: the lease may have been granted, and a second try would find it
        // held. It then lapses at its expiry like any lease of a node that went away.
        return try await withLeaseConnection(retrying: false) { connection in
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

    public func renew(_ leases: [RoomLease], for duration: Duration) async throws -> [RoomLease] {
        guard !leases.isEmpty else { return [] }
        let milliseconds = duration.leaseMilliseconds
        // By epoch, which is unique across rooms as well as within one.
        var renewed: [Int64: (expiry: Int64, deadline: ContinuousClock.Instant, wantedBy: String?)] = [:]
        // One statement per node for all of its leases; rows are locked in room order, like the writer's.
        for (node, group) in Dictionary(grouping: leases, by: \.node) {
            let rows = try await withLeaseConnection(retrying: true) { connection in
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
                return (0..<rows.count).map { row in
                    (epoch: rows.int64(row, 0), expiry: rows.int64(row, 1), deadline: sent + .milliseconds(milliseconds), wantedBy: rows.isNull(row, 2) ? nil : rows.text(row, 2))
                }
            }
            for row in rows { renewed[row.epoch] = (row.expiry, row.deadline, row.wantedBy) }
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

    public func release(_ lease: RoomLease) async throws {
        try await withLeaseConnection(retrying: true) { connection in
            _ = try connection.query("""
                UPDATE room_owners SET expires_at = now()
                WHERE room_code = $1::text AND epoch = $2::bigint AND node = $3::text AND expires_at > now()
                """, [.text(lease.room), .integer(lease.epoch), .text(lease.node)])
        }
    }

    public func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        writer.submit(.record(record, room: lease.room, lease: lease), resuming: resuming, whenDurable: whenDurable)
    }
}
