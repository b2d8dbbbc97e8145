import StoryCircleCore
import WebSocketTransport

/// What reaches a room, in arrival order, through its inbox.
public enum RoomInput: Sendable {
    case hello(ConnectionID, Hello, peer: String)
    /// A raw text frame after the hello; the room decodes it, so decoding is spread across rooms.
    case message(ConnectionID, [UInt8])
    case disconnected(ConnectionID)
    case narration(NarrationUpdate)
    case timer(RoomTimer)
}

/// The shell around one `RoomState`: it feeds the state events stamped with the clock's time and carries
/// out the directives it returns (sends, closes, records, timers, narration). One actor per room, so rooms
/// never wait for each other; the inbox keeps each room's events in the order they arrived.
public actor Room {
    public nonisolated let code: String
    /// Immutable for the room's life, so tokens are checked without a hop onto the actor.
    public nonisolated let credentials: RoomCredentials
    public nonisolated let createdAt: ServerTime
    private nonisolated let inbox: AsyncStream<RoomInput>.Continuation
    private let inputs: AsyncStream<RoomInput>

    private var state: RoomState
    private let outbox: RoomOutbox
    private let clock: any ServerClock
    private let narrator: any NarrationPreparing
    private let metrics: ServerMetrics
    private let failedHellos: AddressRateLimiter?
    private let logger: Logger
    private var timers: [RoomTimer.Slot: Task<Void, Never>] = [:]
    private var narration: Task<Void, Never>?
    private var roundTrips: [ConnectionID: Int] = [:]
    private var peers: [ConnectionID: String] = [:]
    public private(set) var finishedAt: ServerTime?

    /// The most round trip a client may claim (the core credits at most `answerGraceMs` of it anyway).
    static let maximumReportedRoundTripMs = 10_000

    init(
        state: RoomState, createdAt: ServerTime, transport: any MessageTransport, store: any RoomStore,
        clock: any ServerClock, narrator: any NarrationPreparing, metrics: ServerMetrics,
        failedHellos: AddressRateLimiter?, logger: Logger
    ) {
        self.code = state.code
        self.credentials = state.credentials
        self.createdAt = createdAt
        self.state = state
        self.outbox = RoomOutbox(code: state.code, transport: transport, store: store, metrics: metrics, logger: logger)
        self.clock = clock
        self.narrator = narrator
        self.metrics = metrics
        self.failedHellos = failedHellos
        self.logger = logger
        (inputs, inbox) = AsyncStream.makeStream(of: RoomInput.self)
        if state.phase == .finished { finishedAt = createdAt }
    }

    /// Hands `input` to the room; callable from any thread, never blocks.
    public nonisolated func submit(_ input: RoomInput) {
        inbox.yield(input)
    }

    /// Processes the inbox until `shutDown()`. `initial` are directives to carry out first (a restored
    /// room's start-up).
    func run(initial: [RoomDirective] = []) async {
        carryOut(initial)
        for await input in inputs {
            process(input)
        }
    }

    /// Stops timers and narration and ends the inbox; connections are closed by the transport.
    func shutDown() {
        timers.values.forEach { $0.cancel() }
        timers = [:]
        narration?.cancel()
        narration = nil
        inbox.finish()
    }

    // MARK: - Requests from the HTTP API

    public func perform(_ command: TeacherCommand) throws(RoomError) -> RoomReport {
        carryOut(try state.perform(command, at: clock.now()))
        return report()
    }

    public func report() -> RoomReport {
        RoomReport(state: state, createdAt: createdAt, pendingRecords: outbox.pendingRecords)
    }

    public func results() -> RoomResults {
        state.results()
    }

    public var phase: RoomPhase { state.phase }

    public var connectionCount: Int { state.connectionCount }

    // MARK: - Events

    private func process(_ input: RoomInput) {
        let now = clock.now()
        switch input {
        case .hello(let connection, let hello, let peer):
            peers[connection] = peer
            carryOut(state.handle(.hello(connection, hello, at: now)))
        case .message(let connection, let bytes):
            switch ClientMessage.decode(bytes) {
            case .failure(let error):
                metrics.errorSent(error.code)
                outbox.sendImmediately(OutboundFrame(ServerMessage.error(error).encoded()), to: [connection.rawValue])
            case .success(.ping(let id, let clientTime, let roundTrip)):
                if let roundTrip { roundTrips[connection] = min(max(roundTrip, 0), Self.maximumReportedRoundTripMs) }
                let pong = ServerMessage.pong(Pong(id: id, clientTime: clientTime, serverTime: clock.now()))
                outbox.sendImmediately(OutboundFrame(pong.encoded()), to: [connection.rawValue])
            case .success(let message):
                carryOut(state.handle(.message(connection, message, at: now, roundTripMs: roundTrips[connection] ?? 0)))
            }
        case .disconnected(let connection):
            roundTrips[connection] = nil
            peers[connection] = nil
            carryOut(state.handle(.disconnected(connection, at: now)))
        case .narration(let update):
            carryOut(state.handle(.narration(update, at: now)))
        case .timer(let timer):
            carryOut(state.handle(.timer(timer, at: now)))
        }
    }

    private func carryOut(_ directives: [RoomDirective]) {
        for directive in directives {
            switch directive {
            case .send(let message, let recipients):
                account(for: message, to: recipients)
                outbox.send(OutboundFrame(message.encoded()), to: recipients.map(\.rawValue))
            case .close(let connection, let reason):
                outbox.close(connection.rawValue, status: reason.status, reason: reason.reason)
            case .persist(let record):
                outbox.persist(record)
            case .schedule(let timer, let at):
                schedule(timer, at: at)
            case .prepareNarration(let request):
                prepareNarration(request)
            }
        }
        if state.phase == .finished, finishedAt == nil {
            finishedAt = clock.now()
            narration?.cancel()
            logger.info("Room finished", ["room.code": code])
        }
    }

    private func account(for message: ServerMessage, to recipients: [ConnectionID]) {
        switch message {
        case .error(let error):
            metrics.errorSent(error.code)
            if error.code == .badToken, let peer = recipients.first.flatMap({ peers[$0] }) {
                // A wrong token is what guessing looks like: it spends the address's allowance.
                _ = failedHellos?.allow(peer, at: clock.now())
            }
        case .answerAck:
            metrics.answerAccepted()
        default:
            break
        }
    }

    private func schedule(_ timer: RoomTimer, at deadline: ServerTime) {
        timers[timer.slot]?.cancel()
        timers[timer.slot] = Task { [clock, inbox] in
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            inbox.yield(.timer(timer))
        }
    }

    private func prepareNarration(_ request: NarrationRequest) {
        narration?.cancel()
        let code = self.code
        narration = Task { [narrator, inbox, metrics, logger] in
            do {
                let plan = try await narrator.prepare(request) { ready, total in
                    inbox.yield(.narration(.progress(preparation: request.preparation, ready: ready, total: total)))
                }
                metrics.narrationPrepared(success: true)
                inbox.yield(.narration(.prepared(preparation: request.preparation, plan)))
            } catch is CancellationError {
                return
            } catch {
                metrics.narrationPrepared(success: false)
                logger.warning("Narration could not be prepared", ["room.code": code, "error": String(describing: error)])
                let message = (error as? any FriendlyError)?.friendlyMessage
                    ?? "Pip could not prepare the story. Your teacher can try again."
                inbox.yield(.narration(.failed(preparation: request.preparation, message: message)))
            }
        }
    }
}

