/// What a class did, for the teacher's "what do I teach again tomorrow?" (docs/protocol.md, `GET
/// /api/classes/{id}/report`): the rooms the class played, each question's share right of the children
/// there when it was asked and most chosen wrong option; the children with most answers not right yet
/// (wrong, or not given) over the last rooms; each child's rooms over time.
/// Built from the stored rooms, scored as the rooms score (`RoomState.restore`, `results()`), so a report
/// and a room's own results never disagree.
public struct ClassReport: Sendable, Equatable, Encodable {
    public typealias WrongChoice = RoomResults.WrongChoice

    /// A question of a room of the class, counted as the room's results count it (`RoomResults`): over the
    /// children present when it was asked.
    public struct QuestionLine: Sendable, Equatable, Encodable {
        public var index: Int
        public var prompt: String
        public var present: Int
        public var answered: Int
        public var right: Int
        public var unanswered: Int
        /// `right` over `present`.
        public var shareRight: Double
        public var mostChosenWrong: WrongChoice?

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(prompt, forKey: .prompt)
            try container.encode(present, forKey: .present)
            try container.encode(answered, forKey: .answered)
            try container.encode(right, forKey: .right)
            try container.encode(unanswered, forKey: .unanswered)
            try container.encode(shareRight, forKey: .shareRight)
            try container.encode(mostChosenWrong, forKey: .mostChosenWrong)
        }

