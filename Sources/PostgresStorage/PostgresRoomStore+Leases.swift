import Foundation
import RoomStoreSupport
import StoryCircleCore

/// Leases in `room_owners`: one row per room naming the node that holds it, the epoch of its holding and
/// when it lapses, compared with the database's own clock (`now()`), so that nodes' clocks never decide.
///
/// Beside the row, the holder keeps a session-level advisory lock on the lease's epoch, taken by the
/// statement that grants the lease, on the node's lease connection. A process that dies (kill -9, a crash)
/// loses its sessions at once, and with them the lock: another node may then take the room without waiting
/// for the expiry. A node that is merely paused or slow keeps its session and its lock, so its rooms wait
/// for the expiry as before; the epoch check in every write is what fences it either way. A holder whose
/// lock's session alone ended (its lease connection replaced, the session cut) still has its other
/// sessions, which carry its name (`PostgresSettings.node`): while any of them lives, its rooms wait for
/// the expiry too. The lock only
/// counts on the server run that saw it taken (`locked_on`, the postmaster's start time): after PostgreSQL
/// restarts, or a standby is promoted, every lock is gone while the holders may well be alive, so those
/// leases lapse by their expiry until their holders' next renewal takes the locks again.
extension PostgresRoomStore {
    /// The advisory-lock key of a lease: (this schema's lease namespace, the epoch's low 31 bits). Two
    /// leases whose epochs share those bits look held to each other, which only makes a takeover wait for
    /// the expiry; a lock is never seen free while its own lease's session lives.
    static let leaseLockClass = "hashtext(current_schema() || '.storycircle.room_lease')"
    static func leaseLockKey(_ epoch: String) -> String { "((\(epoch)) & 2147483647)::integer" }
    /// The lease locks this session holds, by key (the view's `objid`, as bigint).
    static let leaseLocksHere = """
        SELECT l.objid::bigint AS key FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.objsubid = 2
            AND l.classid = (\(leaseLockClass))::oid AND l.granted
        """

    public func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease {
        let milliseconds = duration.leaseMilliseconds
        // Not retried on a lost connection: the lease may have been granted, and a second try would find it
        // held. It then lapses at its expiry like any lease of a node that went away.
        return try await withLeaseConnection(retrying: false) { connection in
            let sent = ContinuousClock.now
            let rows: PostgresRows
            do {
                rows = try connection.query("""
                    INSERT INTO room_owners AS o (room_code, node, epoch, expires_at, locked_on)
                    VALUES ($1::text, $2::text, nextval('room_lease_epochs'), now() + $3::bigint * interval '1 millisecond', pg_postmaster_start_time())
                    ON CONFLICT (room_code) DO UPDATE
                        SET node = excluded.node, epoch = excluded.epoch, expires_at = excluded.expires_at,
                            locked_on = excluded.locked_on, wanted_by = NULL, wanted_at = NULL
                        WHERE o.expires_at <= now()
                            OR (o.locked_on = pg_postmaster_start_time() AND NOT EXISTS (
                                SELECT 1 FROM pg_locks l
                                WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.classid = (\(Self.leaseLockClass))::oid
                                    AND l.objid::bigint = \(Self.leaseLockKey("o.epoch"))
                                    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
                                AND (o.node = $2::text OR NOT EXISTS (
                                    SELECT 1 FROM pg_stat_activity a WHERE a.application_name = left('storycircle/' || o.node, 63))))
                    RETURNING o.epoch, floor(extract(epoch FROM o.expires_at) * 1000)::bigint,
                        pg_try_advisory_lock(\(Self.leaseLockClass), \(Self.leaseLockKey("o.epoch")))
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
                // A lease whose lock this session does not hold (the connection was replaced, PostgreSQL
                // restarted) takes it again here, and counts as locked on this server run only then.
                let rows = try connection.query("""
                    WITH mine AS MATERIALIZED (\(Self.leaseLocksHere))
                    UPDATE room_owners AS o SET expires_at = now() + $4::bigint * interval '1 millisecond',
                        locked_on = CASE
                            WHEN \(Self.leaseLockKey("o.epoch")) IN (SELECT key FROM mine) THEN pg_postmaster_start_time()
                            WHEN pg_try_advisory_lock(\(Self.leaseLockClass), \(Self.leaseLockKey("o.epoch"))) THEN pg_postmaster_start_time()
                        END
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
                // The locks of leases this node no longer holds (lost, taken over while it was paused) go.
                try connection.query("""
                    SELECT count(pg_advisory_unlock(\(Self.leaseLockClass), mine.key::integer)) FROM (\(Self.leaseLocksHere)) AS mine
                    WHERE NOT EXISTS (
                        SELECT 1 FROM room_owners o
                        WHERE \(Self.leaseLockKey("o.epoch")) = mine.key AND o.node = $1::text AND o.expires_at > now())
                    """, [.text(node)])
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
                WITH released AS (
                    UPDATE room_owners SET expires_at = now()
                    WHERE room_code = $1::text AND epoch = $2::bigint AND node = $3::text AND expires_at > now()
                    RETURNING epoch
                )
                SELECT count(pg_advisory_unlock(\(Self.leaseLockClass), mine.key::integer)) FROM (\(Self.leaseLocksHere)) AS mine
                WHERE mine.key = \(Self.leaseLockKey("$2::bigint"))
                """, [.text(lease.room), .integer(lease.epoch), .text(lease.node)])
        }
    }

    public func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        writer.submit(.record(record, room: lease.room, lease: lease), resuming: resuming, whenDurable: whenDurable)
    }
}
