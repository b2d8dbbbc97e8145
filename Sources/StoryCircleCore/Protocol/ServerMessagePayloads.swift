/// The payloads of `ServerMessage`. Each is the JSON object of its message minus the `type` field.
/// `docs/protocol.md` shows an example of each.

/// Who a connection is to its room.
public enum Role: String, Sendable, Codable {
    case child, dashboard, teacher
}

/// The name a room's phase has on the wire.
public enum PhaseName: String, Sendable, Codable {
    case lobby, preparing, error, narrating, question, reveal, finished
}

public struct PlayerInfo: Sendable, Equatable, Codable {
    public var id: String
    public var nickname: String
}

/// The answer to a hello: who you are in the room, and everything needed to show the room as it is now.
public struct Welcome: Sendable, Equatable, Codable {
    public var role: Role
    public var player: PlayerInfo?
    /// The resume token, sent once, on `join`: the browser keeps it to `rejoin` after a refresh.
    public var token: String?
    public var serverTime: ServerTime
    public var room: RoomSnapshot
    /// For the teacher's control connection only: the room's read-only projector token, so the teacher
    /// page can open the projector without the link printed at creation. Never sent to a child or a
    /// dashboard.
    public var dashboardToken: String?
}

public struct Pong: Sendable, Equatable, Codable {
    public var id: Int
    public var clientTime: Double?
    public var serverTime: ServerTime

    public init(id: Int, clientTime: Double?, serverTime: ServerTime) {
        self.id = id
        self.clientTime = clientTime
        self.serverTime = serverTime
    }
}

public struct LobbyPlayer: Sendable, Equatable, Codable {
    public var id: String
    public var nickname: String
    public var connected: Bool
}

public struct Lobby: Sendable, Equatable, Codable {
    public var players: [LobbyPlayer]
    public var count: Int
}

public struct Preparing: Sendable, Equatable, Codable {
    public var ready: Int
    public var total: Int
}

/// The narration as this screen should follow it: sentence `i` starts at `startAt` plus the durations and
/// gaps of the sentences before it, until a `progress` message moves the schedule.
public struct NarrationPlanMessage: Sendable, Equatable, Codable {
    public var startAt: ServerTime
    public var gapMs: Int
    public var mode: NarrationMode
    /// Whether this screen plays the audio (the sentences carry audio URLs only when it does).
    public var playsAudio: Bool
    public var sentences: [NarratedSentence]
    /// Teachers only: how the story is being read, when they should know (`NarrationNotice`).
    public var notice: NarrationNotice?
    /// The picture of each sentence that has one (a picture story), shown while it is read.
    public var pictures: [SentencePictureView]? = nil
    /// While the plan still grows: how many sentences the story has (the rest come as `narration.sentence`).
    public var total: Int? = nil
}

/// One more sentence of a plan that grows, ready `ready` of `total`: it follows the ones before it.
public struct NarrationSentenceMessage: Sendable, Equatable, Codable {
    public var sentence: NarratedSentence
    public var ready: Int
    public var total: Int
}

/// Sentence `sentence` starts (or started) at server time `at`; the following ones follow the plan.
public struct SentenceProgress: Sendable, Equatable, Codable {
    public var sentence: Int
    public var at: ServerTime
}

public struct Instant: Sendable, Equatable, Codable {
    public var at: ServerTime
}

/// `code` is always `narration_failed`, which the pages word from their catalogs. Teachers get the reason
/// in `message` (a missing voice, say: a detail shown as written); children and dashboards get an English
/// kind sentence there, for API clients.
public struct NarrationFailure: Sendable, Equatable, Codable {
    public static let code = "narration_failed"
    public var code: String
    public var message: String
    /// Teachers only: why (`NarrationProblem.Reason`), with what the page words it with.
    public var reason: NarrationProblem.Reason?
    public var params: [String: String]?

    public init(message: String, reason: NarrationProblem.Reason? = nil, params: [String: String]? = nil) {
        self.code = Self.code
        self.message = message
        self.reason = reason
        self.params = params
    }

    /// What `role` is told of `problem`: the teacher the reason, everyone else kind words only.
    public init(_ problem: NarrationProblem, for role: Role) {
        if role == .teacher {
            self.init(message: problem.message, reason: problem.reason, params: problem.params)
        } else {
            self.init(message: NarrationFailure.childMessage)
        }
    }

    /// The English of what children and the projector are told (the pages word it from the catalog).
    public static let childMessage = "Pip could not get the story ready. Your teacher is fixing it: stay here!"
}

public struct QuizUnlock: Sendable, Equatable, Codable {
    public var at: ServerTime
    public var questionCount: Int
}

