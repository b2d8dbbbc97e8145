/// Proof, from the store, that one node holds one room.
///
/// A room may be written only by the node that holds it, and only while it does: every write made under a
/// lease carries its epoch, and the store refuses it (`RoomLeaseError.lost`) once the lease is no longer the
/// room's — expired, released, or taken over. That check happens inside the transaction that would store
/// the write, so a node that was paused or cut off cannot store anything after another node took the room,
/// whatever it believes.
public struct RoomLease: Sendable, Hashable, CustomStringConvertible {
    public var room: String
    public var node: String
    /// Grows on every successful `acquire` of the room and is never given out twice.
    public var epoch: Int64
    /// When the store will consider the lease over, by the store's own clock (PostgreSQL's `now()`). For
    /// logs and people: a node never compares it with its own wall clock, which may be skewed.
    public var expiresAt: ServerTime
    /// Until when this node may act as the owner, on its own monotonic clock: the instant it sent the
    /// request plus the duration. The store started its count later, so this ends no later than the store's
    /// expiry whatever the two wall clocks say (only their rates matter, which differ by parts per million).
    /// Renew before it; past it, stop answering for the room. The epoch check keeps the data safe either way.
    public var deadline: ContinuousClock.Instant
    /// Set by `renew` when another node was refused the room lately (`RoomLease.wantedWithin` lease
    /// periods): the proxy sends the room's traffic there now (a node that came back), so the holder should
    /// hand the room over rather than keep it while the class stays connected.
    public var wantedBy: String?

    public init(room: String, node: String, epoch: Int64, expiresAt: ServerTime, deadline: ContinuousClock.Instant, wantedBy: String? = nil) {
        self.room = room
        self.node = node
        self.epoch = epoch
        self.expiresAt = expiresAt
        self.deadline = deadline
        self.wantedBy = wantedBy
    }

    public var description: String { "room \(room) held by \(node) at epoch \(epoch)" }
}

public enum RoomLeaseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another node (or this one, under an earlier `acquire`) holds the room and its lease has not expired.
    case held(room: String, by: String)
    /// The lease is no longer the room's: it expired, was released, or the room was taken over. Nothing
    /// written under it was stored; the node must stop acting for the room (and may `acquire` it again,
    /// which gives a new epoch and means rebuilding the room from the store).
    case lost(room: String, epoch: Int64)
    /// No room has this code.
    case unknownRoom(String)

    public var description: String {
        switch self {
        case .held(let room, let node): "room \(room) is held by \(node)"
        case .lost(let room, let epoch): "the lease on room \(room) at epoch \(epoch) is no longer held"
        case .unknownRoom(let room): "there is no room \(room)"
        }
    }
}

/// Room ownership, for stores that several nodes may share (PostgreSQL). A store that serves one server
/// (SQLite: one server per data directory) implements it in memory, for the same guarantees in one process.
///
/// The protocol a node follows: `acquire` a room before running it, then load it from the store (the load
/// sees everything any earlier owner stored, because their writes either committed before the takeover or
/// are refused); write every record with `append(_:under:whenDurable:)`; `renew` well before `deadline`;
/// `release` when done. A refused write (`RoomLeaseError.lost`) or a failed renewal means the room is no
/// longer this node's.
public protocol RoomLeases: RoomStore {
    /// Takes `room` for `node` for `duration`, if nobody holds it (no lease, or an expired or released one,
    /// or, in a store shared by processes, one whose holder's process is known to be gone: PostgreSQL sees
    /// the holder's session end).
    /// Every success gives a new, higher epoch: a lease is never re-granted, even to the same node, because
    /// the holder of the new one starts from what is stored and must not be confused with an earlier self.
    /// Throws `RoomLeaseError.held` when someone holds it, `.unknownRoom` when it does not exist. A refusal
    /// also records that `node` wants the room (unless `node` is the holder itself), for the holder's next
    /// `renew`; a new holder starts with no such wish.
    func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease
    /// Extends the leases that are still held, by `duration` from now; returns them, renewed. A lease
    /// missing from the result is lost (expired, released or taken over) and cannot be renewed: an expired
    /// lease is never revived, even if nobody took the room. A renewed lease carries `wantedBy` when another
    /// node was refused it (`acquire`) within the last `RoomLease.wantedWithin` lease periods (`duration` each): an
    /// older wish is stale (that node's traffic went elsewhere, or it died) and is not reported.
    func renew(_ leases: [RoomLease], for duration: Duration) async throws -> [RoomLease]
    /// Gives the room up at once, so another node need not wait for the expiry. Releasing a lease that is
    /// already lost does nothing.
    func release(_ lease: RoomLease) async throws
    /// `append`, fenced: stored only if `lease` is still the room's when the transaction commits;
    /// otherwise `whenDurable` gets `RoomLeaseError.lost` and nothing of the record is stored (nor of any
    /// later one under that lease, which stays lost). The order a room's records keep, and the block after
    /// a failed one (`RoomStore.append`), are per lease: a new holder starts again from the store and does
    /// not wait for the failures of the one before it.
    func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void)
}