/// A room's status for the API and the CLI.
public struct RoomReport: Sendable, Codable, Equatable {
    public var code: String
    public var title: String
    public var phase: PhaseName
    public var paused: Bool
    public var locked: Bool
    public var players: Int
    public var connectedPlayers: Int
    public var connections: Int
    public var question: Int?
    public var questionCount: Int
    public var answers: Int?
    /// Why the narration failed, in the error phase.
    public var errorMessage: String?
    public var settings: RoomSettings
    public var createdAt: ServerTime
    /// Records waiting to be written; non-zero only for a moment under load.
    public var pendingRecords: Int

    init(state: RoomState, createdAt: ServerTime, pendingRecords: Int) {
        code = state.code
        title = state.story.title
        phase = state.phase.name
        paused = state.phase.isPaused
        locked = state.isLocked
        players = state.playerCount
        connectedPlayers = state.connectedPlayerCount
        connections = state.connectionCount
        switch state.phase {
        case .question(let run): question = run.index
        case .reveal(let index): question = index
        default: question = nil
        }
        questionCount = state.story.quiz.questions.count
        answers = state.phase.name == .question ? state.answersToCurrentQuestion : nil
        if case .failed(let message) = state.phase { errorMessage = message }
        settings = state.settings
        self.createdAt = createdAt
        self.pendingRecords = pendingRecords
    }
}