/// A question as children see it. It has no answer field: the correct option is only in `Reveal`.
public struct QuestionView: Sendable, Equatable, Codable {
    public var index: Int
    public var count: Int
    public var text: String
    public var options: [String]
    /// When answering opens, everywhere at once.
    public var opensAt: ServerTime
    /// When answering closes; absent in no-timer mode.
    public var deadline: ServerTime?
    public var timeLimitMs: Int?
    /// The question read aloud with its options, if the room reads questions.
    public var audio: String?
    /// A picture shown with the question.
    public var picture: PictureView? = nil
    /// A picture for each option (picture options; `options` are their labels), absent for text options.
    public var optionPictures: [PictureView]? = nil
}

public struct AnswerAck: Sendable, Equatable, Codable {
    public var question: Int
    public var option: Int
}

public struct AnswerProgress: Sendable, Equatable, Codable {
    public var question: Int
    public var answered: Int
    public var total: Int
}

/// A child's own standing.
public struct PlayerStanding: Sendable, Equatable, Codable {
    public var score: Int
    /// The child's place in the class; absent unless the room is competitive (`RoomSettings.competitive`).
    public var rank: Int?
    /// Correct answers in a row, up to the last question revealed.
    public var streak: Int
    public var results: [QuestionOutcome]
    /// The nearest place above this child, for "120 points behind Ana"; absent in first place, and absent
    /// unless the room is competitive.
    public var ahead: PlaceAhead?

    public init(score: Int, rank: Int?, streak: Int, results: [QuestionOutcome], ahead: PlaceAhead? = nil) {
        self.score = score
        self.rank = rank
        self.streak = streak
        self.results = results
        self.ahead = ahead
    }
}

/// The player just ahead of a child: the first (by the board's order) of the nearest higher score.
public struct PlaceAhead: Sendable, Equatable, Codable {
    public var nickname: String
    /// How many more points they have (at least 1).
    public var points: Int

    public init(nickname: String, points: Int) {
        self.nickname = nickname
        self.points = points
    }
}

/// A child's result on the question just revealed.
public struct PlayerResult: Sendable, Equatable, Codable {
    public var option: Int?
    public var outcome: QuestionOutcome
    public var points: Int
    public var standing: PlayerStanding
}

public struct Reveal: Sendable, Equatable, Codable {
    public var question: Int
    public var correctOption: Int
    public var explanation: String?
    /// How many chose each option.
    public var distribution: [Int]
    /// For a child: their own result.
    public var you: PlayerResult?
    /// The top of the board (the top five for children, everyone for screens).
    public var top: [ScoreboardEntry]
}

public struct ScoreboardUpdate: Sendable, Equatable, Codable {
    public var entries: [ScoreboardEntry]
    public var answers: AnswerProgress?
}

public struct Paused: Sendable, Equatable, Codable {
    /// "narration" or "question".
    public var what: String
    public var sentence: Int?
    public var remainingMs: Int?
}

public struct Resumed: Sendable, Equatable, Codable {
    public var question: Int?
    /// When a question paused before it opened, its new opening instant.
    public var opensAt: ServerTime?
    public var deadline: ServerTime?
}

public struct RoomStatus: Sendable, Equatable, Codable {
    public var locked: Bool
    public var settings: RoomSettings
    /// The language the room's screens speak (`RoomState.language`).
    public var language: String
    /// For teachers: the commands allowed now (`RoomState.allowedCommands`). Absent for children and dashboards.
    public var commands: [String]? = nil
}

public struct Finished: Sendable, Equatable, Codable {
    /// The first three places, in board order, never anyone with 0 points; at most
    /// `RoomTiming.podiumCount` names, however many share a place.
    public var podium: [ScoreboardEntry]
    /// How many more share the last place named, when not all of them fit; absent when none are left out.
    public var podiumMore: PodiumMore?
    public var you: PlayerStanding?
    /// The whole board, for screens.
    public var entries: [ScoreboardEntry]?
}

/// "… and 12 more": the players who share place `rank` on the podium but are not named in it.
public struct PodiumMore: Sendable, Equatable, Codable {
    public var rank: Int
    public var count: Int

    public init(rank: Int, count: Int) {
        self.rank = rank
        self.count = count
    }
}

public struct Notice: Sendable, Equatable, Codable {
    /// What happened, for the page to word (`kicked`, or `blocked` when the teacher also blocked the child).
    public var code: ErrorCode
    public var message: String
    /// In `kicked`: true when the teacher also blocked the child (this browser's token and the name stay
    /// refused), so the page keeps its token to show that again rather than offering to join.
    public var blocked: Bool?

