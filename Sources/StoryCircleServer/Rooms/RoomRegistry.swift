import Foundation
import StoryCircleCore
import TransportCore

/// A node's rooms, put together from three parts: the `ConnectionRouter` (connections to rooms), the
/// `RoomDirectory` (rooms in memory: create, load, restore, let go) and the `LeaseKeeper` (this node's
/// leases, renewed a third of a lease apart). The API, the server and the tests talk to this.
///
/// A room runs here only under a lease this node took before loading it, and every record it writes carries
/// that lease, so two nodes never both run a room: a node that cannot take a room (another holds it) refuses
/// with `try_again`, and a room whose lease is lost stops at once. A refusal also tells the store that this
/// node wants the room; the holder learns it at its next renewal and hands the room over, so rooms follow
/// the proxy back to a node that returned.
public final class RoomRegistry: Sendable {
    /// What a node's rooms are run with (the server's configuration gives them).
    public struct Settings: Sendable {
        /// This node's name in lease rows and logs; by default the host name and process id.
        public var nodeId: String?
        public var leaseSeconds = 10
        /// Hellos per address: a burst, then a steady rate.
        public var joinBurst = 60
        public var joinsPerSecond = 2.0
        /// Hellos with a wrong token or room code per address: a burst, then a steady rate.
        public var failedJoinBurst = 10
        public var failedJoinsPerMinute = 10.0
        /// How long a record that fails is tried again before its room rebuilds itself from the store.
        public var storageRetrySeconds = 5
        public var roomDefaults = RoomSettings()
        public var retentionDays = 30

        public init() {}
    }

    let directory: RoomDirectory
    let router: ConnectionRouter
    /// `nil` for a store without leases (test doubles): rooms are then written unfenced.
    let keeper: LeaseKeeper?
    let health: StoreHealthMonitor
    public let nodeId: String
    private let loops = OwnedTasks()

    package init(
        events: AsyncStream<TransportEvent>, transport: any MessageTransport, store: any RoomStore,
        clock: any ServerClock, narrator: any NarrationPreparing, lookalikes: any ConfusableSkeleton, metrics: ServerMetrics,
        settings configuration: Settings = Settings(),
        timing: RoomTiming = .init(), logger: StoryCircleLog, bindings: ConnectionBindings = ConnectionBindings(), sharedStore: Bool = false,
        leaseClock: any MonotonicClock = SystemMonotonicClock(), executor: LoopExecutor? = nil
    ) {
        let nodeId = configuration.nodeId ?? Self.defaultNodeId()
        self.nodeId = nodeId
        // Leases fence nodes that share a store. A store of this node alone (SQLite, memory) has nobody to
        // hand a room to: a lease there could only lapse while the process is starved or the laptop sleeps,
        // and bounce every child of its rooms for nothing.
        keeper = (sharedStore ? store as? any RoomLeases : nil).map {
            LeaseKeeper(leases: $0, nodeId: nodeId, period: .seconds(configuration.leaseSeconds), clock: leaseClock, logger: logger)
        }
        health = StoreHealthMonitor(store: store, clock: clock, logger: logger)
        let failedHellos = AddressRateLimiter(burst: Double(configuration.failedJoinBurst), perSecond: configuration.failedJoinsPerMinute / 60)
        let refusals = Refusals(transport: transport, metrics: metrics)
        let services = RoomServices(
            transport: transport, store: store, clock: clock, narrator: narrator, metrics: metrics, failedHellos: failedHellos,
            logger: logger, health: health, executor: executor ?? .ownThread(), storageRetryMs: configuration.storageRetrySeconds * 1_000
        )
        directory = RoomDirectory(
            services: services, keeper: keeper, bindings: bindings, refusals: refusals, timing: timing, lookalikes: lookalikes,
            roomDefaults: configuration.roomDefaults, retentionDays: configuration.retentionDays, sharedStore: sharedStore
        )
        router = ConnectionRouter(
            events: events, directory: directory, bindings: bindings, refusals: refusals, clock: clock, metrics: metrics, logger: logger,
            hellos: AddressRateLimiter(burst: Double(configuration.joinBurst), perSecond: configuration.joinsPerSecond), failedHellos: failedHellos
        )
    }

