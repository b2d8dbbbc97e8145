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
    /// What proves a teacher's or projector's token by its MAC, before any room is looked for.
    let tokens: RoomTokens

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
        tokens = services.tokens
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
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        // A proxy routed the connection by the URL's room: a hello for another room would reach a node that
        // may not own it.
        if let urlRoom = urlRooms[connection], urlRoom != trimmed {
            return refusals.refuse(connection, RoomError(.roomMismatch, "This connection was opened for another room. Please reload the page."))
        }
        waiting[connection] = []
        switch message {
        case .rejoin, .control, .watch:
            // Whether its token proves it is asked of the room (an actor): the connection's later messages
            // wait, in order.
            tasks.spawn { [self] in await admitToken(connection, message, trimmed, peer: peer) }
        default:
            admitLimited(connection, message, trimmed, peer: peer)
        }
    }

    /// A hello whose token the live room it names accepts (a child coming back, the teacher, the
    /// projector) goes straight in: many devices share a school's address, and what one of them guessed
    /// must never keep the others out. A token that proves nothing is a guess like a code.
    private func admitToken(_ connection: UInt64, _ message: ClientMessage, _ trimmed: String, peer: String) async {
        // A teacher's or projector's token proves itself (`RoomTokens`): its room may be in the store only.
        if provesByItsMAC(message, room: trimmed) {
            return await greetAfterFinding(connection, message, trimmed, peer: peer, at: clock.now(), counted: false)
        }
        if let room = await directory.room(trimmed), await Self.proves(message, to: room) {
            guard let queued = waiting.removeValue(forKey: connection) else { return }
            return bind(connection, message, to: room, peer: peer, then: queued)
        }
        guard waiting[connection] != nil else { return }
        admitLimited(connection, message, trimmed, peer: peer)
    }

    /// A hello that proves nothing (a code alone, or a token the room does not accept) meets the address's
    /// limits, in the router's turn: the hellos it may send (a refusal says when to try again), and, once
    /// its wrong codes and tokens are spent, a wait before it is answered, right or wrong, so guessing is
    /// slow and the answer's timing tells nothing. The wait is a timer: nothing else waits for it. Until it
    /// is known not to be wrong (`greetAfterFinding` gives it back), the hello counts as a wrong code, so
    /// guesses sent side by side each wait for the ones before them.
    private func admitLimited(_ connection: UInt64, _ message: ClientMessage, _ trimmed: String, peer: String) {
        let now = clock.now()
        guard hellos.allow(peer, at: now) else {
            waiting[connection] = nil
            metrics.joinRateLimited()
            let seconds = hellos.retryAfterSeconds(peer, at: now)
            return refusals.refuse(connection, RoomError(.rateLimited, "Too many tries from this device. Trying again in \(seconds) seconds.",
                                                         params: ["retryAfter": String(seconds)]))
        }
        let wait = failedHellos.wait(peer, at: now)
        failedHellos.debit(peer, at: now)
        guard wait > 0 else {
            tasks.spawn { [self] in await greetAfterFinding(connection, message, trimmed, peer: peer, at: now) }
            return
        }
        metrics.joinHeld()
        let clock = clock
        tasks.spawn { [self] in
            do { try await clock.sleep(until: now + wait) } catch { return }
            await greetAfterFinding(connection, message, trimmed, peer: peer, at: clock.now())
        }
    }

    private func provesByItsMAC(_ message: ClientMessage, room code: String) -> Bool {
        switch message {
        case .control(_, let token): tokens.role(of: token, room: code) == .teacher
        case .watch(_, let token): tokens.role(of: token, room: code) != nil
        default: false
        }
    }

    /// Whether the hello's token is accepted by `room` (a cheap check, in memory): `rejoin` by a child of
    /// the room, `control` by its teacher, `watch` by its teacher or projector. A code alone proves nothing.
    private static func proves(_ message: ClientMessage, to room: Room) async -> Bool {
        switch message {
        case .rejoin(_, let token): await room.recognizes(resumeToken: token)
        case .control(_, let token): room.credentials.isTeacher(token)
        case .watch(_, let token): room.credentials.watchRole(for: token) != nil
        default: false
        }
    }

    /// `counted`: the hello was counted against its address's limits (`admitLimited`), which give back
    /// what the server turned away for its own reasons, and what turned out not to be a wrong code.
    private func greetAfterFinding(_ connection: UInt64, _ message: ClientMessage, _ trimmed: String, peer: String, at now: ServerTime, counted: Bool = true) async {
        // Closed while it waited: nothing to find (the wrong code it may have been still counts).
        guard waiting[connection] != nil else { return }
        let found: Room?
        do {
            found = try await directory.findRoom(trimmed)
        } catch let error as RoomLeaseError {
            // Not the child's doing: a class behind one address, reconnecting through a failover, must not
            // spend its hello allowance on refusals while the dead node's lease lapses.
            if counted {
                hellos.refund(peer, at: clock.now())
                failedHellos.refund(peer, at: clock.now())
            }
            guard waiting.removeValue(forKey: connection) != nil else { return }
            logger.info("Room is held by another node; the connection is told to try again", ["room.code": trimmed, "error": error.description])
            return refusals.refuse(connection, RoomError(.tryAgain, "This room is moving to another server. Reconnecting…"))
        } catch {
            if counted { failedHellos.refund(peer, at: clock.now()) }
            guard waiting.removeValue(forKey: connection) != nil else { return }
            logger.error("Room cannot be read from storage", ["error": StoreFailure.from(error, record: "archive").reason])
            return refusals.refuse(connection, RoomError(.storageUnavailable, "The room cannot be read just now. Please try again in a moment."))
        }
        // Closed while the room loaded: nothing to greet.
        guard let queued = waiting.removeValue(forKey: connection) else { return }
        guard let room = found else {
            let wellFormed = trimmed.count <= 12 && trimmed.allSatisfy(\.isNumber)
            let shown = wellFormed ? " \(trimmed)" : ""
            return refusals.refuse(connection, RoomError(.roomNotFound, "There is no room with the code\(shown). Check the code on the board and try again.",
                                                         params: wellFormed ? ["code": trimmed] : nil))
        }
        // The code names a room: no wrong code (a wrong token in it is the room's to count).
        if counted { failedHellos.refund(peer, at: now) }
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
