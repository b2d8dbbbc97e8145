/// A player as stored: never the resume token itself, only its hash.
public struct PlayerRecord: Sendable, Equatable, Codable {
    public var id: PlayerID
    public var nickname: String
    public var tokenHash: String
    public var joinedAt: ServerTime
    /// The child of the room's class this player is (`ClassMember.id`); nil in a room without a class.
    public var member: MemberID?

    public init(id: PlayerID, nickname: String, tokenHash: String, joinedAt: ServerTime, member: MemberID? = nil) {
        self.id = id
        self.nickname = nickname
        self.tokenHash = tokenHash
        self.joinedAt = joinedAt
        self.member = member
    }
}

/// An accepted answer, with its score decided when it arrived.
public struct AnswerRecord: Sendable, Equatable, Codable {
    public var player: PlayerID
    public var question: Int
    public var option: Int
    public var receivedAt: ServerTime
    /// From the question opening to the answer, corrected for network delay and pauses.
    public var elapsedMs: Int
    public var correct: Bool
    /// Points including any streak bonus; they count once the question is revealed.
    public var points: Int

    public init(player: PlayerID, question: Int, option: Int, receivedAt: ServerTime, elapsedMs: Int, correct: Bool, points: Int) {
        self.player = player
        self.question = question
        self.option = option
        self.receivedAt = receivedAt
        self.elapsedMs = elapsedMs
        self.correct = correct
        self.points = points
    }
}

/// A change of phase. `question` names the question for `question`, `reveal` and skips.
public struct PhaseRecord: Sendable, Equatable, Codable {
    public var phase: PhaseName
    public var question: Int?
    /// The question was skipped: nobody scores on it.
    public var skipped: Bool
    public var at: ServerTime

    public init(phase: PhaseName, question: Int? = nil, skipped: Bool = false, at: ServerTime) {
        self.phase = phase
        self.question = question
        self.skipped = skipped
        self.at = at
    }
}

/// What a room asks to be kept. Together with its `RoomHeader`, the records of a room are enough to rebuild
/// it after a crash (`RoomState.restore`).
public enum RoomRecord: Sendable, Equatable {
    case playerJoined(PlayerRecord)
    case playerLeft(player: PlayerID, at: ServerTime)
    case playerKicked(player: PlayerID, at: ServerTime)
    /// Kicked, and blocked: the player's nickname and resume token stay refused (a kick as well).
    case playerBlocked(player: PlayerID, at: ServerTime)
    /// A kicked (not blocked) player let back in: the same player, with their answers and score.
    case playerReadmitted(player: PlayerID, at: ServerTime)
    /// A class child's name freed by the teacher for another device: their resume token is refused from
    /// now on, and nobody holds the name until it is picked again.
    case playerReleased(player: PlayerID, at: ServerTime)
    /// A released class child's name picked again: the same player, on a device with a new resume token.
    case playerReclaimed(player: PlayerID, tokenHash: String, at: ServerTime)
    case answer(AnswerRecord)
    case phase(PhaseRecord)
    case roomUpdated(settings: RoomSettings, locked: Bool, at: ServerTime)

    /// What kind of record this is, for logs and errors (never its contents).
    public var kind: String {
        switch self {
        case .playerJoined: "player.joined"
        case .playerLeft: "player.left"
        case .playerKicked: "player.kicked"
        case .playerBlocked: "player.blocked"
        case .playerReadmitted: "player.readmitted"
        case .playerReleased: "player.released"
        case .playerReclaimed: "player.reclaimed"
        case .answer: "answer"
        case .phase: "phase"
        case .roomUpdated: "room.updated"
        }
    }
}