    /// Routes transport events until the event stream ends; meanwhile tells rooms when storage fails or
    /// works again, and renews the leases.
    package func run() async {
        let (directory, health, keeper) = (directory, health, keeper)
        loops.spawn { await directory.run() }
        loops.spawn { await health.run { health in await directory.storeHealthChanged(health) } }
        if let keeper {
            let shared = directory.sharedStore
            loops.spawn {
                while !Task.isCancelled {
                    do { try await keeper.waitForNextRenewal() } catch { return }
                    let occupancy = shared ? await directory.occupancy() : nil
                    await directory.carryOut(keeper.renew(occupancy: occupancy))
                    // Another node may have changed a class (a child erased, added): its rooms here follow,
                    // as often as leases are renewed, off this loop, so a slow read never delays a renewal.
                    if shared { await directory.followStoredClassesUnlessFollowing() }
                }
            }
        }
        await router.run()
    }

    /// Creates a room for `story`, stores it, and returns its code and tokens.
    /// `storyID`: the library story it is started from (which then cannot be deleted while the room runs).
    public func createRoom(story: Story, settings: RoomSettingsPatch? = nil, storyID: String? = nil, classRoster: ClassRoster? = nil) async throws -> CreatedRoom {
        try await directory.createRoom(story: story, settings: settings, storyID: storyID, classRoster: classRoster)
    }

    /// Brings back every room that had not finished when the server stopped (none with a shared store).
    public func restoreRooms() async throws -> Int {
        try await directory.restoreRooms()
    }

    /// The room `code`, loaded from the store if need be, when `admit` accepts its credentials
    /// (`RoomDirectory.findRoom`).
    public func findRoom(_ code: String, admitting admit: @escaping @Sendable (RoomCredentials) -> Bool = { _ in true }) async throws -> Room? {
        try await directory.findRoom(code, admitting: admit)
    }

    /// The room `code` if it is in memory.
    public func room(_ code: String) async -> Room? {
        await directory.room(code)
    }

    public var liveRoomCount: Int {
        get async { await directory.liveRooms.count }
    }

    public var liveRooms: [Room] {
        get async { await directory.liveRooms }
    }

    /// Lets the finished rooms among `codes` go from memory (`RoomDirectory.forgetFinished`).
    public func forgetFinished(_ codes: [String]) async {
        await directory.forgetFinished(codes)
    }

    /// A class was saved: its live rooms in memory follow it (`RoomDirectory.classChanged`).
    public func classChanged(_ roster: ClassRoster) async {
        await directory.classChanged(roster)
    }

    /// Reloads the finished rooms of a class in memory from the store, in place
    /// (`RoomDirectory.reloadFinishedRooms(ofClass:)`); never fails: a failure is logged.
    public func reloadFinishedRooms(ofClass classID: String) async {
        await directory.reloadFinishedRooms(ofClass: classID)
    }

    /// Lets finished rooms go and deletes rooms past their retention (`RoomDirectory.sweep`).
    public func sweep(finishedBefore cutoff: ServerTime, createdBefore retentionCutoff: ServerTime) async -> (evicted: Int, purged: Int) {
        await directory.sweep(finishedBefore: cutoff, createdBefore: retentionCutoff)
    }

    /// Returns once the router has finished the turn it is in (`ConnectionRouter.settle`): after a room's
    /// reply to a message is seen, that message has been counted off and its connection bound.
    package func settled() async {
        await router.settle()
    }

    /// Stops every room and waits for them, then hands their leases on at once rather than leaving them to
    /// expire: the pages reconnect to the next node, which can take the rooms straight away.
    public func shutDown() async {
        // Renewals first: no handover or drop starts while the rooms stop.
        health.stop()
        await loops.stop()
        await directory.shutDown()
        await router.stop()
        await keeper?.stop()
    }

    /// Host name and process id: unique among live processes, and readable in logs and lease rows.
    static func defaultNodeId() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)"
    }
}
