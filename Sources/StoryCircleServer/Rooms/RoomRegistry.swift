import Foundation
import StoryCircleCore
import WebSocketTransport

/// A new room's credentials, shown once to whoever created it.
public struct CreatedRoom: Sendable, Equatable {
    public var code: String
    public var teacherToken: String
    public var dashboardToken: String
    public var title: String
}

/// Maps room codes to `Room` actors, creates and restores rooms, and routes connections: the first message
/// of a connection (the hello) finds its room here, after which the connection's messages go straight to
/// that room's inbox, in order.
///
/// With a store of its own (SQLite, memory), unfinished rooms are restored when the server starts; any other
/// stored room (a finished one, one evicted from memory) is loaded when something asks for it
/// (`findRoom(_:admitting:)`). With a store that several nodes share (PostgreSQL), every room is loaded
/// that way: the other nodes own the rest.
///
/// A room runs here only under a lease (`RoomLeases`) this node took before loading it, and every record it
/// writes carries that lease, so two nodes never both run a room: a node that cannot take a room (another
/// holds it) refuses with `try_again`, and a room whose lease is lost stops at once. One task renews every
/// lease of the node. A refusal also tells the store that this node wants the room; the holder learns it
/// at its next renewal and hands the room over (`handOver`), so rooms follow the proxy back to a node
/// that returned.
public actor RoomRegistry {
    private var rooms: [String: Room] = [:]
    private var runs: [String: Task<Void, Never>] = [:]
    private var bindings: [UInt64: Room] = [:]
    private var peers: [UInt64: String] = [:]
    private let events: AsyncStream<TransportEvent>
    private var acceptingRooms = true
    /// Why storage is failing, while it is (for rooms' teachers, including rooms loaded meanwhile).
    private var storageProblem: String?
    private var watchingStorage: Task<Void, Never>?
    /// Rooms being taken and loaded: everyone who asks for one meanwhile waits for the same load.
    private var loads: [String: Task<Room?, any Error>] = [:]
    /// Connections whose hello waits for its room to load, with what they sent meanwhile (kept in order).
    private var waiting: [UInt64: [[UInt8]]] = [:]
    /// The room in each connection's upgrade URL (`/ws?room=…`), which its hello must name.
    private var urlRooms: [UInt64: String] = [:]
    /// Where the lease of each room in memory stands after its last renewal, by epoch.
    private var leaseDeadlines: [Int64: ContinuousClock.Instant] = [:]
    private var renewing: Task<Void, Never>?
    /// Since when each room (by epoch) has had no connection, with a shared store.
    private var idleSince: [Int64: ContinuousClock.Instant] = [:]
    /// How long a room with nobody connected stays on this node, with a shared store. After a node that
    /// died comes back, the proxy sends its rooms to it again: the node that took them over meanwhile must
    /// let go of them, or the returning node would refuse them (`try_again`) for as long as it keeps them.
    static let idleRelease: Duration = .seconds(60)
    /// When each room in memory (by epoch) was taken here: a room is handed over only after a lease period
    /// here, so a proxy flapping between two nodes moves a room at most once a period, not on every hello.
    private var heldSince: [Int64: ContinuousClock.Instant] = [:]
    /// Rooms being handed over to the node that asked for them: hellos and requests for them meanwhile are
    /// told to try again.
    private var handingOver: Set<String> = []

    let transport: any MessageTransport
    let store: any RoomStore
    let clock: any ServerClock
    let narrator: any NarrationPreparing
    let metrics: ServerMetrics
    let timing: RoomTiming
    let roomDefaults: RoomSettings
    let hellos: AddressRateLimiter
    let failedHellos: AddressRateLimiter
    let logger: StoryCircleLog
    let storage: StorageMonitor
    let storageRetryMs: Int
    let retentionDays: Int
    /// The bindings the transport reads to skip this actor (`InboundRoutes`); kept in step with `bindings`.
    let routes: InboundRoutes
    /// `nil` for a store without leases (test doubles): rooms are then written unfenced.
    let leases: (any RoomLeases)?
    let nodeId: String
    let leaseDuration: Duration
    /// Whether other nodes may share the store: then no room is restored at start or run at creation, only
    /// loaded by the node the proxy sends it to.
    let sharedStore: Bool

    init(
        events: AsyncStream<TransportEvent>, transport: any MessageTransport, store: any RoomStore,
        clock: any ServerClock, narrator: any NarrationPreparing, metrics: ServerMetrics, configuration: ServerConfiguration,
        timing: RoomTiming = .init(), logger: StoryCircleLog, routes: InboundRoutes = InboundRoutes(), sharedStore: Bool = false
    ) {
        self.routes = routes
        self.leases = store as? any RoomLeases
        self.nodeId = configuration.nodeId ?? Self.defaultNodeId()
        self.leaseDuration = .seconds(configuration.leaseSeconds)
        self.sharedStore = sharedStore
        self.events = events
        self.transport = transport
        self.store = store
        self.clock = clock
        self.narrator = narrator
        self.metrics = metrics
        self.timing = timing
        self.roomDefaults = configuration.roomDefaults
        self.hellos = AddressRateLimiter(burst: Double(configuration.joinBurst), perSecond: configuration.joinsPerSecond)
        self.failedHellos = AddressRateLimiter(burst: Double(configuration.failedJoinBurst), perSecond: configuration.failedJoinsPerMinute / 60)
        self.logger = logger
        self.storage = StorageMonitor(store: store, clock: clock, logger: logger)
        self.storageRetryMs = configuration.storageRetrySeconds * 1_000
        self.retentionDays = configuration.retentionDays
    }

    /// Routes transport events until the event stream ends, and tells rooms when storage fails or works
    /// again.
    func run() async {
        watchingStorage = Task { [storage] in
            await storage.run { [weak self] health in await self?.storageChanged(health) }
        }
        if leases != nil {
            renewing = Task { [weak self, leaseDuration] in
                // Real time, not the server clock (tests stop theirs): leases run on the monotonic clock.
                while !Task.isCancelled {
                    do { try await Task.sleep(for: leaseDuration / 3) } catch { return }
                    await self?.renewLeases()
                }
            }
        }
        for await event in events {
            route(event)
        }
    }

    // MARK: - Rooms

    /// Creates a room for `story`, stores it, and returns its code and tokens.
    public func createRoom(story: Story, settings patch: RoomSettingsPatch? = nil) async throws -> CreatedRoom {
        guard acceptingRooms else { throw RoomError(.serverShuttingDown, "The server is shutting down.") }
        let settings = try roomDefaults.applying(patch ?? RoomSettingsPatch())
        do {
            let teacherToken = Tokens.generate()
            let dashboardToken = Tokens.generate()
            let credentials = RoomCredentials(teacherToken: teacherToken, dashboardToken: dashboardToken)
            let now = clock.now()
            var code = ""
            var attempts = 0
            while true {
                attempts += 1
                guard attempts < 1_000 else { throw RoomError(.internalError, "No free room code could be found.") }
                code = Tokens.roomCode()
                if rooms[code] != nil { continue }
                if try await store.codeExists(code) { continue }
                do {
                    try await store.createRoom(RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: now))
                    break
                } catch let failure as StoreFailure where failure.kind == .rejected {
                    // Another node took the same code between the check and the insert (the code is the
                    // table's key): draw another.
                    guard (try? await store.codeExists(code)) == true else { throw failure }
                }
            }
            if !sharedStore {
                var lease: RoomLease?
                if let leases { lease = try await leases.acquire(room: code, node: nodeId, for: leaseDuration) }
                let state = RoomState(code: code, story: story, settings: settings, credentials: credentials, timing: timing)
                launch(state, createdAt: now, lease: lease, initial: [])
            }
            metrics.roomCreated()
            logger.info("Room created", ["room.code": code])
            return CreatedRoom(code: code, teacherToken: teacherToken, dashboardToken: dashboardToken, title: story.title)
        } catch let error as RoomError {
            throw error
        } catch {
            let failure = StoreFailure.from(error, record: "room.created")
            storage.poke()
            logger.error("Could not store a new room", ["error": failure.reason])
            throw RoomError(.storageUnavailable, "The room could not be saved (\(failure.reason)), so it was not created. Try again once storage works.")
        }
    }

    /// Brings back every room that had not finished when the server stopped.
    /// Nothing with a shared store: the other nodes own the rest, and each room comes back on the node the
    /// proxy sends it to.
    public func restoreRooms() async throws -> Int {
        guard !sharedStore else { return 0 }
        let archives = try await store.unfinishedRooms()
        for archive in archives where rooms[archive.header.code] == nil {
            var lease: RoomLease?
            if let leases { lease = try await leases.acquire(room: archive.header.code, node: nodeId, for: leaseDuration) }
            adopt(archive, lease: lease)
            logger.notice("Room restored", ["room.code": archive.header.code, "room.phase": archive.lastPhase.rawValue])
        }
        return archives.count
    }

    /// The room `code`: the live one, or else the stored one, loaded into memory, when `admit` accepts its
    /// credentials (so a wrong token does not load anything). `nil` when there is no such room, or it is
    /// not admitted. This is the one way a room that is not in memory comes back: a finished room after a
    /// restart, a room evicted after it finished, or one that could not be read back for a while.
    ///
    /// Loading takes the room's lease first, then reads it (so it sees everything an earlier owner stored),
    /// off this actor: other rooms' hellos do not wait for the database. Throws `RoomLeaseError.held` when
    /// another node holds the room (the caller refuses with `try_again`).
    public func findRoom(_ code: String, admitting admit: @escaping @Sendable (RoomCredentials) -> Bool = { _ in true }) async throws -> Room? {
        if let room = rooms[code] { return room }
        guard acceptingRooms else { return nil }
        // Its lease is still ours until the outbox finishes: loading it again here would only be refused.
        if handingOver.contains(code) { throw RoomLeaseError.held(room: code, by: nodeId) }
        let load: Task<Room?, any Error>
        if let pending = loads[code] {
            load = pending
        } else {
            load = Task { try await self.load(code) }
            loads[code] = load
        }
        guard let room = try await load.value, admit(room.credentials) else { return nil }
        return room
    }

    private func load(_ code: String) async throws -> Room? {
        defer { loads[code] = nil }
        let (store, leases, node, duration) = (self.store, self.leases, nodeId, leaseDuration)
        let (lease, archive) = try await { () async throws -> (RoomLease?, RoomArchive?) in
            guard let leases else { return (nil, try await store.archive(room: code)) }
            let lease: RoomLease
            do {
                lease = try await leases.acquire(room: code, node: node, for: duration)
            } catch RoomLeaseError.unknownRoom {
                return (nil, nil)
            }
            do {
                guard let archive = try await store.archive(room: code) else {
                    try? await leases.release(lease)
                    return (nil, nil)
                }
                return (lease, archive)
            } catch {
                try? await leases.release(lease)
                throw error
            }
        }()
        guard let archive else { return nil }
        guard acceptingRooms, rooms[code] == nil else {
            if let lease { release(lease) }
            return rooms[code]
        }
        let room = adopt(archive, lease: lease)
        logger.info("Room loaded from storage", ["room.code": code, "room.phase": archive.lastPhase.rawValue, "lease.epoch": lease.map { String($0.epoch) } ?? "none"])
        return room
    }

    /// Host name and process id: unique among live processes, and readable in logs and lease rows.
    static func defaultNodeId() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node"
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)"
    }

    /// The room `code` if it is in memory (`findRoom` also loads it from storage).
    public func room(_ code: String) -> Room? {
        rooms[code]
    }

    /// Makes a stored room live again, where the records say it was (`RoomState.restore`).
    @discardableResult
    private func adopt(_ archive: RoomArchive, lease: RoomLease?) -> Room {
        let (state, directives) = RoomState.restore(archive, timing: timing, at: clock.now())
        let finishedAt = archive.phases.last { $0.phase == .finished }?.at
        let room = launch(state, createdAt: archive.header.createdAt, finishedAt: finishedAt, lease: lease, initial: directives)
        metrics.roomRestored()
        return room
    }

    @discardableResult
    private func launch(_ state: RoomState, createdAt: ServerTime, finishedAt: ServerTime? = nil, lease: RoomLease? = nil, initial: [RoomDirective]) -> Room {
        var services = RoomServices(
            transport: transport, store: store, clock: clock, narrator: narrator, metrics: metrics, failedHellos: failedHellos,
            logger: logger, storage: storage, storageRetryMs: storageRetryMs,
            release: { [weak self] room in await self?.release(room) }
        )
        services.leaseLost = { [weak self] room in await self?.leaseLost(room) }
        let room = Room(state: state, createdAt: createdAt, finishedAt: finishedAt, lease: lease, services: services)
        if let lease {
            leaseDeadlines[lease.epoch] = lease.deadline
            heldSince[lease.epoch] = .now
        }
        rooms[room.code] = room
        runs[room.code] = Task { await room.run(initial: initial) }
        if let storageProblem { room.submit(.storage(problem: storageProblem)) }
        return room
    }

    public var liveRoomCount: Int { rooms.count }

    public var liveRooms: [Room] { Array(rooms.values) }

    /// Forgets finished rooms older than `age` that nobody is connected to (their results stay in storage,
    /// and the room is loaded again if someone asks for it), and deletes rooms past the retention period:
    /// from memory, closing their connections (1001), and from storage.
    public func sweep(finishedBefore cutoff: ServerTime, createdBefore retentionCutoff: ServerTime) async -> (evicted: Int, purged: Int) {
        var evicted = 0
        for (code, room) in rooms {
            guard let finishedAt = await room.finishedAt, finishedAt < cutoff, await room.connectionCount == 0 else { continue }
            if await remove(code, room, closing: 1001, RoomError(.roomEnded, "This room has finished.")) { evicted += 1 }
        }
        let days = retentionDays
        for (code, room) in rooms where room.createdAt < retentionCutoff {
            await remove(code, room, closing: 1001, RoomError(.roomEnded, "This room has been deleted: rooms are kept for \(days) day\(days == 1 ? "" : "s")."))
            logger.notice("Room deleted at the end of its retention period", ["room.code": code])
        }
        let purged = (try? await store.purge(createdBefore: retentionCutoff)) ?? 0
        if purged > 0 { logger.notice("Old rooms purged", ["rooms": String(purged)]) }
        return (evicted, purged)
    }

    /// A room that can neither store its records nor read them back: forget it until someone asks again.
    private func release(_ room: Room) async {
        guard await remove(room.code, room, closing: 1013, RoomError(.storageUnavailable, "The room cannot be saved or read just now. Please try again in a moment.")) else { return }
        logger.warning("Room released until its storage can be read", ["room.code": room.code])
    }

    /// Takes a room out of memory: every connection bound to it is told why and closed, and forgotten.
    /// Its lease is given up (`releasing`), so another node need not wait for it to expire.
    @discardableResult
    private func remove(_ code: String, _ room: Room, closing status: UInt16, _ error: RoomError, releasing: Bool = true) async -> Bool {
        // The sweep awaits between rooms: by now this one may have gone (or come back as another).
        guard rooms[code] === room else { return false }
        rooms[code] = nil
        runs[code] = nil
        if let lease = room.lease {
            leaseDeadlines[lease.epoch] = nil
            idleSince[lease.epoch] = nil
            heldSince[lease.epoch] = nil
            if releasing { release(lease) }
        }
        let bound = bindings.compactMap { $0.value === room ? $0.key : nil }.sorted()
        if !bound.isEmpty {
            metrics.errorSent(error.code)
            transport.send(OutboundFrame(ServerMessage.error(error).encoded(), priority: .reply), to: bound)
            for connection in bound {
                bindings[connection] = nil
                routes.unbind(connection)
                transport.close(connection, status: status, reason: error.code.rawValue)
            }
        }
        await room.shutDown()
        return true
    }

    /// Stops every room (timers, narration) and waits for their inboxes to finish.
    public func shutDown() async {
        acceptingRooms = false
        storage.stop()
        watchingStorage?.cancel()
        renewing?.cancel()
        for room in rooms.values { await room.shutDown() }
        for run in runs.values { await run.value }
        // Handed on at once rather than left to expire: the pages reconnect to the next node, which can
        // take the rooms straight away.
        if let leases {
            let held = rooms.values.compactMap(\.lease)
            for lease in held { try? await leases.release(lease) }
        }
    }

    // MARK: - Leases

    private func release(_ lease: RoomLease) {
        guard let leases else { return }
        Task { try? await leases.release(lease) }
    }

    /// Renews every lease of this node in one call. A lease the store no longer has is lost: its room stops
    /// here. While the store cannot be reached, a room whose lease runs out stops too, since this node can
    /// no longer prove it holds it.
    private func renewLeases() async {
        guard let leases else { return }
        if sharedStore { await releaseIdleRooms() }
        let current = rooms.values.compactMap(\.lease)
        guard !current.isEmpty else { return }
        let duration = leaseDuration
        do {
            let renewed = try await leases.renew(current, for: duration)
            let alive = Set(renewed.map(\.epoch))
            for lease in renewed where leaseDeadlines[lease.epoch] != nil { leaseDeadlines[lease.epoch] = lease.deadline }
            for lease in current where !alive.contains(lease.epoch) {
                await drop(lease, because: "lease not renewed")
            }
            // Each on its own: a room's outbox may take a while to finish, and must not hold up the others'
            // handovers or the next renewal.
            for lease in renewed {
                guard let wanter = lease.wantedBy, let room = rooms[lease.room], room.lease?.epoch == lease.epoch,
                    let since = heldSince[lease.epoch], ContinuousClock.now - since >= leaseDuration
                else { continue }
                let run = takeForHandover(lease.room, room, lease)
                Task { await self.handOver(room, run, lease, to: wanter) }
            }
        } catch {
            logger.warning("Room leases could not be renewed", ["error": StoreFailure.from(error, record: "lease").reason, "leases": String(current.count)])
            let now = ContinuousClock.now
            for lease in current where (leaseDeadlines[lease.epoch] ?? lease.deadline) <= now {
                await drop(lease, because: "lease expired")
            }
        }
    }

    /// The synchronous half of a handover: the room leaves the map at once (so the next renewal does not
    /// see it, and hellos for it are told to try again), and its connections stop feeding it: what they send
    /// from now on waits in `waiting` and is dropped at the close (nothing of it was acknowledged).
    private func takeForHandover(_ code: String, _ room: Room, _ lease: RoomLease) -> Task<Void, Never>? {
        rooms[code] = nil
        let run = runs.removeValue(forKey: code)
        leaseDeadlines[lease.epoch] = nil
        idleSince[lease.epoch] = nil
        heldSince[lease.epoch] = nil
        handingOver.insert(code)
        return run
    }

    /// Hands a room to the node that asked for it: lets the room finish what it already took (its inbox,
    /// then its outbox, so every acknowledgement goes out and everything acknowledged is stored), then
    /// releases the lease and only then closes the connections with 1012, so they reconnect (through the
    /// proxy, to the node that wants the room) when that node can take it at once.
    private func handOver(_ room: Room, _ run: Task<Void, Never>?, _ lease: RoomLease, to wanter: String) async {
        let started = ContinuousClock.now
        let bound = bindings.compactMap { $0.value === room ? $0.key : nil }.sorted()
        for connection in bound {
            bindings[connection] = nil
            routes.unbind(connection)
            waiting[connection] = []
        }
        await room.shutDown()
        // The inbox ends after what it already holds: those messages are decided (and their records issued)
        // before the wait, so their acknowledgements go out under the lease too.
        await run?.value
        let stored = await room.waitUntilStored()
        if let leases { try? await leases.release(lease) }
        handingOver.remove(lease.room)
        let open = bound.filter { waiting.removeValue(forKey: $0) != nil }
        if !open.isEmpty {
            let error = RoomError(.tryAgain, "This room moved to another server. Reconnecting…")
            metrics.errorSent(error.code)
            transport.send(OutboundFrame(ServerMessage.error(error).encoded(), priority: .reply), to: open)
            for connection in open { transport.close(connection, status: 1012, reason: error.code.rawValue) }
        }
        logger.notice("Room handed over to the node that asked for it", [
            "room.code": lease.room, "lease.epoch": String(lease.epoch), "node.wanting": wanter,
            "connections": String(open.count), "records.stored": String(stored), "duration.ms": String((ContinuousClock.now - started).leaseMilliseconds),
        ])
    }

    private func releaseIdleRooms() async {
        let now = ContinuousClock.now
        for (code, room) in rooms {
            guard let lease = room.lease else { continue }
            if await room.connectionCount > 0 {
                idleSince[lease.epoch] = nil
            } else if let since = idleSince[lease.epoch] {
                guard now - since >= Self.idleRelease else { continue }
                if await remove(code, room, closing: 1012, RoomError(.tryAgain, "This room moved to another server. Reconnecting…")) {
                    logger.info("Room released after a while with nobody connected", ["room.code": code])
                }
            } else {
                idleSince[lease.epoch] = now
            }
        }
    }

    private func leaseLost(_ room: Room) async {
        guard let lease = room.lease else { return }
        await drop(lease, because: "write refused")
    }

    /// Stops a room whose lease is gone: its connections are told to try again (1012), which brings them
    /// to whichever node holds the room now.
    private func drop(_ lease: RoomLease, because why: String) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else { return }
        let error = RoomError(.tryAgain, "This room moved to another server. Reconnecting…")
        if await remove(lease.room, room, closing: 1012, error, releasing: false) {
            metrics.roomLeaseLost()
            logger.warning("Room stopped: its lease is lost", ["room.code": lease.room, "lease.epoch": String(lease.epoch), "why": why])
        }
    }

    // MARK: - Storage

    private func storageChanged(_ health: StoreHealth) {
        storageProblem = health.reason.map(StorageMonitor.teacherMessage)
        for room in rooms.values { room.submit(.storage(problem: storageProblem)) }
    }

    // MARK: - Connections

    private func route(_ event: TransportEvent) {
        switch event {
        case .opened(let connection, let peer, let room):
            peers[connection] = peer
            if let room { urlRooms[connection] = room }
        case .message(let connection, let bytes):
            if let room = bindings[connection] {
                room.submit(.message(ConnectionID(connection), bytes))
            } else if waiting[connection] != nil {
                waiting[connection]?.append(bytes)
            } else {
                greet(connection, bytes)
            }
            routes.routed(connection)
        case .closed(let connection):
            peers[connection] = nil
            routes.unbind(connection)
            urlRooms[connection] = nil
            waiting[connection] = nil
            if let room = bindings.removeValue(forKey: connection) {
                room.submit(.disconnected(ConnectionID(connection)))
            }
        case .request:
            break
        }
    }

    /// The first message on a connection: it must say who it is and name a room that exists.
    private func greet(_ connection: UInt64, _ bytes: [UInt8]) {
        let peer = peers[connection] ?? ""
        let message: ClientMessage
        switch ClientMessage.decode(bytes) {
        case .success(let decoded): message = decoded
        case .failure(let error): return refuse(connection, error)
        }
        guard let code = message.helloRoom else {
            return refuse(connection, RoomError(.helloRequired, "Say who you are first: join, rejoin, watch or control."))
        }
        let now = clock.now()
        guard failedHellos.hasCapacity(peer, at: now), hellos.allow(peer, at: now) else {
            metrics.joinRateLimited()
            return refuse(connection, RoomError(.rateLimited, "Too many tries from this device. Please wait a minute and try again."))
        }
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        // A proxy routed the connection by the URL's room: a hello for another room would reach a node that
        // may not own it.
        if let urlRoom = urlRooms[connection], urlRoom != trimmed {
            return refuse(connection, RoomError(.roomMismatch, "This connection was opened for another room. Please reload the page."))
        }
        if let room = rooms[trimmed] {
            return bind(connection, message, to: room, peer: peer)
        }
        // Loading takes a database round trip: the connection's later messages wait for it, in order.
        waiting[connection] = []
        Task { await self.greetAfterLoading(connection, message, trimmed, peer: peer, at: now) }
    }

    private func greetAfterLoading(_ connection: UInt64, _ message: ClientMessage, _ trimmed: String, peer: String, at now: ServerTime) async {
        let found: Room?
        do {
            found = try await findRoom(trimmed)
        } catch let error as RoomLeaseError {
            // Not the child's doing: a class behind one address, reconnecting through a failover, must not
            // spend its hello allowance on refusals while the dead node's lease lapses.
            hellos.refund(peer, at: clock.now())
            guard waiting.removeValue(forKey: connection) != nil else { return }
            logger.info("Room is held by another node; the connection is told to try again", ["room.code": trimmed, "error": error.description])
            return tryAgainLater(connection)
        } catch {
            guard waiting.removeValue(forKey: connection) != nil else { return }
            logger.error("Room cannot be read from storage", ["error": StoreFailure.from(error, record: "archive").reason])
            metrics.errorSent(.storageUnavailable)
            let refusal = RoomError(.storageUnavailable, "The room cannot be read just now. Please try again in a moment.")
            transport.send(OutboundFrame(ServerMessage.error(refusal).encoded(), priority: .reply), to: [connection])
            transport.close(connection, status: 1013, reason: refusal.code.rawValue)
            return
        }
        // Closed while the room loaded: nothing to greet.
        guard let queued = waiting.removeValue(forKey: connection) else { return }
        guard let room = found else {
            _ = failedHellos.allow(peer, at: now)
            let shown = trimmed.count <= 12 && trimmed.allSatisfy(\.isNumber) ? " \(trimmed)" : ""
            return refuse(connection, RoomError(.roomNotFound, "There is no room with the code\(shown). Check the code on the board and try again."))
        }
        bind(connection, message, to: room, peer: peer, then: queued)
    }

    /// `queued`: what the connection sent while its room loaded; it reaches the room before the transport
    /// may deliver anything straight to it (`routes.bind` comes last).
    private func bind(_ connection: UInt64, _ message: ClientMessage, to room: Room, peer: String, then queued: [[UInt8]] = []) {
        let hello: Hello
        switch message {
        case .join(_, let nickname): hello = .join(nickname: nickname, resumeToken: Tokens.generate())
        case .rejoin(_, let token): hello = .rejoin(token: token)
        case .watch(_, let token): hello = .watch(token: token)
        case .control(_, let token): hello = .control(token: token)
        default: return
        }
        bindings[connection] = room
        room.submit(.hello(ConnectionID(connection), hello, peer: peer))
        for bytes in queued { room.submit(.message(ConnectionID(connection), bytes)) }
        routes.bind(connection, to: room)
    }

    /// Another node holds the room (or is handing it over): 1012 ("service restart") tells the page to
    /// reconnect shortly, by which time the proxy or the lease has settled on one node.
    private func tryAgainLater(_ connection: UInt64) {
        let refusal = RoomError(.tryAgain, "This room is moving to another server. Reconnecting…")
        metrics.errorSent(.tryAgain)
        transport.send(OutboundFrame(ServerMessage.error(refusal).encoded(), priority: .reply), to: [connection])
        transport.close(connection, status: 1012, reason: refusal.code.rawValue)
    }

    private func refuse(_ connection: UInt64, _ error: RoomError) {
        metrics.errorSent(error.code)
        transport.send(OutboundFrame(ServerMessage.error(error).encoded(), priority: .reply), to: [connection])
        transport.close(connection, status: 1008, reason: error.code.rawValue)
    }
}
