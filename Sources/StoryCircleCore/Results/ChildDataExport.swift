/// One child's data as a parent receives it (`GET …/data`, `docs/privacy.md`): everything the store keeps
/// about them (`ChildData`), with the words of the questions and answers, as JSON or as CSV.
public struct ChildDataExport: Sendable, Equatable, Encodable {
    public struct Member: Sendable, Equatable, Encodable {
        public var classId: String
        public var className: String
        public var memberId: String
        public var name: String
        public var avatar: String
        public var removedAt: String?
    }

    public struct Player: Sendable, Equatable, Encodable {
        public var id: String
        public var nickname: String
        public var memberId: String?
        public var joinedAt: String
        public var leftAt: String?
        public var kickedAt: String?
        public var blocked: Bool
        public var releasedAt: String?
        /// Resume tokens of theirs the teacher released (kept as hashes so that they stay refused).
        public var releasedResumeTokens: Int
    }

    public struct Answer: Sendable, Equatable, Encodable {
        /// From 0, as in the room's results.
        public var question: Int
        public var questionText: String
        public var option: Int
        public var optionText: String
        public var correct: Bool
        public var points: Int
        public var timeMs: Int
        public var receivedAt: String
    }

    public struct Room: Sendable, Equatable, Encodable {
        public var code: String
        public var story: String
        public var createdAt: String
        public var phase: String
        public var classId: String?
        public var player: Player
        public var answers: [Answer]
        public var points: Int
    }

    public var exportedAt: String
    /// `class_member` or `nickname`.
    public var kind: String
    public var member: Member?
    public var rooms: [Room]

    public init(_ data: ChildData, at now: ServerTime) {
        let time = ClassReport.iso8601
        exportedAt = time(now)
        kind = data.member == nil && data.rooms.allSatisfy({ $0.member == nil }) ? "nickname" : "class_member"
        member = data.member.map {
            Member(classId: $0.classID, className: $0.className, memberId: $0.memberID, name: $0.name, avatar: $0.avatar, removedAt: $0.removedAt.map(time))
        }
        rooms = data.rooms.map { room in
            let questions = room.story.quiz.questions
            let answers = room.answers.map { answer in
                let question = questions.indices.contains(answer.question) ? questions[answer.question] : nil
                let options = question?.options ?? []
                return Answer(
                    question: answer.question, questionText: question?.text ?? "", option: answer.option,
                    optionText: options.indices.contains(answer.option) ? options[answer.option] : "", correct: answer.correct, points: answer.points,
                    timeMs: answer.elapsedMs, receivedAt: time(answer.receivedAt)
                )
            }
            let player = Player(
                id: room.player.rawValue, nickname: room.nickname, memberId: room.member?.rawValue, joinedAt: time(room.joinedAt), leftAt: room.leftAt.map(time),
                kickedAt: room.kickedAt.map(time), blocked: room.blocked, releasedAt: room.releasedAt.map(time), releasedResumeTokens: room.releasedTokens
            )
            return Room(
                code: room.room, story: room.story.title, createdAt: time(room.roomCreatedAt), phase: room.roomPhase.rawValue, classId: room.classID,
                player: player, answers: answers, points: answers.reduce(0) { $0 + $1.points }
            )
        }
    }

    public static let csvHeader = ["record", "room", "story", "room_created_at", "player_id", "nickname", "at", "question", "question_text", "answer", "result", "points", "time_ms", "detail"]

