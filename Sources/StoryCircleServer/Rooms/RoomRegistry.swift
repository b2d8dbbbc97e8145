import Foundation
import StoryCircleCore
import TransportCore

/// A node's rooms, put together from three parts: the `RoomDirectory` (the rooms in memory, reached
/// through `directory`: create, load, restore, let go, follow their class), the `ConnectionRouter`
/// (connections to rooms) and the `LeaseKeeper` (this node's leases, renewed a third of a lease apart,
/// when the store is shared). The API, the server and the tests talk to this.
///
/// A room runs here only under a lease this node took before loading it, and every record it writes carries
/// that lease, so two nodes never both run a room: a node that cannot take a room (another holds it) refuses
/// with `try_again`, and a room whose lease is lost stops at once. A refusal also tells the store that this
/// node wants the room; the holder learns it at its next renewal and hands the room over, so rooms follow
/// the proxy back to a node that returned.
public final class RoomRegistry: Sendable {
    /// How a node's rooms are run (the server's configuration gives them).
    public struct Settings: Sendable {
        /// This node's name in lease rows and logs; by default the host name and process id.
        public var nodeId: String?
        public var leaseSeconds = 10
        /// Hellos per address: a burst, then a steady rate.
        public var joinBurst = 60
        public var joinsPerSecond = 2.0
        /// Hellos with a wrong token or room code per address: a budget large enough for a class's typing
        /// mistakes, refilled at a steady rate. Spent, it is not a refusal: the address's hellos that prove
        /// nothing are answered later, by a minute's share of the rate per wrong code beyond the budget,
        /// at most `failedJoinMaxDelaySeconds` (docs/operations.md, "Guessing room codes").
        public var failedJoinBurst = 30
        public var failedJoinsPerMinute = 10.0
        public var failedJoinMaxDelaySeconds = 30.0
        /// Digits in a new room's code: 6 for a laptop's few rooms, more for a server with thousands live.
        public var roomCodeDigits = 6
        /// How long a record that fails is tried again before its room rebuilds itself from the store.
        public var storageRetrySeconds = 5
        public var roomDefaults = RoomSettings()
        public var retentionDays = 30

        public init() {}
    }

    /// The rooms in memory (`RoomDirectory`): create, find, sweep, follow classes.
    public let directory: RoomDirectory
    let router: ConnectionRouter
    /// `nil` for a store that is not shared (`Storage.leases`): rooms are then written unfenced.
    let keeper: LeaseKeeper?
    let health: StoreHealthMonitor
    public let nodeId: String
    private let loops = OwnedTasks()

    package init(events: AsyncStream<TransportEvent>, services: RoomServices, settings configuration: Settings = Settings()) {
        let nodeId = configuration.nodeId ?? Self.defaultNodeId()
        self.nodeId = nodeId
        // Leases fence nodes that share a store; a store of this node alone offers none (`Storage.leases`).
        keeper = services.storage.leases.map {
            LeaseKeeper(leases: $0, nodeId: nodeId, period: .seconds(configuration.leaseSeconds), clock: services.leaseClock, logger: services.logger)
        }
        health = StoreHealthMonitor(store: services.store, clock: services.clock, logger: services.logger)
        let failedHellos = AddressRateLimiter(
            burst: Double(configuration.failedJoinBurst), perSecond: configuration.failedJoinsPerMinute / 60, maxWaitSeconds: configuration.failedJoinMaxDelaySeconds
        )
        var services = services
        services.failedHellos = failedHellos
        services.health = health
        services.storageRetryMs = configuration.storageRetrySeconds * 1_000
        directory = RoomDirectory(
            services: services, keeper: keeper, roomDefaults: configuration.roomDefaults, retentionDays: configuration.retentionDays, codeDigits: configuration.roomCodeDigits
        )
        router = ConnectionRouter(
            events: events, directory: directory, services: services,
            hellos: AddressRateLimiter(burst: Double(configuration.joinBurst), perSecond: configuration.joinsPerSecond), failedHellos: failedHellos
        )
    }

    /// Routes transport events until the event stream ends; meanwhile tells rooms when storage fails or
    /// works again, and renews the leases.
    package func run() async {
        let (lifecycle, classes, health, keeper) = (directory.lifecycle, directory.classes, health, keeper)
        loops.spawn { await lifecycle.run() }
        loops.spawn { await health.run { health in await lifecycle.storeHealthChanged(health) } }
        if let keeper {
            loops.spawn {
                while !Task.isCancelled {
                    do { try await keeper.waitForNextRenewal() } catch { return }
                    await lifecycle.carryOut(keeper.renew(occupancy: await lifecycle.occupancy()))
                    // Another node may have changed a class (a child erased, added): its rooms here follow,
                    // as often as leases are renewed, off this loop, so a slow read never delays a renewal.
                    await classes.followStoredClassesUnlessFollowing()
                }
            }
        }
        await router.run()
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
