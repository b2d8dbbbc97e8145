import StoryCircleCore
import WebSocketTransport

/// What reaches a room, in arrival order, through its inbox.
public enum RoomInput: Sendable {
    case hello(ConnectionID, Hello, peer: String)
    /// A raw text frame after the hello; the room decodes it, so decoding is spread across rooms.
    case message(ConnectionID, [UInt8])
    case disconnected(ConnectionID)
    /// From the room's own narration and timer tasks, stamped with the room's generation: after a rebuild,
    /// what the previous generation's tasks still deliver is dropped.
    case narration(NarrationUpdate, generation: Int)
    case timer(RoomTimer, generation: Int)
    /// The server's storage began failing (why, for the teacher) or works again (`nil`).
    case storage(problem: String?)
    /// The outbox gave up storing the room's records: the room rebuilds itself from the store.
    case storageGaveUp(StoreFailure)
    /// The store refused a record for the room's lease: another node may hold the room now.
    case leaseLost
    /// The room's own read of its archive for a rebuild (`storageGaveUp`) came back: the archive, `nil`
    /// when there is none, or why it could not be read.
    case archiveRead(Result<RoomArchive?, StoreFailure>, after: StoreFailure)
}

/// What every room shares with the others.
struct RoomServices: Sendable {
    let transport: any MessageTransport
    let store: any RoomStore
    let clock: any ServerClock
    let narrator: any NarrationPreparing
    let metrics: ServerMetrics
    let failedHellos: AddressRateLimiter?
    let logger: StoryCircleLog
    let storage: StorageMonitor?
    /// How long a record that fails is tried again before the room gives up on it and rebuilds itself.
    let storageRetryMs: Int
    /// A room that can neither store its records nor read them back hands itself in here (the registry
    /// forgets it; a later hello loads it again).
    let release: @Sendable (Room) async -> Void
    /// A room whose lease is gone hands itself in here: the registry closes its connections (1012,
    /// `try_again`, so the pages reconnect and reach the room's new node) and forgets it.
    var leaseLost: @Sendable (Room) async -> Void = { _ in }
}

