/// One room's whole state, as a value: the pure core of StoryCircle.
///
/// Every mutating call takes an event with the server time it happened at and returns the directives the
/// shell must carry out, in order (send, close, persist, schedule, prepare narration). Nothing here reads a
/// clock, touches a socket or a file, or spawns work, so every rule of a room is tested by feeding events
/// and reading directives. The `Room` actor in `StoryCircleServer` is the shell that performs them.
public struct RoomState: Sendable {
    typealias Player = PlayerRoster.Player
    typealias Member = Audience.Member

    public let code: RoomCode
    public let story: Story
    public let timing: RoomTiming
    public internal(set) var settings: RoomSettings
    public internal(set) var phase: RoomPhase = .lobby
    public internal(set) var isLocked = false
    /// Hashes only: the tokens themselves are never kept.
    public let credentials: RoomCredentials

    // The machines the room is composed of, each keeping its own rules (Room/Machines/): the room keeps
    // the phase and decides, in order, what each of them is told.
    /// Everyone who joined, and who may use which name and token.
    var roster: PlayerRoster
    /// The answers, the count of who has answered, the round trips.
    var book: AnswerBook
    /// Who each identified connection is.
    var audience = Audience()
    /// The class children pick their name from, and who is picking.
    var picking: ClassPicking
    /// The narration as far as it is synthesised.
    var narration = NarrationProgress()
    /// What the dashboards still need.
    var screens = ScreenRefresh()

    /// Moves on with the phase: a timer scheduled in an earlier epoch finds the room elsewhere and does nothing.
    var epoch = 0
    /// Why the server cannot store results now, while it cannot: teachers are told, on arrival too.
    public internal(set) var storeProblem: String?
    /// When the room finished (as stored, for a restored room): finished rooms are let go some time after.
    public internal(set) var finishedAt: ServerTime?

    /// The most round trip a client may claim (at most `answerGraceMs` of it is credited anyway).
    public static let maximumReportedRoundTripMs = AnswerBook.maximumRoundTripMs

    public init(
        code: RoomCode, story: Story, settings: RoomSettings = .init(), credentials: RoomCredentials, timing: RoomTiming = .init(),
        lookalikes: any ConfusableSkeleton, classRoster: ClassRoster? = nil
    ) {
        self.code = code
        self.story = story
        self.settings = settings
        self.credentials = credentials
        self.timing = timing
        roster = PlayerRoster(lookalikes: lookalikes)
        book = AnswerBook(questionCount: story.quiz.questions.count)
        picking = ClassPicking(roster: classRoster)
    }

    /// Applies `event` and returns what the shell must do about it.
    public mutating func handle(_ event: RoomEvent) -> [RoomDirective] {
        let before = commandsKey
        var directives: [RoomDirective] = switch event {
        case .hello(let connection, let hello, let at):
            greet(connection, hello, at: at)
        case .message(let connection, let message, let at):
            receive(message, from: connection, at: at)
        case .unreadable(let connection, let error, _):
            [.sendAtOnce(.error(error), to: [connection])]
        case .disconnected(let connection, let at):
            disconnect(connection, at: at)
        case .narration(let update, let at):
            narrationUpdate(update, at: at)
        case .timer(let timer, let at):
            timerFired(timer, at: at)
        case .storeHealth(let problem, _):
            storeHealthChanged(problem)
        case .classChanged(let roster, _):
            followClass(roster)
        }
        tellTeachersIfCommandsChanged(since: before, in: &directives)
        return directives
    }

    // MARK: - Reading the state

    /// How nicknames are told apart (`Nickname.matchingKeys`): ICU's TR39 data in the server.
    public var lookalikes: any ConfusableSkeleton { roster.lookalikes }

    /// The class the room was started for: children pick their name from it. nil: they type one.
    public var classRoster: ClassRoster? { picking.roster }

    public var playerCount: Int { roster.active }

    public var connectedPlayerCount: Int { roster.connected }

    public var connectionCount: Int { audience.count }

    /// Answers accepted for the question now open (0 when none is).
    public var answersToCurrentQuestion: Int {
        if case .question(let run) = phase { return book.answers(to: run.index).count }
        return 0
    }

    /// The role of an identified connection.
    public func role(of connection: ConnectionID) -> Role? {
        audience[connection]?.role
    }