    /// One row per thing stored: the class member record, then per room the child's joining, leaving,
    /// kick, block, release and each answer, in time order within the room (`CSVFile` adds the byte order
    /// mark).
    public func csv() -> String {
        var lines = [Self.csvHeader.joined(separator: ",")]
        func row(_ record: String, _ room: Room?, at: String?, question: Answer? = nil, detail: String = "") {
            let cells: [String] = [
                record, room?.code ?? "", room?.story ?? "", room?.createdAt ?? "", room?.player.id ?? "", room?.player.nickname ?? "", at ?? "",
                question.map { String($0.question + 1) } ?? "", question?.questionText ?? "", question?.optionText ?? "",
                question.map { $0.correct ? "right" : "not right" } ?? "", question.map { String($0.points) } ?? "",
                question.map { String($0.timeMs) } ?? "", detail,
            ]
            lines.append(cells.map(RoomResults.csvCell).joined(separator: ","))
        }
        if let member {
            row("class_member", nil, at: member.removedAt, detail: "class \(member.className) (\(member.classId)); member \(member.name) (\(member.memberId)); avatar \(member.avatar)\(member.removedAt == nil ? "" : "; removed from the class")")
        }
        for room in rooms {
            typealias Event = (at: String, record: String, answer: Answer?, detail: String)
            var events: [Event] = [(room.player.joinedAt, "joined", nil, room.player.memberId.map { "member \($0)" } ?? "")]
            if let left = room.player.leftAt { events.append((left, "left", nil, "")) }
            if let kicked = room.player.kickedAt { events.append((kicked, room.player.blocked ? "blocked" : "kicked", nil, "")) }
            if let released = room.player.releasedAt { events.append((released, "released", nil, "")) }
            if room.player.releasedResumeTokens > 0 { events.append(("", "released_tokens", nil, "\(room.player.releasedResumeTokens) released resume token(s) kept as hashes")) }
            events += room.answers.map { answer -> Event in (answer.receivedAt, "answer", answer, "") }
            // ISO 8601 times in UTC sort as text; the undated count of tokens goes last.
            for event in events.enumerated().sorted(by: { ($0.element.at.isEmpty ? "~" : $0.element.at, $0.offset) < ($1.element.at.isEmpty ? "~" : $1.element.at, $1.offset) }).map(\.element) {
                row(event.record, room, at: event.at.isEmpty ? nil : event.at, question: event.answer, detail: event.detail)
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

// What was not stored is `null`, not left out: a parent reads every field, set or not.
extension ChildDataExport {
    fileprivate enum Keys: String, CodingKey {
        case exportedAt, kind, member, rooms, classId, className, memberId, name, avatar, removedAt, id, nickname, joinedAt, leftAt, kickedAt, blocked,
             releasedAt, releasedResumeTokens, code, story, createdAt, phase, player, answers, points
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(exportedAt, forKey: .exportedAt)
        try container.encode(kind, forKey: .kind)
        try container.encode(member, forKey: .member)
        try container.encode(rooms, forKey: .rooms)
    }
}

extension ChildDataExport.Member {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ChildDataExport.Keys.self)
        try container.encode(classId, forKey: .classId)
        try container.encode(className, forKey: .className)
        try container.encode(memberId, forKey: .memberId)
        try container.encode(name, forKey: .name)
        try container.encode(avatar, forKey: .avatar)
        try container.encode(removedAt, forKey: .removedAt)
    }
}

extension ChildDataExport.Player {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ChildDataExport.Keys.self)
        try container.encode(id, forKey: .id)
        try container.encode(nickname, forKey: .nickname)
        try container.encode(memberId, forKey: .memberId)
        try container.encode(joinedAt, forKey: .joinedAt)
        try container.encode(leftAt, forKey: .leftAt)
        try container.encode(kickedAt, forKey: .kickedAt)
        try container.encode(blocked, forKey: .blocked)
        try container.encode(releasedAt, forKey: .releasedAt)
        try container.encode(releasedResumeTokens, forKey: .releasedResumeTokens)
    }
}

extension ChildDataExport.Room {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ChildDataExport.Keys.self)
        try container.encode(code, forKey: .code)
        try container.encode(story, forKey: .story)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(phase, forKey: .phase)
        try container.encode(classId, forKey: .classId)
        try container.encode(player, forKey: .player)
        try container.encode(answers, forKey: .answers)
        try container.encode(points, forKey: .points)
    }
}