/// A room as created: stored once, before its code is handed out.
public struct RoomHeader: Sendable, Equatable {
    public var code: String
    public var story: Story
    public var settings: RoomSettings
    public var credentials: RoomCredentials
    public var createdAt: ServerTime
    /// The library story the room was started from (`StoryLibrary`); nil for a story sent whole.
    public var storyID: String?
    /// The class the room was started for (`ClassBook`): children join by picking their name. nil for a
    /// room where children type one.
    public var classID: String?
    /// The teacher who started the room and their school; nil for a room started with the admin token or a
    /// room token, or stored before accounts.
    public var owner: Owner?

    public init(
        code: String, story: Story, settings: RoomSettings, credentials: RoomCredentials, createdAt: ServerTime, storyID: String? = nil,
        classID: String? = nil, owner: Owner? = nil
    ) {
        self.code = code
        self.story = story
        self.settings = settings
        self.credentials = credentials
        self.createdAt = createdAt
        self.storyID = storyID
        self.classID = classID
        self.owner = owner
    }
}

/// Everything stored about one room.
public struct RoomArchive: Sendable, Equatable {
    /// The room as created, except that its settings are the latest (stores keep one copy of them).
    public var header: RoomHeader
    public var locked: Bool
    public var players: [PlayerRecord]
    public var kicked: Set<PlayerID>
    /// Players blocked for good (each is also in `kicked`).
    public var blocked: Set<PlayerID>
    /// Class children whose name the teacher released and who have not picked it again.
    public var released: Set<PlayerID> = []
    /// The resume tokens (hashes) released names had: refused with `released`, never taken for a
    /// player again.
    public var releasedTokenHashes: Set<String> = []
    public var answers: [AnswerRecord]
    /// In the order they happened.
    public var phases: [PhaseRecord]

    public init(header: RoomHeader, locked: Bool, players: [PlayerRecord], kicked: Set<PlayerID>, blocked: Set<PlayerID> = [], answers: [AnswerRecord], phases: [PhaseRecord]) {
        self.header = header
        self.locked = locked
        self.players = players
        self.kicked = kicked
        self.blocked = blocked
        self.answers = answers
        self.phases = phases
    }

    public var lastPhase: PhaseName { phases.last?.phase ?? .lobby }

    /// The room's current settings.
    public var settings: RoomSettings { header.settings }
}

/// One line of `room list`.
public struct RoomSummary: Sendable, Equatable, Codable {
    public var code: String
    public var title: String
    public var phase: PhaseName
    public var players: Int
    public var createdAt: ServerTime
    public var owner: Owner?

    public init(code: String, title: String, phase: PhaseName, players: Int, createdAt: ServerTime, owner: Owner? = nil) {
        self.code = code
        self.title = title
        self.phase = phase
        self.players = players
        self.createdAt = createdAt
        self.owner = owner
    }
}

extension RoomArchive {
    /// A room with nothing recorded yet.
    public init(header: RoomHeader) {
        self.init(header: header, locked: false, players: [], kicked: [], answers: [], phases: [])
    }

    /// Folds one record in, as a store keeps it. Stores that keep rows instead must agree with this.
    public mutating func apply(_ record: RoomRecord) {
        switch record {
        case .playerJoined(let player): players.append(player)
        case .playerLeft: break
        case .playerKicked(let player, _): kicked.insert(player)
        case .playerBlocked(let player, _):
            kicked.insert(player)
            blocked.insert(player)
        case .playerReadmitted(let player, _):
            if !blocked.contains(player) { kicked.remove(player) }
        case .playerReleased(let player, _):
            guard let index = players.firstIndex(where: { $0.id == player }) else { break }
            released.insert(player)
            releasedTokenHashes.insert(players[index].tokenHash)
        case .playerReclaimed(let player, let tokenHash, _):
            guard let index = players.firstIndex(where: { $0.id == player }) else { break }
            released.remove(player)
            players[index].tokenHash = tokenHash
        case .answer(let answer): answers.append(answer)
        case .phase(let phase): phases.append(phase)
        case .roomUpdated(let settings, let locked, _):
            header.settings = settings
            self.locked = locked
        }
    }
}