    /// The player id a connection belongs to, if it is a child.
    public func playerID(of connection: ConnectionID) -> PlayerID? {
        if case .child(let id)? = audience[connection] { return id }
        return nil
    }

    var players: [Player] { roster.players }
    var roundTrips: [ConnectionID: Int] { book.roundTrips }
    var plan: NarrationPlan? { narration.plan }

    // MARK: - Counting who is here and who has answered

    /// Counts that "has everyone answered?" and the roster read after every answer and every join, kept
    /// by the roster (`active`, `connected`) and the answer book (`answeredHere`) as players and answers
    /// change. Filtering every player on each answer would copy all 2,000 of a big room (28 % of its quiz's
    /// CPU) and be quadratic per question; the tests compare the counts with `recount()`, the definition,
    /// across random sequences of events.
    struct Tally: Sendable, Equatable {
        /// Players not kicked.
        var active = 0
        /// Of those, the connected ones.
        var connected = 0
        /// The question `answeredConnected` is about: the open one while a question is open, otherwise
        /// the last one opened.
        var question = 0
        /// Connected active players who have answered `question`.
        var answeredConnected = 0
    }

    var tally: Tally {
        Tally(active: roster.active, connected: roster.connected, question: book.countedQuestion, answeredConnected: book.answeredHere)
    }

    /// The tally by its definition, from the players and the answers: O(players), for tests.
    func recount(question: Int) -> Tally {
        let (active, connected) = roster.recount()
        return Tally(active: active, connected: connected, question: question, answeredConnected: book.answeredHere(among: playersHere, question: question))
    }

    /// The ids of the connected players in the room.
    private var playersHere: some Sequence<PlayerID> {
        roster.players.lazy.filter { $0.presence == .here }.map(\.id)
    }

    mutating func add(_ player: Player) {
        book.follow(roster.add(player))
    }

    /// Connects the player at `index` to `connection`, or disconnects them (`nil`).
    mutating func connect(_ index: Int, to connection: ConnectionID?) {
        book.follow(roster.connect(index, to: connection))
    }

    /// Records an accepted answer (or one read back from storage).
    mutating func accept(_ answer: AnswerRecord) {
        book.accept(answer, presence: roster.index(of: answer.player).map { roster.players[$0].presence } ?? .out)
    }

    /// Points the answer count at question `index` (when it opens): one pass over the players, once per
    /// question.
    mutating func countAnswers(to index: Int) {
        book.count(question: index, among: playersHere)
    }

    // MARK: - Recipients (sorted, so directives are deterministic)

    /// One `send` per role that has connections, with the message made for that role.
    func sendToAll(_ message: (Role) -> ServerMessage) -> [RoomDirective] {
        audience.byRole([.child, .dashboard, .teacher]).map { .send(message($0.role), to: $0.connections) }
    }

    func sendToAll(_ message: ServerMessage) -> [RoomDirective] {
        let connections = audience.all
        return connections.isEmpty ? [] : [.send(message, to: connections)]
    }

    func sendToScreens(_ message: ServerMessage) -> [RoomDirective] {
        let connections = audience.screens
        return connections.isEmpty ? [] : [.send(message, to: connections)]
    }

    /// One `send` per screen role (dashboards, teachers) that has connections, each with its own message.
    func sendToScreens(_ message: (Role) -> ServerMessage) -> [RoomDirective] {
        audience.byRole([.dashboard, .teacher]).map { .send(message($0.role), to: $0.connections) }
    }

    /// An error to one connection, which stays open.
    func reply(_ connection: ConnectionID, _ error: RoomError) -> [RoomDirective] {
        [.send(.error(error), to: [connection])]
    }

    /// An error to one connection, then closing it.
    func refuse(_ connection: ConnectionID, _ error: RoomError) -> [RoomDirective] {
        [.send(.error(error), to: [connection]), .close(connection, .refused(error))]
    }

    /// Refuses a hello whose token opens nothing here, and says so, for the shell's limit on guessing.
    func refuseToken(_ connection: ConnectionID, _ message: String) -> [RoomDirective] {
        [.failedToken(connection)] + refuse(connection, RoomError(.badToken, message))
    }

    // MARK: - Messages after the hello