/// How many lease periods a node's wish for a room (a refused `acquire`) stays news to the holder. Two:
/// the holder renews every third of a period, so it cannot miss a wish, and a wish from a node that
/// stopped asking (its traffic moved on) does not move the room long after.
extension RoomLease {
    public static let wantedWithin = 2
}

extension RoomLeases {
    public func append(_ record: RoomRecord, under lease: RoomLease, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        append(record, under: lease, resuming: false, whenDurable: whenDurable)
    }

    /// Renews one lease; throws `RoomLeaseError.lost` when it is no longer held.
    public func renew(_ lease: RoomLease, for duration: Duration) async throws -> RoomLease {
        guard let renewed = try await renew([lease], for: duration).first else {
            throw RoomLeaseError.lost(room: lease.room, epoch: lease.epoch)
        }
        return renewed
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a lease is never granted for less than asked; negative is zero.
    public var leaseMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let millis = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return attoseconds % 1_000_000_000_000_000 > 0 ? millis + 1 : millis
    }
}

/// Leases kept in memory, for a store that serves a single process. Pure: the caller passes the time, and
/// must run every call and every `holds` check of a transaction under one lock (or on one thread), so that
/// no takeover falls between a check and the commit it guards.
public struct RoomLeaseTable: Sendable {
    private struct Owner: Sendable {
        var node: String
        var epoch: Int64
        var expiry: ContinuousClock.Instant
        var wanted: (node: String, at: ContinuousClock.Instant)?
    }

    private var owners: [String: Owner] = [:]
    private var lastEpoch: Int64 = 0

    public init() {}

    /// See `RoomLeases.acquire`. `wallClock` only fills in `expiresAt`.
    public mutating func acquire(room: String, node: String, for duration: Duration, now: ContinuousClock.Instant, wallClock: ServerTime) -> Result<RoomLease, RoomLeaseError> {
        if let owner = owners[room], owner.expiry > now {
            if owner.node != node { owners[room]?.wanted = (node, now) }
            return .failure(.held(room: room, by: owner.node))
        }
        lastEpoch += 1
        let expiry = now + .milliseconds(duration.leaseMilliseconds)
        owners[room] = Owner(node: node, epoch: lastEpoch, expiry: expiry)
        return .success(RoomLease(room: room, node: node, epoch: lastEpoch, expiresAt: wallClock + Int(duration.leaseMilliseconds), deadline: expiry))
    }

    /// See `RoomLeases.renew`.
    public mutating func renew(_ leases: [RoomLease], for duration: Duration, now: ContinuousClock.Instant, wallClock: ServerTime) -> [RoomLease] {
        leases.compactMap { lease in
            guard holds(lease, at: now) else { return nil }
            let expiry = now + .milliseconds(duration.leaseMilliseconds)
            owners[lease.room]?.expiry = expiry
            var renewed = lease
            renewed.expiresAt = wallClock + Int(duration.leaseMilliseconds)
            renewed.deadline = expiry
            renewed.wantedBy = nil
            if let wanted = owners[lease.room]?.wanted, now - wanted.at <= duration * RoomLease.wantedWithin {
                renewed.wantedBy = wanted.node
            }
            return renewed
        }
    }

    /// See `RoomLeases.release`.
    public mutating func release(_ lease: RoomLease, now: ContinuousClock.Instant) {
        if holds(lease, at: now) { owners[lease.room]?.expiry = now }
    }

    /// Whether `lease` is still its room's at `now`: same node, same epoch, not expired.
    public func holds(_ lease: RoomLease, at now: ContinuousClock.Instant) -> Bool {
        guard let owner = owners[lease.room] else { return false }
        return owner.node == lease.node && owner.epoch == lease.epoch && owner.expiry > now
    }
}
