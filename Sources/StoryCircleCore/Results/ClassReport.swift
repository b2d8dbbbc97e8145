/// What a class did, for the teacher's "what do I teach again tomorrow?" (docs/protocol.md, `GET
/// /api/classes/{id}/report`): the rooms the class played, each question's share of right answers and most
/// chosen wrong option; the children with most wrong over the last rooms; each child's rooms over time.
/// Built from the stored rooms, scored as the rooms score (`RoomState.restore`, `results()`), so a report
/// and a room's own results never disagree.
public struct ClassReport: Sendable, Equatable, Encodable {
    public struct WrongChoice: Sendable, Equatable, Encodable {
        public var option: Int
        public var text: String
        public var count: Int
    }

    public struct QuestionLine: Sendable, Equatable, Encodable {
        public var index: Int
        public var prompt: String
        public var answered: Int
        public var right: Int
        public var shareRight: Double
        public var mostChosenWrong: WrongChoice?

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(prompt, forKey: .prompt)
            try container.encode(answered, forKey: .answered)
            try container.encode(right, forKey: .right)
            try container.encode(shareRight, forKey: .shareRight)
            try container.encode(mostChosenWrong, forKey: .mostChosenWrong)
        }

        enum CodingKeys: String, CodingKey { case index, prompt, answered, right, shareRight, mostChosenWrong }
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

    public struct HelpLine: Sendable, Equatable, Encodable {
        public var member: String
        public var name: String
        public var avatar: String
        public var wrong: Int
        public var answered: Int
        public var rooms: Int
    }

    public struct ChildRoom: Sendable, Equatable, Encodable {
        public var code: String
        public var startedAt: String
        public var points: Int
        public var right: Int
        public var answered: Int
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

    /// One row per room and child of the class CSV.
    public struct Row: Sendable, Equatable {
        public var room: String
        public var startedAt: String
        public var title: String
        public var member: String
        public var child: String
        public var points: Int
        public var right: Int
        public var answered: Int
    }

    public var rows: [Row] = []

    /// `rooms`: the class's stored rooms, newest first (`ClassBook.classRooms`).
    public init(_ schoolClass: SchoolClass, rooms archives: [RoomArchive], lookalikes: any ConfusableSkeleton) {
        self.schoolClass = ClassName(id: schoolClass.id, name: schoolClass.name)
        var rooms: [RoomLine] = []
        var played: [String: [ChildRoom]] = [:]
        var help: [String: (wrong: Int, answered: Int, rooms: Int)] = [:]
        var rows: [Row] = []
        for (position, archive) in archives.enumerated() {
            let (state, _) = RoomState.restore(archive, lookalikes: lookalikes, at: archive.header.createdAt)
            let results = state.results()
            let questions = archive.header.story.quiz.questions
            let startedAt = Self.iso8601(archive.header.createdAt)
            var lines: [QuestionLine] = []
            for (index, question) in questions.enumerated() {
                let given = archive.answers.filter { $0.question == index }
                let right = given.count { $0.correct }
                var wrongCounts: [Int: Int] = [:]
                for answer in given where !answer.correct { wrongCounts[answer.option, default: 0] += 1 }
                let most = wrongCounts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
                lines.append(QuestionLine(
                    index: index, prompt: question.text, answered: given.count, right: right,
                    shareRight: given.isEmpty ? 0 : (Double(right) / Double(given.count) * 10_000).rounded() / 10_000,
                    mostChosenWrong: most.map { WrongChoice(option: $0.key, text: question.options.indices.contains($0.key) ? question.options[$0.key] : "", count: $0.value) }
                ))
            }
            let endedAt = archive.phases.last { $0.phase == .finished }?.at
            rooms.append(RoomLine(code: archive.header.code, title: archive.header.story.title, startedAt: startedAt, endedAt: endedAt.map(Self.iso8601), players: results.players.count, questions: lines))
            let members = Dictionary(archive.players.compactMap { player in player.member.map { (player.id, $0) } }, uniquingKeysWith: { first, _ in first })
            for player in results.players {
                guard let member = members[player.id] else { continue }
                let answered = player.answers.count { $0.option != nil }
                let right = player.answers.count { $0.correct == true }
                played[member, default: []].append(ChildRoom(code: archive.header.code, startedAt: startedAt, points: player.score, right: right, answered: answered))
                rows.append(Row(room: archive.header.code, startedAt: startedAt, title: archive.header.story.title, member: member, child: player.nickname, points: player.score, right: right, answered: answered))
                if position < Self.helpRooms {
                    var line = help[member] ?? (0, 0, 0)
                    line.wrong += player.answers.count { $0.correct == false }
                    line.answered += answered
                    line.rooms += 1
                    help[member] = line
                }
            }
        }
        self.rooms = rooms
        self.rows = rows
        children = schoolClass.members.map { ChildLine(member: $0.id, name: $0.name, avatar: $0.avatar, rooms: played[$0.id] ?? []) }
        needsHelp = Array(schoolClass.members.compactMap { member -> HelpLine? in
            guard let line = help[member.id], line.wrong > 0 else { return nil }
            return HelpLine(member: member.id, name: member.name, avatar: member.avatar, wrong: line.wrong, answered: line.answered, rooms: line.rooms)
        }.sorted { ($0.wrong, -$0.answered) != ($1.wrong, -$1.answered) ? ($0.wrong, -$0.answered) > ($1.wrong, -$1.answered) : $0.name < $1.name }.prefix(Self.helpChildren))
    }

    public static let csvHeader = ["room", "room_started", "story_title", "member", "child", "points", "right", "answered"]

    /// The class CSV: one row per room and child, newest room first; with `room`, that room's rows only.
    public func csv(room: String? = nil) -> String {
        var lines = [Self.csvHeader.joined(separator: ",")]
        for row in rows where room == nil || row.room == room {
            let cells = [row.room, row.startedAt, row.title, row.member, row.child, String(row.points), String(row.right), String(row.answered)]
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