/// The shell around one `RoomState`: it feeds the state events stamped with the clock's time and carries
/// out the directives it returns (sends, closes, records, timers, narration). One actor per room, so rooms
/// never wait for each other; the inbox keeps each room's events in the order they arrived.
///
/// The store is the truth about the room: when the outbox gives up writing its records, the room throws
/// its state away and rebuilds it from the store, as a restart would, and tells every connection where it
/// stands (`RoomState.reattach`).
public actor Room {
    public nonisolated let code: String
    /// Immutable for the room's life, so tokens are checked without a hop onto the actor.
    public nonisolated let credentials: RoomCredentials
    public nonisolated let createdAt: ServerTime
    private nonisolated let inbox: AsyncStream<RoomInput>.Continuation
    private let inputs: AsyncStream<RoomInput>

    private var state: RoomState
    private let outbox: RoomOutbox
    private let services: RoomServices
    private var clock: any ServerClock { services.clock }
    private var logger: StoryCircleLog { services.logger }
    private var metrics: ServerMetrics { services.metrics }
    private var timers: [RoomTimer.Slot: Task<Void, Never>] = [:]
    private var narration: Task<Void, Never>?
    private var generation = 0
    private var roundTrips: [ConnectionID: Int] = [:]
    /// Every connection whose hello this room handled and that has not gone, with its address.
    private var peers: [ConnectionID: String] = [:]
    /// While a rebuild reads the archive: the inputs that arrived meanwhile, handled after it, in order.
    private var heldDuringRebuild: [RoomInput]?
    private var archiveRead: Task<Void, Never>?
    public private(set) var finishedAt: ServerTime?

    /// The most round trip a client may claim (the core credits at most `answerGraceMs` of it anyway).
    static let maximumReportedRoundTripMs = 10_000

    /// The lease the room's records are written under, when the store has leases.
    public nonisolated let lease: RoomLease?

    init(state: RoomState, createdAt: ServerTime, finishedAt: ServerTime? = nil, lease: RoomLease? = nil, services: RoomServices) {
        self.lease = lease
        self.code = state.code
        self.credentials = state.credentials
        self.createdAt = createdAt
        self.state = state
        self.services = services
        let (inputs, inbox) = AsyncStream.makeStream(of: RoomInput.self)
        self.inputs = inputs
        self.inbox = inbox
        self.outbox = RoomOutbox(
            code: state.code, transport: services.transport, store: services.store, clock: services.clock,
            retryLimitMs: services.storageRetryMs, metrics: services.metrics, logger: services.logger, storage: services.storage,
            lease: lease, onGiveUp: { failure in inbox.yield(.storageGaveUp(failure)) }, onLeaseLost: { inbox.yield(.leaseLost) }
        )
        if state.phase == .finished { self.finishedAt = finishedAt ?? createdAt }
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
        stopTasks()
        archiveRead?.cancel()
        inbox.finish()
    }

    /// Waits until everything the room decided is stored (`true`) or never will be (`false`): a room handed
    /// to another node lets its acknowledgements go out before its connections are closed.
    func waitUntilStored() async -> Bool {
        await outbox.waitUntilDurable()
    }

    private func stopTasks() {
        generation += 1
        timers.values.forEach { $0.cancel() }
        timers = [:]
        narration?.cancel()
        narration = nil
    }

    // MARK: - Requests from the HTTP API

    /// Carries out a teacher's command and answers once what it changed is stored; if it cannot be, the
    /// command did not happen (the room rebuilds itself without it) and this throws `storage_unavailable`.
    public func perform(_ command: TeacherCommand) async throws(RoomError) -> RoomReport {
        carryOut(try state.perform(command, at: clock.now()))
        guard await outbox.waitUntilDurable() else {
            let reason = services.store.health.reason.map { " (\($0))" } ?? ""
            throw RoomError(.storageUnavailable, "This could not be saved\(reason), so it did not happen. Try again once storage works.")
        }
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
        if heldDuringRebuild != nil {
            guard case .archiveRead = input else {
                heldDuringRebuild?.append(input)
                return
            }
        }
        let now = clock.now()
        switch input {
        case .hello(let connection, let hello, let peer):
            peers[connection] = peer
            carryOut(state.handle(.hello(connection, hello, at: now)))
        case .message(let connection, let bytes):
            switch ClientMessage.decode(bytes) {
            case .failure(let error):
                metrics.errorSent(error.code)
                outbox.sendImmediately(OutboundFrame(ServerMessage.error(error).encoded(), priority: .reply), to: [connection.rawValue])
            case .success(.ping(let id, let clientTime, let roundTrip)):
                if let roundTrip { roundTrips[connection] = min(max(roundTrip, 0), Self.maximumReportedRoundTripMs) }
                let pong = ServerMessage.pong(Pong(id: id, clientTime: clientTime, serverTime: clock.now()))
                outbox.sendImmediately(OutboundFrame(pong.encoded(), priority: .reply), to: [connection.rawValue])
            case .success(let message):
                carryOut(state.handle(.message(connection, message, at: now, roundTripMs: roundTrips[connection] ?? 0)))
            }
        case .disconnected(let connection):
            roundTrips[connection] = nil
            peers[connection] = nil
            carryOut(state.handle(.disconnected(connection, at: now)))
        case .narration(let update, let from):
            guard from == generation else { return }
            carryOut(state.handle(.narration(update, at: now)))
        case .timer(let timer, let from):
            guard from == generation else { return }
            carryOut(state.handle(.timer(timer, at: now)))
        case .storage(let problem):
            // The banner says nothing about the room's state, and must not wait behind the very records
            // that cannot be stored: it goes out at once.
            for case .send(let message, let recipients) in state.handle(.storage(problem: problem, at: now)) {
                outbox.sendImmediately(OutboundFrame(message.encoded()), to: recipients.map(\.rawValue))
            }
        case .storageGaveUp(let failure):
            readArchive(after: failure)
        case .archiveRead(let read, let failure):
            let held = heldDuringRebuild ?? []
            heldDuringRebuild = nil
            archiveRead = nil
            rebuild(from: read, after: failure)
            held.forEach(process)
        case .leaseLost:
            stopTasks()
            Task { [services] in await services.leaseLost(self) }
        }
    }

    /// The outbox gave up: the room stops its timers and narration and reads what the store holds, off the
    /// actor (the store's own threads do the reading); what arrives meanwhile waits, in order, for the
    /// rebuild (`archiveRead`).
    private func readArchive(after failure: StoreFailure) {
        guard heldDuringRebuild == nil else { return }
        stopTasks()
        heldDuringRebuild = []
        archiveRead = Task { [services, code, inbox] in
            let read: Result<RoomArchive?, StoreFailure>
            do {
                read = .success(try await services.store.archive(room: code))
            } catch {
                read = .failure(StoreFailure.from(error, record: "archive"))
            }
            inbox.yield(.archiveRead(read, after: failure))
        }
    }

    /// Throws away what is in memory and takes the store's truth, as a restart would, then tells every
    /// connection where it stands. If the store cannot even be read, the room cannot go on: it hands itself
    /// in to the registry, which closes its connections (1013, try again later).
    private func rebuild(from read: Result<RoomArchive?, StoreFailure>, after failure: StoreFailure) {
        let now = clock.now()
        let connections = Array(peers.keys)
        stopTasks()
        let archive: RoomArchive?
        switch read {
        case .success(let stored):
            archive = stored
        case .failure(let error):
            logger.error("Room cannot be read back from storage", ["room.code": code, "error": error.reason])
            archive = nil
        }
        guard let archive else {
            // The registry closes every connection bound to this room (1013) as it forgets it.
            Task { [services] in await services.release(self) }
            return
        }
        let previous = state
        var (rebuilt, startUp) = RoomState.restore(archive, timing: previous.timing, at: now)
        let told = rebuilt.reattach(connections, from: previous, at: now)
        state = rebuilt
        finishedAt = rebuilt.phase == .finished ? (finishedAt ?? now) : nil
        outbox.reset()
        metrics.roomRebuilt()
        logger.notice("Room rebuilt from storage", ["room.code": code, "room.phase": rebuilt.phase.name.rawValue, "record": failure.record])
        carryOut(told + startUp)
    }

    private func carryOut(_ directives: [RoomDirective]) {
        // Consecutive sends (a reveal's or a podium's one message per child) go to the outbox as one batch:
        // one lock and at most one wake-up of the transport instead of one per child.
        var sends: [(OutboundFrame, [UInt64])] = []
        var acknowledged = 0
        var encoder = ServerMessageEncoder()
        func flush() {
            guard !sends.isEmpty else { return }
            outbox.send(sends, answersAcknowledged: acknowledged)
            sends = []
            acknowledged = 0
        }
        for directive in directives {
            if case .send(let message, let recipients) = directive {
                account(for: message)
                if case .answerAck = message { acknowledged += recipients.count }
                sends.append((OutboundFrame(encoder.encode(message), priority: Self.priority(of: message)), recipients.map(\.rawValue)))
                continue
            }
            flush()
            switch directive {
            case .send:
                break
            case .close(let connection, let reason):
                outbox.close(connection.rawValue, status: reason.status, reason: reason.reason)
            case .persist(let record):
                outbox.persist(record)
            case .schedule(let timer, let at):
                schedule(timer, at: at)
            case .prepareNarration(let request):
                prepareNarration(request)
            case .failedToken(let connection):
                if let peer = peers[connection] { _ = services.failedHellos?.allow(peer, at: clock.now()) }
            }
        }
        flush()
        if state.phase == .finished, finishedAt == nil {
            finishedAt = clock.now()
            narration?.cancel()
            logger.info("Room finished", ["room.code": code])
        }
    }

    /// A reply to what one client just sent goes ahead of news for many (`OutboundFrame.Priority`): a
    /// child's answer is acknowledged while another room's reveal is still being written.
    static func priority(of message: ServerMessage) -> OutboundFrame.Priority {
        switch message {
        case .welcome, .answerAck, .error, .pong: .reply
        default: .normal
        }
    }

    private func account(for message: ServerMessage) {
        guard case .error(let error) = message else { return }
        metrics.errorSent(error.code)
    }

    private func schedule(_ timer: RoomTimer, at deadline: ServerTime) {
        timers[timer.slot]?.cancel()
        timers[timer.slot] = Task { [clock, inbox, generation] in
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            inbox.yield(.timer(timer, generation: generation))
        }
    }

    static func routed(_ path: String, room: String) -> String {
        path.contains("?") ? path : "\(path)?room=\(room)"
    }

    private func prepareNarration(_ request: NarrationRequest) {
        narration?.cancel()
        let code = self.code
        narration = Task { [services, inbox, generation] in
            do {
                var plan = try await services.narrator.prepare(request) { ready, total in
                    inbox.yield(.narration(.progress(preparation: request.preparation, ready: ready, total: total), generation: generation))
                }
                // Behind a proxy that routes by room, the room in the audio's URL brings the request to this
                // node, whose cache holds the clips it just prepared (audio is per node).
                plan.sentences = plan.sentences.map { var sentence = $0; sentence.audio = sentence.audio.map { Self.routed($0, room: code) }; return sentence }
                plan.questionAudio = plan.questionAudio?.map { Self.routed($0, room: code) }
                services.metrics.narrationPrepared(success: true)
                inbox.yield(.narration(.prepared(preparation: request.preparation, plan), generation: generation))
            } catch is CancellationError {
                return
            } catch {
                services.metrics.narrationPrepared(success: false)
                services.logger.warning("Narration could not be prepared", ["room.code": code, "error": String(describing: error)])
                let message = (error as? any FriendlyError)?.friendlyMessage
                    ?? "Pip could not prepare the story. Your teacher can try again."
                inbox.yield(.narration(.failed(preparation: request.preparation, message: message), generation: generation))
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