        enum CodingKeys: String, CodingKey { case index, prompt, present, answered, right, unanswered, shareRight, mostChosenWrong }
    }

    public struct RoomLine: Sendable, Equatable, Encodable {
        public var code: String
        public var title: String
        public var startedAt: String
        public var endedAt: String?
        public var players: Int
        public var questions: [QuestionLine]

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            try container.encode(title, forKey: .title)
            try container.encode(startedAt, forKey: .startedAt)
            try container.encode(endedAt, forKey: .endedAt)
            try container.encode(players, forKey: .players)
            try container.encode(questions, forKey: .questions)
        }

        enum CodingKeys: String, CodingKey { case code, title, startedAt, endedAt, players, questions }
    }

    /// A child with questions not yet right over the last rooms: answered wrong, or not answered while
    /// there (closed questions only: a skipped one counts for nobody).
    public struct HelpLine: Sendable, Equatable, Encodable {
        public var member: String
        public var name: String
        public var avatar: String
        public var wrong: Int
        public var answered: Int
        public var unanswered: Int
        /// `wrong` + `unanswered`: what the list is ordered by.
        public var notYetRight: Int
        public var rooms: Int
    }

    public struct ChildRoom: Sendable, Equatable, Encodable {
        public var code: String
        public var startedAt: String
        public var points: Int
        public var right: Int
        public var answered: Int
        public var unanswered: Int
    }

    public struct ChildLine: Sendable, Equatable, Encodable {
        public var member: String
        public var name: String
        public var avatar: String
        public var rooms: [ChildRoom]
    }

    public struct ClassName: Sendable, Equatable, Encodable {
        public var id: String
        public var name: String
    }

    public var schoolClass: ClassName
    public var rooms: [RoomLine]
    public var needsHelp: [HelpLine]
    public var children: [ChildLine]

    enum CodingKeys: String, CodingKey {
        case schoolClass = "class"
        case rooms, needsHelp, children
    }

    /// The rooms `needsHelp` looks back over, and how many children it names.
    public static let helpRooms = 5
    public static let helpChildren = 5

    /// One row per room, child and question of the class CSV.
    public struct Row: Sendable, Equatable {
        public var room: String
        public var startedAt: String
        public var title: String
        public var member: String
        public var child: String
        public var question: Int
        public var questionText: String
        public var answer: String
        public var result: String
        public var points: Int
        public var roomPoints: Int
    }

    public var rows: [Row] = []

    /// `rooms`: the class's stored rooms, newest first (`ClassBook.classRooms`).
    public init(_ schoolClass: SchoolClass, rooms archives: [RoomArchive], lookalikes: any ConfusableSkeleton) {
        self.schoolClass = ClassName(id: schoolClass.id, name: schoolClass.name)
        var rooms: [RoomLine] = []
        var played: [String: [ChildRoom]] = [:]
        var help: [String: (wrong: Int, answered: Int, unanswered: Int, rooms: Int)] = [:]
        var rows: [Row] = []
        for (position, archive) in archives.enumerated() {
            let (state, _) = RoomState.restore(archive, lookalikes: lookalikes, at: archive.header.createdAt)
            let results = state.results()
            let startedAt = Self.iso8601(archive.header.createdAt)
            let lines = results.questions.map { question in
                QuestionLine(
                    index: question.index, prompt: question.text, present: question.present, answered: question.answered, right: question.right,
                    unanswered: question.unanswered, shareRight: question.shareRight, mostChosenWrong: question.mostChosenWrong
                )
            }
            let endedAt = archive.phases.last { $0.phase == .finished }?.at
            rooms.append(RoomLine(code: archive.header.code, title: archive.header.story.title, startedAt: startedAt, endedAt: endedAt.map(Self.iso8601), players: results.players.count, questions: lines))
            for player in results.players {
                guard let member = player.member else { continue }
                let answered = player.answers.count { $0.option != nil }
                let right = player.answers.count { $0.correct == true }
                let unanswered = player.answers.count(where: \.unanswered)
                played[member, default: []].append(ChildRoom(code: archive.header.code, startedAt: startedAt, points: player.score, right: right, answered: answered, unanswered: unanswered))
                for answer in player.answers {
                    rows.append(Row(
                        room: archive.header.code, startedAt: startedAt, title: archive.header.story.title, member: member, child: player.nickname,
                        question: answer.question + 1, questionText: results.questions[answer.question].text, answer: answer.answer ?? "",
                        result: RoomResults.resultWord(answer), points: answer.points, roomPoints: player.score
                    ))
                }
                if position < Self.helpRooms {
                    // Closed questions: revealed, or open when the room ended; a skipped one counts for nobody.
                    let revealed = player.answers.filter { answer in
                        let question = results.questions[answer.question]
                        return (question.concluded || results.phase == .finished) && !question.skipped && question.present > 0
                    }
                    var line = help[member] ?? (0, 0, 0, 0)
                    line.wrong += revealed.count { $0.correct == false }
                    line.answered += revealed.count { $0.option != nil }
                    line.unanswered += revealed.count(where: \.unanswered)
                    line.rooms += 1
                    help[member] = line
                }
            }
        }
        self.rooms = rooms
        self.rows = rows
        children = schoolClass.members.map { ChildLine(member: $0.id, name: $0.name, avatar: $0.avatar, rooms: played[$0.id] ?? []) }
        needsHelp = Array(schoolClass.members.compactMap { member -> HelpLine? in
            guard let line = help[member.id], line.wrong + line.unanswered > 0 else { return nil }
            return HelpLine(
                member: member.id, name: member.name, avatar: member.avatar, wrong: line.wrong, answered: line.answered,
                unanswered: line.unanswered, notYetRight: line.wrong + line.unanswered, rooms: line.rooms
            )
        }.sorted { ($0.notYetRight, -$0.answered) != ($1.notYetRight, -$1.answered) ? ($0.notYetRight, -$0.answered) > ($1.notYetRight, -$1.answered) : $0.name < $1.name }.prefix(Self.helpChildren))
    }

    /// Names and questions first, as a teacher reads them; the ids last. `result` as in the room CSV.
    public static let csvHeader = ["child", "story_title", "room_started", "question", "question_text", "answer", "result", "points", "room_points", "member", "room"]

    /// The class CSV: one row per room, child and question, newest room first; with `room`, that room's rows only.
    public func csv(room: String? = nil) -> String {
        var lines = [Self.csvHeader.joined(separator: ",")]
        for row in rows where room == nil || row.room == room {
            let cells = [
                row.child, row.title, row.startedAt, String(row.question), row.questionText, row.answer, row.result,
                String(row.points), String(row.roomPoints), row.member, row.room,
            ]
            lines.append(cells.map(RoomResults.csvCell).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `2026-12-02T13:00:00Z` (UTC, to the second), without a date library in the core.
    public static func iso8601(_ time: ServerTime) -> String {
        let seconds = Int(time.milliseconds.dividedRoundingDown(by: 1_000))
        let days = seconds.dividedRoundingDown(by: 86_400)
        let inDay = seconds - days * 86_400
        // Howard Hinnant's days-to-civil.
        let z = days + 719_468
        let era = z.dividedRoundingDown(by: 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(inDay / 3_600)):\(two(inDay % 3_600 / 60)):\(two(inDay % 60))Z"
    }
}

private extension BinaryInteger {
    func dividedRoundingDown(by divisor: Self) -> Self {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
