/// One room's whole state, as a value: the pure core of StoryCircle.
///
/// Every mutating call takes an event with the server time it happened at and returns the directives the
/// shell must carry out, in order (send, close, persist, schedule, prepare narration). Nothing here reads a
/// clock, touches a socket or a file, or spawns work, so every rule of a room is tested by feeding events
/// and reading directives. The `Room` actor in `StoryCircleServer` is the shell that performs them.
public struct RoomState: Sendable {
    struct Player: Sendable, Equatable {
        let id: String
        var nickname: String
        /// Changes only when a released class child picks their name again on a new device.
        var tokenHash: String
        let joinedAt: ServerTime
        /// The child of the room's class this player is.
        var member: String? = nil
        /// Set only through `connect(_:to:)`, which keeps `tally` in step.
        fileprivate(set) var connection: ConnectionID?
        var score = 0
        var streak = 0
        var outcomes: [Int: QuestionOutcome] = [:]
        /// Set only through `markKicked(_:)`, which keeps `tally` in step.
        fileprivate(set) var kicked = false
        /// Kicked for good: the name and the resume token stay refused in this room.
        var blocked = false
        /// Until when this player, while disconnected and without an answer to the open question, holds up
        /// the automatic reveal: a child whose Wi-Fi dropped, or whose room is moving to another node, may
        /// have a tap kept by the page to send on reconnecting.
        var graceUntil: ServerTime?
        /// The nickname's `Nickname.matchingKeys`, worked out once when the player is added.
        var nameKeys: [String] = []
        /// The nickname as the scoreboard orders ties (lowercased), worked out once when the player is added:
        /// a reveal ranks the whole class, and lowercasing is the most of a comparison.
        var sortName = ""
        /// A class child whose name was given back (the teacher's release, the child's "That's not me"):
        /// nobody holds it until it is picked again, and it counts as nobody here meanwhile. Set only
        /// through `markReleased(_:_:)`, which keeps `tally` in step.
        fileprivate(set) var released = false
    }

    enum Member: Sendable, Equatable {
        case child(playerID: String)
        case dashboard
        case teacher

        var role: Role {
            switch self {
            case .child: .child
            case .dashboard: .dashboard
            case .teacher: .teacher
            }
        }
    }

    public let code: String
    public let story: Story
    public let timing: RoomTiming
    public internal(set) var settings: RoomSettings
    public internal(set) var phase: RoomPhase = .lobby
    public internal(set) var isLocked = false
    /// Hashes only: the tokens themselves are never kept.
    public let credentials: RoomCredentials
    /// How nicknames are told apart (`Nickname.matchingKeys`): ICU's TR39 data in the server.
    public let lookalikes: any ConfusableSkeleton

    /// The class the room was started for: children pick their name from it. nil: they type one.
    public internal(set) var classRoster: ClassRoster?
    /// Connections that said `names` and have not picked yet.
    var pickers: Set<ConnectionID> = []
    /// The player each member of the class became here.
    var memberPlayers: [String: String] = [:]
    /// Resume tokens (hashes) of released names: refused as released.
    var releasedTokens: Set<String> = []

    /// Everyone who ever joined, in join order; kicked players stay (flagged) so their records stay whole.
    var players: [Player] = []
    var playerIndex: [String: Int] = [:]
    /// Who holds each name key (`Nickname.matchingKeys`) of the players not kicked.
    var nicknameOwners: [String: String] = [:]
    var tokenOwners: [String: String] = [:]
    /// What blocked players can no longer use here: their nicknames (name keys) and token hashes.
    var blockedNicknames: Set<String> = []
    var blockedTokens: Set<String> = []
    var members: [ConnectionID: Member] = [:]
    /// Each connection's round trip as its page last reported it (in its pings): an answer's speed is
    /// credited half of it.
    var roundTrips: [ConnectionID: Int] = [:]
    /// Per question, the accepted answers by player id; added to only through `accept(_:)`.
    fileprivate(set) var answers: [[String: AnswerRecord]]
    /// Who is here and who has answered, counted as it changes (see `Tally`).
    fileprivate(set) var tally = Tally()
    /// Questions revealed or skipped so far; they always form a prefix of the quiz.
    var concluded = 0
    var skipped: Set<Int> = []
    /// When each question was first asked: who counts as present for it in the results (`RoomResults`).
    var askedAt: [Int: ServerTime] = [:]
    var plan: NarrationPlan?
    /// The plan still grows: sentences arrive one by one as they are synthesised, while the first play.
    var planGrowing = false
    var preparation = 0
    var epoch = 0
    var screensDirty = false
    var screenFlushPending = false
    var nextPlayerNumber = 1
    /// Why the server cannot store results now, while it cannot: teachers are told, on arrival too.
    public internal(set) var storeProblem: String?
    /// When the room finished (as stored, for a restored room): finished rooms are let go some time after.
    public internal(set) var finishedAt: ServerTime?

