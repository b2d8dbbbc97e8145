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
/// Unfinished rooms are restored when the server starts; any other stored room (a finished one, one
/// evicted from memory) is loaded when something asks for it (`findRoom(_:admitting:)`).
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

    let transport: any MessageTransport
    let store: any RoomStore
    let clock: any ServerClock
    let narrator: any NarrationPreparing
    let metrics: ServerMetrics
    let timing: RoomTiming
    let roomDefaults: RoomSettings
    let hellos: AddressRateLimiter
    let failedHellos: AddressRateLimiter
    let logger: Logger
    let storage: StorageMonitor
    let storageRetryMs: Int
    let retentionDays: Int
    /// The bindings the transport reads to skip this actor (`InboundRoutes`); kept in step with `bindings`.
    let routes: InboundRoutes

    init(
        events: AsyncStream<TransportEvent>, transport: any MessageTransport, store: any RoomStore,
        clock: any ServerClock, narrator: any NarrationPreparing, metrics: ServerMetrics, configuration: ServerConfiguration,
        timing: RoomTiming = .init(), logger: Logger, routes: InboundRoutes = InboundRoutes()
    ) {
        self.routes = routes
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
        for await event in events {
            route(event)
        }
    }

    // MARK: - Rooms

    /// Creates a room for `story`, stores it, and returns its code and tokens.
    public func createRoom(story: Story, settings patch: RoomSettingsPatch? = nil) throws -> CreatedRoom {
        guard acceptingRooms else { throw RoomError(.serverShuttingDown, "The server is shutting down.") }
        let settings = try roomDefaults.applying(patch ?? RoomSettingsPatch())
        do {
            var code = Tokens.roomCode()
            var attempts = 0
            while try rooms[code] != nil || store.codeExists(code) {
                attempts += 1
                guard attempts < 1_000 else { throw RoomError(.internalError, "No free room code could be found.") }
                code = Tokens.roomCode()
            }
            let teacherToken = Tokens.generate()
            let dashboardToken = Tokens.generate()
            let credentials = RoomCredentials(teacherToken: teacherToken, dashboardToken: dashboardToken)
            let now = clock.now()
            try store.createRoom(RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: now))
            let state = RoomState(code: code, story: story, settings: settings, credentials: credentials, timing: timing)
            launch(state, createdAt: now, initial: [])
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
    public func restoreRooms() throws -> Int {
        let archives = try store.unfinishedRooms()
        for archive in archives where rooms[archive.header.code] == nil {
            adopt(archive)
            logger.notice("Room restored", ["room.code": archive.header.code, "room.phase": archive.lastPhase.rawValue])
        }
        return archives.count
    }

    /// The room `code`: the live one, or else the stored one, loaded into memory, when `admit` accepts its
    /// credentials (so a wrong token does not load anything). `nil` when there is no such room, or it is
    /// not admitted. This is the one way a room that is not in memory comes back: a finished room after a
    /// restart, a room evicted after it finished, or one that could not be read back for a while.
    public func findRoom(_ code: String, admitting admit: @Sendable (RoomCredentials) -> Bool = { _ in true }) throws -> Room? {
        if let room = rooms[code] { return room }
        guard acceptingRooms, let archive = try store.archive(room: code), admit(archive.header.credentials) else { return nil }
        let room = adopt(archive)
        logger.info("Room loaded from storage", ["room.code": code, "room.phase": archive.lastPhase.rawValue])
        return room
    }

    /// The room `code` if it is in memory (`findRoom` also loads it from storage).
    public func room(_ code: String) -> Room? {
        rooms[code]
    }

    /// Makes a stored room live again, where the records say it was (`RoomState.restore`).
    @discardableResult
    private func adopt(_ archive: RoomArchive) -> Room {
        let (state, directives) = RoomState.restore(archive, timing: timing, at: clock.now())
        let finishedAt = archive.phases.last { $0.phase == .finished }?.at
        let room = launch(state, createdAt: archive.header.createdAt, finishedAt: finishedAt, initial: directives)
        metrics.roomRestored()
        return room
    }

    @discardableResult
    private func launch(_ state: RoomState, createdAt: ServerTime, finishedAt: ServerTime? = nil, initial: [RoomDirective]) -> Room {
        let services = RoomServices(
            transport: transport, store: store, clock: clock, narrator: narrator, metrics: metrics, failedHellos: failedHellos,
            logger: logger, storage: storage, storageRetryMs: storageRetryMs,
            release: { [weak self] room in await self?.release(room) }
        )
        let room = Room(state: state, createdAt: createdAt, finishedAt: finishedAt, services: services)
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
        let purged = (try? store.purge(createdBefore: retentionCutoff)) ?? 0
        if purged > 0 { logger.notice("Old rooms purged", ["rooms": String(purged)]) }
        return (evicted, purged)
    }

    /// A room that can neither store its records nor read them back: forget it until someone asks again.
    private func release(_ room: Room) async {
        guard await remove(room.code, room, closing: 1013, RoomError(.storageUnavailable, "The room cannot be saved or read just now. Please try again in a moment.")) else { return }
        logger.warning("Room released until its storage can be read", ["room.code": room.code])
    }

    /// Takes a room out of memory: every connection bound to it is told why and closed, and forgotten.
    @discardableResult
    private func remove(_ code: String, _ room: Room, closing status: UInt16, _ error: RoomError) async -> Bool {
        // The sweep awaits between rooms: by now this one may have gone (or come back as another).
        guard rooms[code] === room else { return false }
        rooms[code] = nil
        runs[code] = nil
        let bound = bindings.compactMap { $0.value === room ? $0.key : nil }.sorted()
        if !bound.isEmpty {
            metrics.errorSent(error.code)
            transport.send(OutboundFrame(ServerMessage.error(error).encoded()), to: bound)
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
        for room in rooms.values { await room.shutDown() }
        for run in runs.values { await run.value }
    }

    // MARK: - Storage

    private func storageChanged(_ health: StoreHealth) {
        storageProblem = health.reason.map(StorageMonitor.teacherMessage)
        for room in rooms.values { room.submit(.storage(problem: storageProblem)) }
    }

    // MARK: - Connections

    private func route(_ event: TransportEvent) {
        switch event {
        case .opened(let connection, let peer):
            peers[connection] = peer
        case .message(let connection, let bytes):
            if let room = bindings[connection] {
                room.submit(.message(ConnectionID(connection), bytes))
            } else {
                greet(connection, bytes)
            }
            routes.routed(connection)
        case .closed(let connection):
            peers[connection] = nil
            routes.unbind(connection)
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
        let found: Room?
        do {
            found = try findRoom(trimmed)
        } catch {
            logger.error("Room cannot be read from storage", ["error": StoreFailure.from(error, record: "archive").reason])
            metrics.errorSent(.storageUnavailable)
            let refusal = RoomError(.storageUnavailable, "The room cannot be read just now. Please try again in a moment.")
            transport.send(OutboundFrame(ServerMessage.error(refusal).encoded()), to: [connection])
            transport.close(connection, status: 1013, reason: refusal.code.rawValue)
            return
        }
        guard let room = found else {
            _ = failedHellos.allow(peer, at: now)
            let shown = trimmed.count <= 12 && trimmed.allSatisfy(\.isNumber) ? " \(trimmed)" : ""
            return refuse(connection, RoomError(.roomNotFound, "There is no room with the code\(shown). Check the code on the board and try again."))
        }
        let hello: Hello
        switch message {
        case .join(_, let nickname): hello = .join(nickname: nickname, resumeToken: Tokens.generate())
        case .rejoin(_, let token): hello = .rejoin(token: token)
        case .watch(_, let token): hello = .watch(token: token)
        case .control(_, let token): hello = .control(token: token)
        default: return
        }
        bindings[connection] = room
        routes.bind(connection, to: room)
        room.submit(.hello(ConnectionID(connection), hello, peer: peer))
    }

    private func refuse(_ connection: UInt64, _ error: RoomError) {
        metrics.errorSent(error.code)
        transport.send(OutboundFrame(ServerMessage.error(error).encoded()), to: [connection])
        transport.close(connection, status: 1008, reason: error.code.rawValue)
    }
}
