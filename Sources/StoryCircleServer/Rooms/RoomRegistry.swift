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
public actor RoomRegistry {
    private var rooms: [String: Room] = [:]
    private var runs: [String: Task<Void, Never>] = [:]
    private var bindings: [UInt64: Room] = [:]
    private var peers: [UInt64: String] = [:]
    private let events: AsyncStream<TransportEvent>
    private var acceptingRooms = true

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

    init(
        events: AsyncStream<TransportEvent>, transport: any MessageTransport, store: any RoomStore,
        clock: any ServerClock, narrator: any NarrationPreparing, metrics: ServerMetrics, configuration: ServerConfiguration,
        timing: RoomTiming = .init(), logger: Logger
    ) {
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
    }

    /// Routes transport events until the event stream ends.
    func run() async {
        for await event in events {
            route(event)
        }
    }

    // MARK: - Rooms

    /// Creates a room for `story`, stores it, and returns its code and tokens.
    public func createRoom(story: Story, settings patch: RoomSettingsPatch? = nil) throws -> CreatedRoom {
        guard acceptingRooms else { throw RoomError(.serverShuttingDown, "The server is shutting down.") }
        let settings = try roomDefaults.applying(patch ?? RoomSettingsPatch())
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
        launch(Room(state: state, createdAt: now, transport: transport, store: store, clock: clock, narrator: narrator, metrics: metrics, failedHellos: failedHellos, logger: logger), initial: [])
        metrics.roomCreated()
        logger.info("Room created", ["room.code": code])
        return CreatedRoom(code: code, teacherToken: teacherToken, dashboardToken: dashboardToken, title: story.title)
    }

    /// Brings back every room that had not finished when the server stopped.
    public func restoreRooms() throws -> Int {
        let archives = try store.unfinishedRooms()
        let now = clock.now()
        for archive in archives where rooms[archive.header.code] == nil {
            let (state, directives) = RoomState.restore(archive, timing: timing, at: now)
            launch(Room(state: state, createdAt: archive.header.createdAt, transport: transport, store: store, clock: clock, narrator: narrator, metrics: metrics, failedHellos: failedHellos, logger: logger), initial: directives)
            metrics.roomRestored()
            logger.notice("Room restored", ["room.code": archive.header.code, "room.phase": state.phase.name.rawValue])
        }
        return archives.count
    }

    private func launch(_ room: Room, initial: [RoomDirective]) {
        rooms[room.code] = room
        runs[room.code] = Task { await room.run(initial: initial) }
    }

    public func room(_ code: String) -> Room? {
        rooms[code]
    }

    public var liveRoomCount: Int { rooms.count }

    public var liveRooms: [Room] { Array(rooms.values) }

    /// Forgets finished rooms older than `age` that nobody is connected to (their results stay in storage),
    /// and deletes rooms past the retention period from storage.
    public func sweep(finishedBefore cutoff: ServerTime, createdBefore retentionCutoff: ServerTime) async -> (evicted: Int, purged: Int) {
        var evicted = 0
        for (code, room) in rooms {
            guard let finishedAt = await room.finishedAt, finishedAt < cutoff, await room.connectionCount == 0 else { continue }
            await room.shutDown()
            rooms[code] = nil
            runs[code] = nil
            evicted += 1
        }
        for (code, room) in rooms where room.createdAt < retentionCutoff {
            await room.shutDown()
            rooms[code] = nil
            runs[code] = nil
        }
        let purged = (try? store.purge(createdBefore: retentionCutoff)) ?? 0
        if purged > 0 { logger.notice("Old rooms purged", ["rooms": String(purged)]) }
        return (evicted, purged)
    }

    /// Stops every room (timers, narration) and waits for their inboxes to finish.
    public func shutDown() async {
        acceptingRooms = false
        for room in rooms.values { await room.shutDown() }
        for run in runs.values { await run.value }
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
        case .closed(let connection):
            peers[connection] = nil
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
        guard let room = rooms[trimmed] else {
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
        room.submit(.hello(ConnectionID(connection), hello, peer: peer))
    }

    private func refuse(_ connection: UInt64, _ error: RoomError) {
        metrics.errorSent(error.code)
        transport.send(OutboundFrame(ServerMessage.error(error).encoded()), to: [connection])
        transport.close(connection, status: 1008, reason: error.code.rawValue)
    }
}
