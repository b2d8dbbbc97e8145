import StoryCircleCore

/// The shell of this node's `LeaseBook`: takes, renews and releases leases in the store, and tells the
/// `RoomDirectory` what the book decides (drop a room, hand one over, let an idle one go). The rules are
/// the book's; this only talks to the store (whose calls run on threads of its own) and keeps time.
actor LeaseKeeper {
    let leases: any RoomLeases
    let nodeId: String
    let period: Duration
    private var book: LeaseBook
    private let clock: any MonotonicClock
    private let logger: StoryCircleLog
    private let tasks = OwnedTasks()

    init(leases: any RoomLeases, nodeId: String, period: Duration, clock: any MonotonicClock, logger: StoryCircleLog) {
        self.leases = leases
        self.nodeId = nodeId
        self.period = period
        self.book = LeaseBook(period: period)
        self.clock = clock
        self.logger = logger
    }

    /// Takes `room`'s lease for this node. Throws `RoomLeaseError.held` when another node holds it. When the
    /// store says this node holds it, under a lease this node let go of but could not release (the store
    /// was unreachable), that lease is released now and the room taken again.
    func acquire(_ room: String) async throws -> RoomLease {
        do {
            return try await leases.acquire(room: room, node: nodeId, for: period)
        } catch RoomLeaseError.held(_, let holder) where holder == nodeId {
            guard let stale = book.unreleasedLease(of: room) else { throw RoomLeaseError.held(room: room, by: holder) }
            try await leases.release(stale)
            _ = book.handle(.released(stale))
            logger.info("Room lease released late, then taken again", ["room.code": room, "lease.epoch": String(stale.epoch)])
            return try await leases.acquire(room: room, node: nodeId, for: period)
        }
    }

    /// The room of `lease` runs here now.
    func adopted(_ lease: RoomLease) {
        _ = book.handle(.acquired(lease, at: clock.now))
    }

    /// The room left memory; gives its lease up at once (unless `releasing` is false: it is no longer ours),
    /// so another node need not wait for it to expire.
    func removed(_ lease: RoomLease, releasing: Bool = true) {
        _ = book.handle(.removed(lease))
        if releasing { release(lease) }
    }

    /// Gives `lease` up in the background (owned: `stop` waits for it); if the store cannot be reached, the
    /// book keeps it and the next renewals try again.
    func release(_ lease: RoomLease) {
        tasks.spawn { [self] in await releaseNow(lease) }
    }

    private func releaseNow(_ lease: RoomLease) async {
        do {
            try await leases.release(lease)
            _ = book.handle(.released(lease))
        } catch {
            _ = book.handle(.releaseFailed(lease))
        }
    }

    /// A handover the book decided found its room already gone (its lease released with it): the code is
    /// free again.
    func abandonHandOver(_ lease: RoomLease) {
        _ = book.handle(.handedOver(room: lease.room))
    }

    func isHandingOver(_ room: String) -> Bool {
        book.isHandingOver(room)
    }

    /// A handover is done: releases the lease (awaited: the connections are told to move only after), and
    /// frees the code.
    func handedOver(_ lease: RoomLease) async {
        await releaseNow(lease)
        _ = book.handle(.handedOver(room: lease.room))
    }

    /// One renewal round: who is connected (`occupancy`, for a shared store), then every lease renewed in
    /// one call. Returns what the directory must do.
    func renew(occupancy: [String: Bool]?) async -> [LeaseBook.Action] {
        for lease in book.releasesDue { await releaseNow(lease) }
        var actions: [LeaseBook.Action] = []
        if let occupancy { actions += book.handle(.occupancy(occupancy, at: clock.now)) }
        let asked = book.leases
        guard !asked.isEmpty else { return actions }
        do {
            let held = try await leases.renew(asked, for: period)
            actions += book.handle(.renewed(asked: asked, held: held, at: clock.now))
        } catch {
            logger.warning("Room leases could not be renewed", ["error": StoreFailure.from(error, record: "lease").reason, "leases": String(asked.count)])
            actions += book.handle(.renewalFailed(asked: asked, at: clock.now))
        }
        return actions
    }

    /// Renewals are a third of a lease apart, and sooner after one failed (`LeaseBook.renewalDelay`).
    func waitForNextRenewal() async throws {
        try await clock.sleep(for: book.renewalDelay)
    }

    /// Releases every lease still held (the pages reconnect to the next node, which can take the rooms
    /// straight away) and waits for what was being released.
    func stop() async {
        for lease in book.leases + book.releasesDue { try? await leases.release(lease) }
        await tasks.stop()
    }
}

/// The monotonic clock leases run on: their deadlines are instants of it, and renewals are timed by it.
/// Tests use one they move by hand.
public protocol MonotonicClock: Sendable {
    var now: ContinuousClock.Instant { get }
    func sleep(for duration: Duration) async throws
}

public struct SystemMonotonicClock: MonotonicClock {
    public init() {}
    public var now: ContinuousClock.Instant { .now }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