    public init(code: ErrorCode, message: String, blocked: Bool? = nil) {
        self.code = code
        self.message = message
        self.blocked = blocked
    }
}

/// Everything a screen needs to show a room as it is now: sent in `welcome`, so a late joiner, a
/// refreshed page or a new dashboard picks up where the room is.
public struct RoomSnapshot: Sendable, Equatable, Codable {
    public var code: String
    public var title: String
    public var phase: PhaseName
    public var paused: Bool
    public var locked: Bool
    public var settings: RoomSettings
    /// The language the room's screens speak: the teacher's choice, or the story's (or room's) voice's.
    public var language: String
    public var questionCount: Int
    public var playerCount: Int
    public var preparing: Preparing?
    public var error: String?
    /// Teachers only, in the error phase: why the narration failed, and the words' parameters.
    public var errorReason: NarrationProblem.Reason?
    public var errorParams: [String: String]?
    public var plan: NarrationPlanMessage?
    /// The sentence being narrated, and when it started (or starts).
    public var sentence: Int?
    public var sentenceAt: ServerTime?
    public var question: QuestionView?
    /// For a child: the option already chosen on the open question.
    public var yourAnswer: Int?
    public var reveal: Reveal?
    public var finished: Finished?
    public var you: PlayerStanding?
    public var players: [LobbyPlayer]?
    public var scoreboard: [ScoreboardEntry]?
    /// For teachers: the commands allowed now (a `room` follows whenever that changes).
    public var commands: [String]?
    /// For teachers of a class room: the class and every member, present or not.
    public var schoolClass: ClassRosterView?

    enum CodingKeys: String, CodingKey {
        case code, title, phase, paused, locked, settings, language, questionCount, playerCount, preparing, error, errorReason, errorParams
        case plan, sentence, sentenceAt, question, yourAnswer, reveal, finished, you, players, scoreboard, commands
        case schoolClass = "class"
    }
}

/// A class as a room's messages name it.
/// Only its name: a name-picker is anyone with the room's code, and the page needs nothing else.
public struct ClassRef: Sendable, Equatable, Codable {
    public var name: String

    public init(name: String) {
        self.name = name
    }
}

/// One name a child can pick.
public struct NameChoice: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var avatar: String
    /// A player of the room holds this name (connected or not, not removed).
    public var taken: Bool
}

/// The answer to `names`, and what a name-picker gets whenever a name is taken or freed. `class` is
/// `null` (present) in a room without a class.
public struct NamesList: Sendable, Equatable, Codable {
    public var room: String
    public var schoolClass: ClassRef?
    public var children: [NameChoice]

    enum CodingKeys: String, CodingKey {
        case room, children
        case schoolClass = "class"
    }

    public init(room: String, schoolClass: ClassRef?, children: [NameChoice]) {
        self.room = room
        self.schoolClass = schoolClass
        self.children = children
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        room = try container.decode(String.self, forKey: .room)
        schoolClass = try container.decodeIfPresent(ClassRef.self, forKey: .schoolClass)
        children = try container.decode([NameChoice].self, forKey: .children)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(room, forKey: .room)
        try container.encode(schoolClass, forKey: .schoolClass)
        try container.encode(children, forKey: .children)
    }
}

/// A member of a class room as the teacher sees them.
public struct RosterMember: Sendable, Equatable, Codable {
    public var member: String
    public var name: String
    public var avatar: String
    /// The room player holding the name; `null` when nobody has picked it.
    public var player: String?
    public var taken: Bool
    public var connected: Bool

    enum CodingKeys: String, CodingKey {
        case member, name, avatar, player, taken, connected
    }

    public init(member: String, name: String, avatar: String, player: String?, taken: Bool, connected: Bool) {
        self.member = member
        self.name = name
        self.avatar = avatar
        self.player = player
        self.taken = taken
        self.connected = connected
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        member = try container.decode(String.self, forKey: .member)
        name = try container.decode(String.self, forKey: .name)
        avatar = try container.decode(String.self, forKey: .avatar)
        player = try container.decodeIfPresent(String.self, forKey: .player)
        taken = try container.decode(Bool.self, forKey: .taken)
        connected = try container.decode(Bool.self, forKey: .connected)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(member, forKey: .member)
        try container.encode(name, forKey: .name)
        try container.encode(avatar, forKey: .avatar)
        try container.encode(player, forKey: .player)
        try container.encode(taken, forKey: .taken)
        try container.encode(connected, forKey: .connected)
    }
}

public struct ClassRosterUpdate: Sendable, Equatable, Codable {
    public var members: [RosterMember]
}

/// The class of a room in a teacher's snapshot.
public struct ClassRosterView: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var members: [RosterMember]
}
