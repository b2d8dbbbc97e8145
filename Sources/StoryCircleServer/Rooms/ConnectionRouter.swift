import StoryCircleCore
import TransportCore

/// Routes transport events to rooms: the first message of a connection (the hello) finds its room in the
/// `RoomDirectory`, after which the connection is bound (`ConnectionBindings`) and its messages go straight
/// to that room's inbox, in order.
actor ConnectionRouter {
    private let events: AsyncStream<TransportEvent>
    private var peers: [UInt64: String] = [:]
    /// Connections whose hello waits for its room to load, with what they sent meanwhile (kept in order).
    private var waiting: [UInt64: [[UInt8]]] = [:]
    /// The room in each connection's upgrade URL (`/ws?room=…`), which its hello must name.
    private var urlRooms: [UInt64: String] = [:]
    private let tasks = OwnedTasks()

    let directory: RoomDirectory
    let bindings: ConnectionBindings
    let refusals: Refusals
    let clock: any ServerClock
    let metrics: ServerMetrics
    let logger: StoryCircleLog
    let hellos: AddressRateLimiter
    let failedHellos: AddressRateLimiter

    /// `failedHellos` is the rooms' own (`RoomServices.failedHellos`): they count a wrong token against its address.
    init(events: AsyncStream<TransportEvent>, directory: RoomDirectory, services: RoomServices, hellos: AddressRateLimiter, failedHellos: AddressRateLimiter) {
        self.events = events
        self.directory = directory
        self.bindings = services.bindings
        self.refusals = services.refusals
        self.clock = services.clock
        self.metrics = services.metrics
        self.logger = services.logger
        self.hellos = hellos
        self.failedHellos = failedHellos
    }

    /// Routes transport events until the event stream ends.
    func run() async {
        for await event in events {
            route(event)
        }
    }

    /// Returns once the router's current turn is over: whatever it has handed to a room by now is counted
    /// off and, for a hello, bound (each of those happens in the turn that hands the message over).
    func settle() {}

    /// Waits for the hellos still waiting for their rooms.
    func stop() async {
        await tasks.stop()
    }

    private func route(_ event: TransportEvent) {
        switch event {
        case .opened(let connection, let peer, let query):
            peers[connection] = peer
            if let room = query["room"] { urlRooms[connection] = room }
        case .message(let connection, let bytes):
            switch bindings.binding(of: connection) {
            case .bound(let room):
                room.submit(.message(ConnectionID(connection), bytes))
            case .letGo:
                // Its room let it go and is closing it (telling it why): nothing it says now is answered.
                break
            case .unbound where waiting[connection] != nil:
                waiting[connection]?.append(bytes)
            case .unbound:
                greet(connection, bytes)
            }
            bindings.countOff(connection)
        case .closed(let connection):
            peers[connection] = nil
            urlRooms[connection] = nil
            waiting[connection] = nil
            bindings.unbind(connection)?.submit(.disconnected(ConnectionID(connection)))
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
        case .failure(let error): return refusals.refuse(connection, error)
        }
        guard let code = message.helloRoom else {
            return refusals.refuse(connection, RoomError(.helloRequired, "Say who you are first: join, rejoin, watch or control."))
        }
        let now = clock.now()
        guard failedHellos.hasCapacity(peer, at: now), hellos.allow(peer, at: now) else {
            metrics.joinRateLimited()
            return refusals.refuse(connection, RoomError(.rateLimited, "Too many tries from this device. Please wait a minute and try again."))
        }
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        // A proxy routed the connection by the URL's room: a hello for another room would reach a node that
        // may not own it.
        if let urlRoom = urlRooms[connection], urlRoom != trimmed {
            return refusals.refuse(connection, RoomError(.roomMismatch, "This connection was opened for another room. Please reload the page."))
        }
        // Finding the room may load it from the store: the connection's later messages wait, in order.
        waiting[connection] = []
        tasks.spawn { [self] in await greetAfterFinding(connection, message, trimmed, peer: peer, at: now) }
    }

    private func greetAfterFinding(_ connection: UInt64, _ message: ClientMessage, _ trimmed: String, peer: String, at now: ServerTime) async {
        let found: Room?
        do {
            found = try await directory.findRoom(trimmed)
        } catch let error as RoomLeaseError {
            // Not the child's doing: a class behind one address, reconnecting through a failover, must not
            // spend its hello allowance on refusals while the dead node's lease lapses.
            hellos.refund(peer, at: clock.now())
            guard waiting.removeValue(forKey: connection) != nil else { return }
            logger.info("Room is held by another node; the connection is told to try again", ["room.code": trimmed, "error": error.description])
            return refusals.refuse(connection, RoomError(.tryAgain, "This room is moving to another server. Reconnecting…"))
        } catch {
            guard waiting.removeValue(forKey: connection) != nil else { return }
            logger.error("Room cannot be read from storage", ["error": StoreFailure.from(error, record: "archive").reason])
            return refusals.refuse(connection, RoomError(.storageUnavailable, "The room cannot be read just now. Please try again in a moment."))
        }
        // Closed while the room loaded: nothing to greet.
        guard let queued = waiting.removeValue(forKey: connection) else { return }
        guard let room = found else {
            _ = failedHellos.allow(peer, at: now)
            let wellFormed = trimmed.count <= 12 && trimmed.allSatisfy(\.isNumber)
            let shown = wellFormed ? " \(trimmed)" : ""
            return refusals.refuse(connection, RoomError(.roomNotFound, "There is no room with the code\(shown). Check the code on the board and try again.",
                                                         params: wellFormed ? ["code": trimmed] : nil))
        }
        bind(connection, message, to: room, peer: peer, then: queued)
    }

    /// `queued`: what the connection sent while its room was found; it reaches the room before the
    /// transport may deliver anything straight to it (`bindings.bind` comes last).
    private func bind(_ connection: UInt64, _ message: ClientMessage, to room: Room, peer: String, then queued: [[UInt8]]) {
        let hello: Hello
        switch message {
        case .join(_, let nickname): hello = .join(nickname: nickname, resumeToken: Tokens.resume(room: room.code))
        case .pick(_, let member): hello = .pick(member: member, resumeToken: Tokens.resume(room: room.code))
        case .names: hello = .names
        case .rejoin(_, let token): hello = .rejoin(token: token)
        case .watch(_, let token): hello = .watch(token: token)
        case .control(_, let token): hello = .control(token: token)
        default: return
        }
        room.submit(.hello(ConnectionID(connection), hello, peer: peer))
        for bytes in queued { room.submit(.message(ConnectionID(connection), bytes)) }
        // The room may have been let go (evicted, moved) since it was found: the page reconnects and finds
        // it again wherever it is.
        if !bindings.bind(connection, to: room) { refusals.refuse(connection, .moved) }
    }
}
