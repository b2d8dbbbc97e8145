import FoundationEssentials

/// A message from the server. On the wire: one JSON object whose `type` names the case and whose other
/// fields are the payload's.
///
/// The cases whose payload is large are `indirect`: a room hands the shell arrays of thousands of directives
/// (a reveal, a podium), and an enum is as wide as its widest case (a `Welcome` inline made every message
/// 880 bytes, copied and moved whole).
public enum ServerMessage: Sendable, Equatable {
    indirect case welcome(Welcome)
    case error(RoomError)
    case pong(Pong)
    case lobby(Lobby)
    case preparing(Preparing)
    indirect case narrationPlan(NarrationPlanMessage)
    indirect case narrationSentence(NarrationSentenceMessage)
    /// To teachers: how the story is being read changed after its plan was sent (the questions' voice).
    case narrationNotice(NarrationNotice)
    case progress(SentenceProgress)
    case narrationComplete(Instant)
    case narrationError(NarrationFailure)
    case quizUnlock(QuizUnlock)
    indirect case question(QuestionView)
    case answerAck(AnswerAck)
    indirect case reveal(Reveal)
    case scoreboard(ScoreboardUpdate)
    indirect case paused(Paused)
    case resumed(Resumed)
    indirect case room(RoomStatus)
    indirect case finished(Finished)
    case kicked(Notice)
    case storage(StoreHealthStatus)
    /// To name-pickers: the class's children and which names are taken.
    case names(NamesList)
    /// To teachers of a class room: every member, taken and connected or not.
    case classRoster(ClassRosterUpdate)

    /// The message's `type` on the wire.
    public var type: String { kind.rawValue }

    public var kind: ServerMessageType {
        switch self {
        case .welcome: .welcome
        case .error: .error
        case .pong: .pong
        case .lobby: .lobby
        case .preparing: .preparing
        case .narrationPlan: .narrationPlan
        case .narrationSentence: .narrationSentence
        case .narrationNotice: .narrationNotice
        case .progress: .progress
        case .narrationComplete: .narrationComplete
        case .narrationError: .narrationError
        case .quizUnlock: .quizUnlock
        case .question: .question
        case .answerAck: .answerAck
        case .reveal: .reveal
        case .scoreboard: .scoreboard
        case .paused: .paused
        case .resumed: .resumed
        case .room: .room
        case .finished: .finished
        case .kicked: .kicked
        case .storage: .storage
        case .names: .names
        case .classRoster: .classRoster
        }
    }

    /// Whether this answers what one client just sent (its welcome, an answer's ack, an error, a pong):
    /// the transport sends replies ahead of news for many, so a child's answer is acknowledged while
    /// another room's reveal is still being written.
    public var isReply: Bool {
        switch self {
        case .welcome, .answerAck, .error, .pong: true
        default: false
        }
    }
}

extension ServerMessage: Codable {
    private struct TypeKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        static let type = TypeKey(stringValue: "type")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TypeKey.self)
        try container.encode(type, forKey: .type)
        switch self {
        case .welcome(let payload): try payload.encode(to: encoder)
        case .error(let payload): try payload.encode(to: encoder)
        case .pong(let payload): try payload.encode(to: encoder)
        case .lobby(let payload): try payload.encode(to: encoder)
        case .preparing(let payload): try payload.encode(to: encoder)
        case .narrationPlan(let payload): try payload.encode(to: encoder)
        case .narrationSentence(let payload): try payload.encode(to: encoder)
        case .narrationNotice(let payload): try payload.encode(to: encoder)
        case .progress(let payload): try payload.encode(to: encoder)
        case .narrationComplete(let payload): try payload.encode(to: encoder)
        case .narrationError(let payload): try payload.encode(to: encoder)
        case .quizUnlock(let payload): try payload.encode(to: encoder)
        case .question(let payload): try payload.encode(to: encoder)
        case .answerAck(let payload): try payload.encode(to: encoder)
        case .reveal(let payload): try payload.encode(to: encoder)
        case .scoreboard(let payload): try payload.encode(to: encoder)
        case .paused(let payload): try payload.encode(to: encoder)
        case .resumed(let payload): try payload.encode(to: encoder)
        case .room(let payload): try payload.encode(to: encoder)
        case .finished(let payload): try payload.encode(to: encoder)
        case .kicked(let payload): try payload.encode(to: encoder)
        case .storage(let payload): try payload.encode(to: encoder)
        case .names(let payload): try payload.encode(to: encoder)
        case .classRoster(let payload): try payload.encode(to: encoder)
        }
    }

    public init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: TypeKey.self).decode(String.self, forKey: .type)
        switch ServerMessageType(rawValue: type) {
        case .welcome: self = .welcome(try Welcome(from: decoder))
        case .error: self = .error(try RoomError(from: decoder))
        case .pong: self = .pong(try Pong(from: decoder))
        case .lobby: self = .lobby(try Lobby(from: decoder))
        case .preparing: self = .preparing(try Preparing(from: decoder))
        case .narrationPlan: self = .narrationPlan(try NarrationPlanMessage(from: decoder))
        case .narrationSentence: self = .narrationSentence(try NarrationSentenceMessage(from: decoder))
        case .narrationNotice: self = .narrationNotice(try NarrationNotice(from: decoder))
        case .progress: self = .progress(try SentenceProgress(from: decoder))
        case .narrationComplete: self = .narrationComplete(try Instant(from: decoder))
        case .narrationError: self = .narrationError(try NarrationFailure(from: decoder))
        case .quizUnlock: self = .quizUnlock(try QuizUnlock(from: decoder))
        case .question: self = .question(try QuestionView(from: decoder))
        case .answerAck: self = .answerAck(try AnswerAck(from: decoder))
        case .reveal: self = .reveal(try Reveal(from: decoder))
        case .scoreboard: self = .scoreboard(try ScoreboardUpdate(from: decoder))
        case .paused: self = .paused(try Paused(from: decoder))
        case .resumed: self = .resumed(try Resumed(from: decoder))
        case .room: self = .room(try RoomStatus(from: decoder))
        case .finished: self = .finished(try Finished(from: decoder))
        case .kicked: self = .kicked(try Notice(from: decoder))
        case .storage: self = .storage(try StoreHealthStatus(from: decoder))
        case .names: self = .names(try NamesList(from: decoder))
        case .classRoster: self = .classRoster(try ClassRosterUpdate(from: decoder))
        case nil:
            throw DecodingError.dataCorrupted(.init(codingPath: [TypeKey.type], debugDescription: "Unknown message type \(type)"))
        }
    }
}

/// Every `type` the server sends: the pages' table (`web-static/js/message-types.js`) is generated from
/// this one (`GeneratedTables`).
public enum ServerMessageType: String, Sendable, CaseIterable {
    case welcome
    case error
    case pong
    case lobby
    case preparing
    case narrationPlan = "narration.plan"
    case narrationSentence = "narration.sentence"
    case narrationNotice = "narration.notice"
    case progress
    case narrationComplete = "narration.complete"
    case narrationError = "narration.error"
    case quizUnlock = "quiz.unlock"
    case question
    case answerAck = "answer.ack"
    case reveal
    case scoreboard
    case paused
    case resumed
    case room
    case finished
    case kicked
    case storage
    case names
    case classRoster = "class.roster"
}