    /// The most round trip a client may claim (at most `answerGraceMs` of it is credited anyway).
    public static let maximumReportedRoundTripMs = 10_000

    public init(
        code: String, story: Story, settings: RoomSettings = .init(), credentials: RoomCredentials, timing: RoomTiming = .init(),
        lookalikes: any ConfusableSkeleton, classRoster: ClassRoster? = nil
    ) {
        self.code = code
        self.classRoster = classRoster
        self.lookalikes = lookalikes
        self.story = story
        self.settings = settings
        self.credentials = credentials
        self.timing = timing
        self.answers = Array(repeating: [:], count: story.quiz.questions.count)
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

    public var playerCount: Int { tally.active }

    public var connectedPlayerCount: Int { tally.connected }

    public var connectionCount: Int { members.count }

    /// Answers accepted for the question now open (0 when none is).
    public var answersToCurrentQuestion: Int {
        if case .question(let run) = phase { return answers[run.index].count }
        return 0
    }

    /// The role of an identified connection.
    public func role(of connection: ConnectionID) -> Role? {
        members[connection]?.role
    }

    /// The player id a connection belongs to, if it is a child.
    public func playerID(of connection: ConnectionID) -> String? {
        if case .child(let id)? = members[connection] { return id }
        return nil
    }

    // MARK: - Counting who is here and who has answered

    /// Counts that "has everyone answered?" and the roster read after every answer and every join. Filtering
    /// every player on each answer would copy all 2,000 of a big room (28 % of its quiz's CPU) and be
    /// quadratic per question; so each change of a player or an answer adjusts the counts, and the tests
    /// compare them with `recount()`, the definition, across random sequences of events.
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

    /// The tally by its definition, from `players` and `answers`: O(players), for tests and for
    /// starting over on a new question.
    func recount(question: Int) -> Tally {
        var tally = Tally(question: question)
        for player in players where !player.kicked && !player.released {
            tally.active += 1
            guard player.connection != nil else { continue }
            tally.connected += 1
            if answers.indices.contains(question), answers[question][player.id] != nil { tally.answeredConnected += 1 }
        }
        return tally
    }

    /// What one player adds to the counts.
    private func contribution(of player: Player) -> (active: Int, connected: Int, answered: Int) {
        guard !player.kicked, !player.released else { return (0, 0, 0) }
        guard player.connection != nil else { return (1, 0, 0) }
        let answered = answers.indices.contains(tally.question) && answers[tally.question][player.id] != nil
        return (1, 1, answered ? 1 : 0)
    }

    private mutating func count(_ contribution: (active: Int, connected: Int, answered: Int), sign: Int) {
        tally.active += sign * contribution.active
        tally.connected += sign * contribution.connected
        tally.answeredConnected += sign * contribution.answered
    }

    mutating func add(_ player: Player) {
        var player = player
        player.nameKeys = Nickname.matchingKeys(player.nickname, using: lookalikes)
        player.sortName = Scoreboard.sortName(player.nickname)
        playerIndex[player.id] = players.count
        if let member = player.member { memberPlayers[member] = player.id }
        players.append(player)
        count(contribution(of: player), sign: 1)
        if !player.kicked, !player.released { register(player) }
        if player.blocked { remember(blocked: player) }
    }

    /// Makes the player's names and token theirs (a player who joined, came back or was let back in).
    mutating func register(_ player: Player) {
        for key in player.nameKeys { nicknameOwners[key] = player.id }
        tokenOwners[player.tokenHash] = player.id
    }

    /// Frees the player's names and token (a player removed).
    mutating func unregister(_ player: Player) {
        for key in player.nameKeys where nicknameOwners[key] == player.id { nicknameOwners[key] = nil }
        if tokenOwners[player.tokenHash] == player.id { tokenOwners[player.tokenHash] = nil }
    }

    mutating func remember(blocked player: Player) {
        blockedNicknames.formUnion(player.nameKeys)
        blockedTokens.insert(player.tokenHash)
    }

    /// Connects the player at `index` to `connection`, or disconnects them (`nil`).
    mutating func connect(_ index: Int, to connection: ConnectionID?) {
        count(contribution(of: players[index]), sign: -1)
        players[index].connection = connection
        count(contribution(of: players[index]), sign: 1)
    }

    mutating func markKicked(_ index: Int, _ kicked: Bool = true) {
        count(contribution(of: players[index]), sign: -1)
        players[index].kicked = kicked
        count(contribution(of: players[index]), sign: 1)
    }

    mutating func markReleased(_ index: Int, _ released: Bool = true) {
        count(contribution(of: players[index]), sign: -1)
        players[index].released = released
        count(contribution(of: players[index]), sign: 1)
    }

    /// Records an accepted answer (or one read back from storage).
    mutating func accept(_ answer: AnswerRecord) {
        guard answers.indices.contains(answer.question) else { return }
        let index = playerIndex[answer.player]
        if let index { count(contribution(of: players[index]), sign: -1) }
        answers[answer.question][answer.player] = answer
        if let index { count(contribution(of: players[index]), sign: 1) }
    }

    /// Points the answer count at question `index` (when it opens): one pass over the players, once per
    /// question, since answers to it may already be stored (a question reopened after a restart).
    mutating func countAnswers(to index: Int) {
        tally = recount(question: index)
    }

    // MARK: - Recipients (sorted, so directives are deterministic)

    var screenConnections: [ConnectionID] {
        members.compactMap { if case .child = $0.value { nil } else { $0.key } }.sorted()
    }

    var allConnections: [ConnectionID] { members.keys.sorted() }

    var teacherConnections: [ConnectionID] {
        members.compactMap { $0.value == .teacher ? $0.key : nil }.sorted()
    }

    /// One `send` per role that has connections, with the message made for that role.
    func sendToAll(_ message: (Role) -> ServerMessage) -> [RoomDirective] {
        var byRole: [Role: [ConnectionID]] = [:]
        for (connection, member) in members { byRole[member.role, default: []].append(connection) }
        return [Role.child, .dashboard, .teacher].compactMap { role in
            guard let connections = byRole[role] else { return nil }
            return .send(message(role), to: connections.sorted())
        }
    }

    func sendToAll(_ message: ServerMessage) -> [RoomDirective] {
        let connections = allConnections
        return connections.isEmpty ? [] : [.send(message, to: connections)]
    }

    func sendToScreens(_ message: ServerMessage) -> [RoomDirective] {
        let connections = screenConnections
        return connections.isEmpty ? [] : [.send(message, to: connections)]
    }

    /// One `send` per screen role (dashboards, teachers) that has connections, each with its own message.
    func sendToScreens(_ message: (Role) -> ServerMessage) -> [RoomDirective] {
        var byRole: [Role: [ConnectionID]] = [:]
        for (connection, member) in members where member.role != .child { byRole[member.role, default: []].append(connection) }
        return [Role.dashboard, .teacher].compactMap { role in
            guard let connections = byRole[role] else { return nil }
            return .send(message(role), to: connections.sorted())
        }
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
            if let roundTrip, members[connection] != nil { roundTrips[connection] = min(max(roundTrip, 0), Self.maximumReportedRoundTripMs) }
            return [.sendAtOnce(.pong(Pong(id: id, clientTime: clientTime, serverTime: at)), to: [connection])]
        }
        if pickers.contains(connection) {
            return reply(connection, RoomError(.invalidCommand, "Pick your name first."))
        }
        guard let member = members[connection] else {
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
            return answer(question: question, option: option, from: playerID, connection: connection, at: at, roundTripMs: roundTrips[connection] ?? 0)
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
        let teachers = teacherConnections
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
        screensDirty = true
        guard !screenFlushPending else { return [] }
        screenFlushPending = true
        return [.schedule(.flushScreens, at: at + timing.screenFlushMs)]
    }

    mutating func flushScreens() -> [RoomDirective] {
        screenFlushPending = false
        guard screensDirty else { return [] }
        screensDirty = false
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
