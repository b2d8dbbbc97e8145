/// The leases of one node's rooms, as a value: which to renew, when a room has lost its lease, when a room
/// another node asks for is handed over, and when a room nobody is connected to is let go. It takes events
/// with the time (the monotonic clock the leases' deadlines are on) and returns actions for its shell
/// (`LeaseKeeper` in the server); it reads no clock and calls no store, so every rule is tested on plain
/// instants.
///
/// A room is in the book from the moment its lease is taken until it leaves memory. A room being handed
/// over has left the book but its code stays reserved (`isHandingOver`) until the handover is done, so a
/// hello for it meanwhile is told to try again instead of loading it a second time.
///
/// While the store cannot be reached, two things wait for it here: renewals, tried again soon (not a third
/// of a lease later) so that leases still valid are renewed as soon as the store is back; and releases that
/// failed, tried again at every renewal, so a room this node let go during an outage is not kept from
/// whoever asks for it next (this node included) until its lease lapses.
public struct LeaseBook: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public enum Event: Sendable {
        /// This node took `lease` and runs its room now.
        case acquired(RoomLease, at: Instant)
        /// The room of `lease` left memory (ended, evicted, dropped); its lease, if still ours, was released.
        /// A late word about an earlier lease of the room does not forget a newer one.
        case removed(RoomLease)
        /// Who is connected to which room, before a renewal (rooms of a shared store only).
        case occupancy([String: Bool], at: Instant)
        /// The renewal asked for by `renew` answered: these leases are still held, renewed.
        case renewed(asked: [RoomLease], held: [RoomLease], at: Instant)
        /// The renewal asked for by `renew` failed (the store cannot be reached).
        case renewalFailed(asked: [RoomLease], at: Instant)
        /// A handover began by `handOver` is done: the lease is released and the code free again.
        case handedOver(room: String)
        /// Giving `lease` up failed (the store cannot be reached): it is tried again with the next renewal.
        case releaseFailed(RoomLease)
        /// `lease` was given up.
        case released(RoomLease)
    }

    public enum Action: Sendable, Equatable {
        /// The room's lease is gone (or can no longer be proved): stop the room here, without releasing it.
        case drop(RoomLease, because: String)
        /// Another node asks for the room: let it finish what it took, release the lease, then tell its
        /// connections to try again.
        case handOver(RoomLease, to: String)
        /// Nobody has been connected for `idleRelease`: let the room go, so the node the proxy sends it to
        /// can take it.
        case releaseIdle(RoomLease)
    }

    private struct Entry: Sendable {
        var lease: RoomLease
        var heldSince: Instant
        var idleSince: Instant?
    }

    /// How long a lease lasts; a room is handed over only after being held here this long, so a proxy
    /// flapping between two nodes moves a room at most once a period, not on every hello.
    public let period: Duration
    /// How long a room with nobody connected stays on this node, with a shared store. After a node that died
    /// comes back, the proxy sends its rooms to it again: the node that took them meanwhile must let go of
    /// them, or the returning node would refuse them (`try_again`) for as long as it keeps them.
    public let idleRelease: Duration

    private var entries: [String: Entry] = [:]
    private var handingOver: Set<String> = []
    /// Leases this node let go of but could not release in the store, by room.
    private var unreleased: [String: RoomLease] = [:]
    /// Renewals that failed in a row.
    private var failedRenewals = 0

    /// The first renewal after a failed one comes this soon; each next one twice as late, up to the usual
    /// third of a lease.
    public static var firstRenewalRetry: Duration { .milliseconds(200) }

    public init(period: Duration, idleRelease: Duration = .seconds(60)) {
        self.period = period
        self.idleRelease = idleRelease
    }

    /// The leases to renew now, one call for all of them.
    public var leases: [RoomLease] {
        entries.values.map(\.lease).sorted { $0.room < $1.room }
    }

    /// The lease this node holds on `room`, if it runs it.
    public func lease(of room: String) -> RoomLease? {
        entries[room]?.lease
    }

    /// Whether `room` is being handed over (its lease is still ours until the outbox finishes).
    public func isHandingOver(_ room: String) -> Bool {
        handingOver.contains(room)
    }

    /// Leases let go of whose release has not reached the store yet: each renewal round tries them again.
    public var releasesDue: [RoomLease] {
        unreleased.values.sorted { $0.room < $1.room }
    }

    /// The lease of `room` this node let go of but could not release, if any: when the store refuses this
    /// node the room because this node still holds it, that is the lease to release first.
    public func unreleasedLease(of room: String) -> RoomLease? {
        unreleased[room]
    }

    /// How long until the next renewal: a third of a lease, or sooner while renewals fail.
    public var renewalDelay: Duration {
        let usual = period / 3
        guard failedRenewals > 0 else { return usual }
        let retry = Self.firstRenewalRetry * (1 << min(failedRenewals - 1, 16))
        return min(retry, usual)
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .acquired(let lease, let now):
            entries[lease.room] = Entry(lease: lease, heldSince: now)
            return []
        case .removed(let lease):
            if entries[lease.room]?.lease.epoch == lease.epoch { entries[lease.room] = nil }
            return []
        case .occupancy(let connected, let now):
            return occupancy(connected, at: now)
        case .renewed(let asked, let held, let now):
            failedRenewals = 0
            return renewed(asked: asked, held: held, at: now)
        case .renewalFailed(let asked, let now):
            failedRenewals += 1
            // While the store cannot be reached, a room whose lease has run out stops: this node can no
            // longer prove it holds it. The others stay, and the renewal is tried again soon.
            return asked.compactMap { lease in
                guard let entry = entries[lease.room], entry.lease.epoch == lease.epoch, entry.lease.deadline <= now else { return nil }
                entries[lease.room] = nil
                return .drop(entry.lease, because: "lease expired")
            }
        case .handedOver(let room):
            handingOver.remove(room)
            return []
        case .releaseFailed(let lease):
            // Only the newest lease of a room matters: an older one is over whatever the store says.
            if (unreleased[lease.room]?.epoch ?? 0) <= lease.epoch { unreleased[lease.room] = lease }
            return []
        case .released(let lease):
            if unreleased[lease.room]?.epoch == lease.epoch { unreleased[lease.room] = nil }
            return []
        }
    }

    private mutating func occupancy(_ connected: [String: Bool], at now: Instant) -> [Action] {
        var actions: [Action] = []
        for (room, isConnected) in connected.sorted(by: { $0.key < $1.key }) {
            guard var entry = entries[room] else { continue }
            if isConnected {
                entry.idleSince = nil
            } else if let since = entry.idleSince {
                if now - since >= idleRelease {
                    entries[room] = nil
                    actions.append(.releaseIdle(entry.lease))
                    continue
                }
            } else {
                entry.idleSince = now
            }
            entries[room] = entry
        }
        return actions
    }

    private mutating func renewed(asked: [RoomLease], held: [RoomLease], at now: Instant) -> [Action] {
        var actions: [Action] = []
        let alive = Set(held.map(\.epoch))
        for lease in held {
            guard var entry = entries[lease.room], entry.lease.epoch == lease.epoch else { continue }
            entry.lease = lease
            entries[lease.room] = entry
        }
        // A lease the store no longer has is lost: its room stops here.
        for lease in asked where !alive.contains(lease.epoch) {
            guard let entry = entries[lease.room], entry.lease.epoch == lease.epoch else { continue }
            entries[lease.room] = nil
            actions.append(.drop(entry.lease, because: "lease not renewed"))
        }
        for lease in held {
            guard let wanter = lease.wantedBy, let entry = entries[lease.room], entry.lease.epoch == lease.epoch,
                now - entry.heldSince >= period
            else { continue }
            entries[lease.room] = nil
            handingOver.insert(lease.room)
            actions.append(.handOver(entry.lease, to: wanter))
        }
        return actions
    }
}
