import StoryCircleCore
import TransportCore

/// What a node's rooms are run with, given once when the server is put together and passed whole to
/// every part that needs some of it: the registry, the directory's parts, the router, each room and its
/// outbox.
package struct RoomServices: Sendable {
    package let transport: any MessageTransport
    /// What the store offers, named once (`RoomStore.offers`): rooms, classes, library, pictures, leases.
    package let storage: Storage
    package let clock: any ServerClock
    package let narrator: any NarrationPreparing
    /// How nicknames and children's names are told apart.
    package let lookalikes: any ConfusableSkeleton
    package let metrics: ServerMetrics
    package let logger: StoryCircleLog
    package let timing: RoomTiming
    /// Which connection is in which room, shared with the transport's callback.
    package let bindings: ConnectionBindings
    /// What lease renewals are timed by.
    package let leaseClock: any MonotonicClock
    /// Where rooms run: the transport's loop in a server (`LoopExecutor`), so a frame, its room and its
    /// reply meet on one thread.
    let executor: LoopExecutor
    /// How rooms' tokens are issued and proved (under the server's key).
    package let tokens: RoomTokens
    /// The disabled accounts, whose rooms no teacher token controls.
    package let disabledOwners: DisabledOwners

    /// Set by the registry from its settings and the store.
    var failedHellos: AddressRateLimiter?
    var health: StoreHealthMonitor?
    /// How long a record that fails is tried again before the room gives up on it and rebuilds itself.
    var storageRetryMs = 5_000
    /// Where a room hands itself in (`RoomNotice`); callable from the room's actor, never blocks. Set by
    /// the directory, which keeps the rooms.
    var notify: @Sendable (RoomNotice) -> Void = { _ in }

    package init(
        transport: any MessageTransport, storage: Storage, clock: any ServerClock, narrator: any NarrationPreparing,
        lookalikes: any ConfusableSkeleton, metrics: ServerMetrics, logger: StoryCircleLog, timing: RoomTiming = .init(),
        bindings: ConnectionBindings = ConnectionBindings(), leaseClock: any MonotonicClock = SystemMonotonicClock(), executor: LoopExecutor? = nil,
        tokens: RoomTokens = .ephemeral(), disabledOwners: DisabledOwners = DisabledOwners()
    ) {
        self.tokens = tokens
        self.disabledOwners = disabledOwners
        self.transport = transport
        self.storage = storage
        self.clock = clock
        self.narrator = narrator
        self.lookalikes = lookalikes
        self.metrics = metrics
        self.logger = logger
        self.timing = timing
        self.bindings = bindings
        self.leaseClock = leaseClock
        self.executor = executor ?? .ownThread()
    }

    var store: any RoomStore { storage.rooms }

    /// How connections are turned away outside a room's core.
    var refusals: Refusals { Refusals(transport: transport, metrics: metrics) }
}
