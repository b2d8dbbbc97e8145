import Locking
import StoryCircleCore
import TransportCore

/// The shell around one `RoomState`: it feeds the state events stamped with the clock's time and carries
/// out the directives it returns (sends, closes, records, timers, narration). One actor per room; the inbox
/// keeps each room's events in the order they arrived.
///
/// In a server every room runs on the transport's loop (`RoomServices.executor`), where its frames arrive
/// and its timers fire: an event costs no hand-off between threads. No room waits for another: a room's
/// work is its state's, and anything that can be slow (the store, synthesis, reading itself back) is
/// handed to threads of its own.
///
/// The store is the truth about the room: when the outbox gives up writing its records, the room throws
/// its state away and rebuilds it from the store, as a restart would, and tells every connection where it
/// stands (`RoomState.reattach`).
///
/// Every task the room starts (timers, narration, reading itself back) is its own: `shutDown` cancels them
/// and waits for them.
public actor Room {
    public nonisolated let code: String
    /// Immutable for the room's life, so tokens are checked without a hop onto the actor.
    public nonisolated let credentials: RoomCredentials
    public nonisolated let createdAt: ServerTime
    private nonisolated let inbox: RoomInbox
    /// What arrived before `run` carried out the room's first directives, handled right after them.
    private var early: [RoomInput] = []
    private var running = false
    /// Set by `shutDown`: nothing that arrives after is handled.
    private var ended = false
    /// `run`'s caller, waiting for `shutDown`.
    private var whenEnded: CheckedContinuation<Void, Never>?

    private var state: RoomState
    private let outbox: RoomOutbox
    private let services: RoomServices
    private var clock: any ServerClock { services.clock }
    private var logger: StoryCircleLog { services.logger }
    private var metrics: ServerMetrics { services.metrics }
    private var timers: [RoomTimer.Slot: any ServerTimer] = [:]
    private var narration: Task<Void, Never>?
    private var readingBack: Task<Void, Never>?
    /// While the room reads itself back from the store, what arrives waits here, in order.
    private var deferred: [RoomInput]?
    private var generation = 0
    /// Every connection whose hello this room handled and that has not gone, with its address.
    private var peers: [ConnectionID: String] = [:]

    /// The lease the room's records are written under, when the store has leases.
    public nonisolated let lease: RoomLease?
    /// Its owner as it was stored when the room was made or loaded (nil: the admin token's): while that
    /// account is disabled, the teacher token controls nothing (`DisabledOwners`).
    public nonisolated let owner: Owner?

    init(state: RoomState, createdAt: ServerTime, lease: RoomLease? = nil, owner: Owner? = nil, services: RoomServices) {
        self.lease = lease
        self.owner = owner
        self.code = state.code.rawValue
        self.credentials = state.credentials
        self.createdAt = createdAt
        self.state = state
        self.services = services
        let inbox = RoomInbox(executor: services.executor)
        self.inbox = inbox
        self.outbox = RoomOutbox(
            code: state.code.rawValue, services: services, lease: lease,
            onGiveUp: { failure in inbox.yield(.storageGaveUp(failure)) }, onLeaseLost: { inbox.yield(.leaseLost) }
        )
        inbox.attach(self)
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        inbox.executor.asUnownedSerialExecutor()
    }

    /// Hands `input` to the room; callable from any thread, never blocks.
    public nonisolated func submit(_ input: RoomInput) {
        inbox.yield(input)
    }

    /// Carries out `initial` (a restored room's start-up), then what arrived meanwhile, and from then on
    /// handles each input as it arrives; returns once the room is shut down.
    func run(initial: [RoomDirective] = []) async {
        // Shut down before it ever ran (let go as soon as it was made): it has nothing to start.
        guard !ended else { return }
        carryOut(initial)
        running = true
        let arrived = early
        early = []
        for input in arrived where !ended { process(input) }
        guard !ended else { return }
        await withCheckedContinuation { whenEnded = $0 }
    }

    /// An input from the inbox, on the room's executor.
    func receive(_ input: RoomInput) {
        guard !ended else { return }
        guard running else {
            early.append(input)
            return
        }
        process(input)
    }

    /// Stops timers, narration and any read-back, waits for them, and ends the inbox; connections are
    /// closed by whoever let the room go. The outbox carries on with what the room already decided (a
    /// room handed over waits for it: `waitUntilStored`).
    func shutDown() async {
        let tasks = stopTasks()
        ended = true
        whenEnded?.resume()
        whenEnded = nil
        for task in tasks { await task.value }
    }

    /// The server is stopping: the outbox drops what it still holds and stops retrying.
    func stopOutbox() {
        outbox.stop()
    }

    /// Whether `token` would let a child back in (`RoomState.recognizes`): asked by the router before its
    /// limits on guessing, which a child coming back must never meet.
    func recognizes(resumeToken token: String) -> Bool {
        state.recognizes(resumeToken: token)
    }

    /// Set, under the bindings' lock, once the room has let its connections go: nothing binds to it after.
    nonisolated let retired = Locked(false)

    /// Waits until everything the room decided is stored (`true`) or never will be (`false`): a room handed
    /// to another node lets its acknowledgements go out before its connections are closed.
    func waitUntilStored() async -> Bool {
        await outbox.waitUntilDurable()
    }

    /// Cancels every timer and task of the room's current generation and returns the tasks, to be awaited.
    @discardableResult
    private func stopTasks() -> [Task<Void, Never>] {
        generation += 1
        timers.values.forEach { $0.cancel() }
        var tasks: [Task<Void, Never>] = []
        if let narration { tasks.append(narration) }
        if let readingBack { tasks.append(readingBack) }
        tasks.forEach { $0.cancel() }
        timers = [:]
        narration = nil
        readingBack = nil
        return tasks
    }

    // MARK: - Requests from the HTTP API

    /// Carries out a teacher's command and answers once what it changed is stored; if it cannot be, the
    /// command did not happen (the room rebuilds itself without it) and this throws `storage_unavailable`.
    public func perform(_ command: TeacherCommand) async throws(RoomError) -> RoomReport {
        // While the room reads itself back, its state is about to be replaced: nothing can happen to it.
        guard deferred == nil else { throw Self.unsaved(services.store) }
        if let refusal = services.narrator.refusal(for: command) { throw refusal }
        carryOut(try state.perform(command, at: clock.now()))
        // The answer says what the command did: what happens while its records are stored (a narration that
        // was ready at once, a child's answer) is the room's next news, not this command's.
        var done = report()
        guard await outbox.waitUntilDurable() else { throw Self.unsaved(services.store) }
        done.pendingRecords = outbox.pendingRecords
        return done
    }

    private static func unsaved(_ store: any RoomStore) -> RoomError {
        let reason = store.health.reason.map { " (\($0))" } ?? ""
        return RoomError(.storageUnavailable, "This could not be saved\(reason), so it did not happen. Try again once storage works.")
    }

    public func report() -> RoomReport {
        RoomReport(state: state, createdAt: createdAt, pendingRecords: outbox.pendingRecords)
    }

    public func results() -> RoomResults {
        state.results()
    }

    public var phase: RoomPhase { state.phase }

    /// Whether the room's owner is disabled, so its teacher token controls nothing.
    public nonisolated var controlsStopped: Bool { services.disabledOwners.stops(owner) }

    public var connectionCount: Int { state.connectionCount }

    /// The class the room was started for, as it read it when created or loaded.
    package var classRoster: ClassRoster? { state.classRoster }

    public var finishedAt: ServerTime? {
        state.phase == .finished ? (state.finishedAt ?? createdAt) : nil
    }

    // MARK: - Events

    private func process(_ input: RoomInput) {
        if deferred != nil {
            if case .readBack(let archive, let failure) = input {
                rebuild(from: archive, after: failure)
            } else {
                deferred?.append(input)
            }
            return
        }
        let now = clock.now()
        switch input {
        case .hello(let connection, let hello, let peer):
            peers[connection] = peer
            carryOut(state.handle(.hello(connection, hello, at: now)))
        case .message(let connection, let bytes):
            switch ClientMessage.decode(bytes) {
            case .failure(let error): carryOut(state.handle(.unreadable(connection, error, at: now)))
            case .success(.pick(let room, let member)) where room == code:
                // A name-picker's pick says who the connection is, like a hello: it gets a resume token.
                carryOut(state.handle(.hello(connection, .pick(member: member, resumeToken: Tokens.resume(room: code)), at: now)))
            case .success(.join(let room, let nickname)) where room == code && state.isPicker(connection):
                carryOut(state.handle(.hello(connection, .join(nickname: nickname, resumeToken: Tokens.resume(room: code)), at: now)))
            case .success(let message):
                // A disabled owner's teacher is refused; a child's command is refused as it always is.
                if case .command = message, controlsStopped, let refusal = state.refusedCommand(from: connection, DisabledOwners.refusal(room: code)) {
                    carryOut(refusal)
                } else if case .command(let command) = message, let error = services.narrator.refusal(for: command),
                   let refusal = state.refusedCommand(from: connection, error) {
                    carryOut(refusal)
                } else {
                    carryOut(state.handle(.message(connection, message, at: now)))
                }
            }
        case .disconnected(let connection):
            peers[connection] = nil
            carryOut(state.handle(.disconnected(connection, at: now)))
        case .narration(let update, let from):
            guard from == generation else { return }
            carryOut(state.handle(.narration(update, at: now)))
        case .timer(let timer, let from):
            guard from == generation else { return }
            carryOut(state.handle(.timer(timer, at: now)))
        case .storeHealth(let problem):
            carryOut(state.handle(.storeHealth(problem: problem, at: now)))
        case .storageGaveUp(let failure):
            readBack(after: failure)
        case .readBack:
            break
        case .leaseLost:
            stopTasks()
            services.notify(.leaseLost(self))
        case .classChanged(let roster):
            carryOut(state.handle(.classChanged(roster, at: now)))
        }
    }

    /// The outbox gave up: what is in memory is thrown away for the store's truth, as a restart would. The
    /// read is the store's work, on its threads; what arrives meanwhile waits, and is handled, in order, by
    /// the rebuilt room.
    private func readBack(after failure: StoreFailure) {
        stopTasks()
        deferred = []
        let (store, code, logger, inbox) = (services.store, code, logger, inbox)
        readingBack = Task {
            let archive: RoomArchive?
            do {
                archive = try await store.archive(room: code)
            } catch {
                logger.error("Room cannot be read back from storage", ["room.code": code, "error": StoreFailure.from(error, record: "archive").reason])
                archive = nil
            }
            inbox.yield(.readBack(archive, after: failure))
        }
    }

    /// Takes the store's truth and tells every connection where it stands. If the store could not even be
    /// read, the room cannot go on: it hands itself in, and its connections are closed (1013).
    private func rebuild(from archive: RoomArchive?, after failure: StoreFailure) {
        readingBack = nil
        let waiting = deferred ?? []
        deferred = nil
        guard let archive else {
            services.notify(.unreadable(self))
            return
        }
        let now = clock.now()
        let previous = state
        var (rebuilt, startUp) = RoomState.restore(archive, timing: previous.timing, lookalikes: previous.lookalikes, classRoster: previous.classRoster, at: now)
        let told = rebuilt.reattach(Array(peers.keys), from: previous, at: now)
        state = rebuilt
        outbox.reset()
        metrics.roomRebuilt()
        logger.notice("Room rebuilt from storage", ["room.code": code, "room.phase": rebuilt.phase.name.rawValue, "record": failure.record])
        carryOut(told + startUp)
        for input in waiting { process(input) }
    }

    /// The room's class was saved: a live room offers its names as they are now.
    func followClass(_ roster: ClassRoster) {
        process(.classChanged(roster))
    }

    /// A finished room takes what the store now holds of it (a child's data was erased there) and its class
    /// as it is now, in place: the podium and results pages on it stay open and get the room as stored. A
    /// child whose data is gone is let go as a finished room lets anyone go. `false` when the room cannot
    /// (it is not finished, is reading itself back, or has records still to store): then it must be let go.
    func reload(from archive: RoomArchive, classRoster: ClassRoster?) -> Bool {
        guard state.phase == .finished, deferred == nil, outbox.pendingRecords == 0 else { return false }
        _ = stopTasks()
        let now = clock.now()
        let previous = state
        var (reloaded, startUp) = RoomState.restore(archive, timing: previous.timing, lookalikes: previous.lookalikes, classRoster: classRoster, at: now)
        let told = reloaded.reattach(Array(peers.keys), from: previous, at: now, gone: RoomError(.roomEnded, "This room has finished."))
        state = reloaded
        logger.info("Room reloaded from storage", ["room.code": code])
        carryOut(told + startUp)
        return true
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
                sends.append((Self.frame(encoder.encode(message), for: message), recipients.map(\.rawValue)))
                continue
            }
            flush()
            switch directive {
            case .send:
                break
            case .sendAtOnce(let message, let recipients):
                account(for: message)
                outbox.sendAtOnce([(Self.frame(message.encoded(), for: message), recipients.map(\.rawValue))])
            case .close(let connection, let reason):
                outbox.close(connection.rawValue, status: reason.status, reason: reason.reason)
            case .persist(let record):
                outbox.persist(record)
            case .schedule(let timer, let at):
                schedule(timer, at: at)
            case .prepareNarration(let request):
                prepareNarration(request)
            case .readAhead(let request):
                services.narrator.readAhead(request, room: code)
            case .failedToken(let connection):
                if let peer = peers[connection] { services.failedHellos?.debit(peer, at: clock.now()) }
            case .stopNarration:
                narration?.cancel()
                narration = nil
                services.narrator.stopReadingAhead(room: code)
                logger.info("Room finished", ["room.code": code])
            }
        }
        flush()
    }

    /// Replies go in the transport's lane ahead of news (`ServerMessage.isReply`).
    static func frame(_ bytes: [UInt8], for message: ServerMessage) -> OutboundFrame {
        OutboundFrame(bytes, priority: message.isReply ? .reply : .normal)
    }

    private func account(for message: ServerMessage) {
        guard case .error(let error) = message else { return }
        metrics.errorSent(error.code)
    }

    private func schedule(_ timer: RoomTimer, at deadline: ServerTime) {
        timers[timer.slot]?.cancel()
        timers[timer.slot] = clock.schedule(at: deadline) { [inbox, generation] in
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
                // Behind a proxy that routes by room, the room in the audio's URL brings the request to this
                // node, whose cache holds the clips it just prepared (audio is per node).
                let routed: @Sendable (NarratedSentence) -> NarratedSentence = { sentence in
                    var sentence = sentence
                    sentence.audio = sentence.audio.map { Self.routed($0, room: code) }
                    return sentence
                }
                var plan = try await services.narrator.prepare(request) { step in
                    let update: NarrationUpdate = switch step {
                    case .progress(let ready, let total): .progress(preparation: request.preparation, ready: ready, total: total)
                    case .sentence(let sentence, let notice): .sentence(preparation: request.preparation, routed(sentence), notice: notice)
                    case .restarted: .restarted(preparation: request.preparation)
                    }
                    inbox.yield(.narration(update, generation: generation))
                }
                plan.sentences = plan.sentences.map(routed)
                plan.questionAudio = plan.questionAudio?.map { Self.routed($0, room: code) }
                services.metrics.narrationPrepared(success: true)
                inbox.yield(.narration(.prepared(preparation: request.preparation, plan), generation: generation))
            } catch is CancellationError {
                return
            } catch {
                services.metrics.narrationPrepared(success: false)
                services.logger.warning("Narration could not be prepared", ["room.code": code, "error": String(describing: error)])
                let problem = (error as? any FriendlyError)?.narrationProblem
                    ?? NarrationProblem(.unknown, "Pip could not prepare the story. Your teacher can try again.")
                inbox.yield(.narration(.failed(preparation: request.preparation, problem: problem), generation: generation))
            }
        }
    }
}