    mutating func receive(_ message: ClientMessage, from connection: ConnectionID, at: ServerTime) -> [RoomDirective] {
        if case .ping(let id, let clientTime, let roundTrip) = message {
            // Answered whoever asks, as the page measures its clock against the server's from its first
            // moments (before its welcome, and whatever the room said to its hello). The round trip it
            // reports counts only for members.
            if let roundTrip, audience[connection] != nil { book.noteRoundTrip(roundTrip, of: connection) }
            return [.sendAtOnce(.pong(Pong(id: id, clientTime: clientTime, serverTime: at)), to: [connection])]
        }
        if picking.isPicking(connection) {
            return reply(connection, RoomError(.invalidCommand, "Pick your name first."))
        }
        guard let member = audience[connection] else {
            return refuse(connection, RoomError(.helloRequired, "Say who you are first: join, rejoin, watch or control."))
        }
        switch message {
        case .join, .rejoin, .watch, .control, .pick, .names:
            return reply(connection, RoomError(.alreadyIdentified, "This connection has already said who it is."))
        case .notMe:
            guard case .child(let playerID) = member else {
                return reply(connection, RoomError(.wrongRole, "Only a child who picked a name can give it back."))
            }
            return giveBack(playerID, from: connection, at: at)
        case .ping:
            return []
        case .answer(let question, let option):
            guard case .child(let playerID) = member else {
                return reply(connection, RoomError(.wrongRole, "Only children answer questions."))
            }
            return answer(question: question, option: option, from: playerID, connection: connection, at: at, roundTripMs: book.roundTrip(of: connection))
        case .command(let command):
            guard member == .teacher else {
                return reply(connection, RoomError(.wrongRole, "Only the teacher can control the room."))
            }
            do {
                return try perform(command, at: at)
            } catch {
                return reply(connection, error)
            }
        }
    }

    // MARK: - Storage

    mutating func storeHealthChanged(_ problem: String?) -> [RoomDirective] {
        guard problem != storeProblem else { return [] }
        storeProblem = problem
        let teachers = audience.teachers
        guard !teachers.isEmpty else { return [] }
        // "Failing" must not wait behind the very records that cannot be stored: it goes out at once.
        // "Works again" goes in order, behind what this room still holds, so it can never be overtaken by
        // a "failing" banner held since a teacher arrived, and it is true for this room when it arrives.
        return problem == nil ? [.send(.storage(storeHealthStatus), to: teachers)] : [.sendAtOnce(.storage(storeHealthStatus), to: teachers)]
    }

    var storeHealthStatus: StoreHealthStatus {
        storeProblem.map(StoreHealthStatus.failing) ?? StoreHealthStatus(ok: true)
    }

    // MARK: - Timers

    mutating func timerFired(_ timer: RoomTimer, at: ServerTime) -> [RoomDirective] {
        switch timer {
        case .flushScreens:
            return flushScreens()
        case .narration(let sentence, let timerEpoch):
            guard timerEpoch == epoch else { return [] }
            return narrationBoundary(sentence: sentence, at: at)
        case .deadline(let question, let timerEpoch):
            guard timerEpoch == epoch, case .question(let run) = phase, run.index == question, run.pausedAt == nil else { return [] }
            return reveal(at: at)
        case .reconnectGrace(let question, let timerEpoch):
            guard timerEpoch == epoch, case .question(let run) = phase, run.index == question else { return [] }
            return revealIfEveryoneAnswered(at: at)
        }
    }

    /// Notes that dashboards need an update, scheduling one coalesced flush if none is pending.
    mutating func markScreensDirty(at: ServerTime) -> [RoomDirective] {
        screens.markDirty() ? [.schedule(.flushScreens, at: at + timing.screenFlushMs)] : []
    }

    mutating func flushScreens() -> [RoomDirective] {
        guard screens.flush() else { return [] }
        if phase == .lobby {
            return sendToScreens(.lobby(lobby()))
        }
        let progress = answerProgress()
        // Ranked once, however many kinds of screen get their own copy.
        let ranked = rankedPlayers()
        return sendToScreens { role in
            .scoreboard(ScoreboardUpdate(entries: self.board(includeResults: self.showsResults(to: role), ranked: ranked), answers: progress))
        }
    }
}
