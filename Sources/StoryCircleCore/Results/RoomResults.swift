import FoundationEssentials

/// A room's results for the teacher: per child per question, the answer, whether it was right, how long it
/// took and the points; per question, how many of the children there got it right and who did not answer;
/// totals and ranks. Built from the room's state, live or restored from storage.
///
/// Who counts as present for a question: every child of the room not taken out of it (kicked or blocked)
/// who had joined by the moment the question was first asked, and any child who answered it. A question
/// never asked has nobody present. A child present who gave no answer "did not answer" once the question
/// is closed: revealed, or open when the room finished. A skipped question holds no answer against anyone;
/// while a question is open a child may still answer.
public struct RoomResults: Sendable, Equatable, Codable {
    /// The wrong option most children chose (the lower option on a tie).
    public struct WrongChoice: Sendable, Equatable, Codable {
        public var option: Int
        public var text: String
        public var count: Int
    }

    public struct QuestionSummary: Sendable, Equatable, Codable {
        public var index: Int
        public var text: String
        public var options: [String]
        public var correctOption: Int
        /// Whether it was revealed or skipped yet; open and future questions do not count towards totals.
        public var concluded: Bool
        public var skipped: Bool
        /// The children present when it was asked (see the type's note); 0 when it was never asked.
        public var present: Int = 0
        public var answered: Int = 0
        public var right: Int = 0
        /// Children present without an answer, once it is closed (not for a skipped one).
        public var unanswered: Int = 0
        /// `right` over `present` (0 when nobody was present), to four decimals.
        public var shareRight: Double = 0
        public var mostChosenWrong: WrongChoice? = nil

        public init(index: Int, text: String, options: [String], correctOption: Int, concluded: Bool, skipped: Bool) {
            self.index = index
            self.text = text
            self.options = options
            self.correctOption = correctOption
            self.concluded = concluded
            self.skipped = skipped
        }

        // Results from a server before the counts decode with none.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            index = try container.decode(Int.self, forKey: .index)
            text = try container.decode(String.self, forKey: .text)
            options = try container.decode([String].self, forKey: .options)
            correctOption = try container.decode(Int.self, forKey: .correctOption)
            concluded = try container.decode(Bool.self, forKey: .concluded)
            skipped = try container.decode(Bool.self, forKey: .skipped)
            present = try container.decodeIfPresent(Int.self, forKey: .present) ?? 0
            answered = try container.decodeIfPresent(Int.self, forKey: .answered) ?? 0
            right = try container.decodeIfPresent(Int.self, forKey: .right) ?? 0
            unanswered = try container.decodeIfPresent(Int.self, forKey: .unanswered) ?? 0
            shareRight = try container.decodeIfPresent(Double.self, forKey: .shareRight) ?? 0
            mostChosenWrong = try container.decodeIfPresent(WrongChoice.self, forKey: .mostChosenWrong)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(text, forKey: .text)
            try container.encode(options, forKey: .options)
            try container.encode(correctOption, forKey: .correctOption)
            try container.encode(concluded, forKey: .concluded)
            try container.encode(skipped, forKey: .skipped)
            try container.encode(present, forKey: .present)
            try container.encode(answered, forKey: .answered)
            try container.encode(right, forKey: .right)
            try container.encode(unanswered, forKey: .unanswered)
            try container.encode(shareRight, forKey: .shareRight)
            try container.encode(mostChosenWrong, forKey: .mostChosenWrong)
        }

        enum CodingKeys: String, CodingKey {
            case index, text, options, correctOption, concluded, skipped, present, answered, right, unanswered, shareRight, mostChosenWrong
        }
    }

    public struct AnswerResult: Sendable, Equatable, Codable {
        public var question: Int
        public var option: Int?
        public var answer: String?
        public var correct: Bool?
        public var timeMs: Int?
        public var points: Int
        /// The child was present for the question (see the type's note).
        public var present: Bool = true
        /// Present, the question closed (not skipped), and no answer.
        public var unanswered: Bool = false

        public init(question: Int, option: Int?, answer: String?, correct: Bool?, timeMs: Int?, points: Int, present: Bool, unanswered: Bool) {
            self.question = question
            self.option = option
            self.answer = answer
            self.correct = correct
            self.timeMs = timeMs
            self.points = points
            self.present = present
            self.unanswered = unanswered
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            question = try container.decode(Int.self, forKey: .question)
            option = try container.decodeIfPresent(Int.self, forKey: .option)
            answer = try container.decodeIfPresent(String.self, forKey: .answer)
            correct = try container.decodeIfPresent(Bool.self, forKey: .correct)
            timeMs = try container.decodeIfPresent(Int.self, forKey: .timeMs)
            points = try container.decode(Int.self, forKey: .points)
            present = try container.decodeIfPresent(Bool.self, forKey: .present) ?? true
            unanswered = try container.decodeIfPresent(Bool.self, forKey: .unanswered) ?? false
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(question, forKey: .question)
            try container.encode(option, forKey: .option)
            try container.encode(answer, forKey: .answer)
            try container.encode(correct, forKey: .correct)
            try container.encode(timeMs, forKey: .timeMs)
            try container.encode(points, forKey: .points)
            try container.encode(present, forKey: .present)
            try container.encode(unanswered, forKey: .unanswered)
        }

        enum CodingKeys: String, CodingKey { case question, option, answer, correct, timeMs, points, present, unanswered }
    }

    public struct PlayerResults: Sendable, Equatable, Codable {
        public var rank: Int
        public var id: String
        public var nickname: String
        public var score: Int
        public var correct: Int
        public var answers: [AnswerResult]
        /// In a class room: the child of the class this player is.
        public var member: String? = nil
    }

    public var code: String
    public var title: String
    public var phase: PhaseName
    public var questions: [QuestionSummary]
    public var players: [PlayerResults]
}

extension RoomState {
    /// The room's results as they stand now.
    public func results() -> RoomResults {
        var questions = story.quiz.questions.enumerated().map { index, question in
            RoomResults.QuestionSummary(index: index, text: question.text, options: question.options, correctOption: question.answer, concluded: index < book.concluded, skipped: book.skipped.contains(index))
        }
        let ranked = rankedPlayers().map { rank, index in
            let player = roster.players[index]
            let playerAnswers = story.quiz.questions.indices.map { question in
                let answer = book.answer(of: player.id, to: question)
                let counts = question < book.concluded && !book.skipped.contains(question)
                let present = answer != nil || book.askedAt[question].map { player.joinedAt <= $0 } == true
                let closed = (question < book.concluded || phase == .finished) && !book.skipped.contains(question)
                return RoomResults.AnswerResult(
                    question: question, option: answer?.option,
                    answer: answer.map { story.quiz.questions[question].options[$0.option] },
                    correct: answer?.correct, timeMs: answer?.elapsedMs,
                    points: counts ? answer?.points ?? 0 : 0,
                    present: present, unanswered: present && answer == nil && closed
                )
            }
            return RoomResults.PlayerResults(rank: rank, id: player.id.rawValue, nickname: player.nickname, score: player.score, correct: playerAnswers.count { $0.correct == true && $0.points > 0 }, answers: playerAnswers, member: player.member?.rawValue)
        }
        for index in questions.indices {
            let given = ranked.map { $0.answers[index] }.filter(\.present)
            var wrong: [Int: Int] = [:]
            for answer in given where answer.correct == false { if let option = answer.option { wrong[option, default: 0] += 1 } }
            let right = given.count { $0.correct == true }
            questions[index].present = given.count
            questions[index].answered = given.count { $0.option != nil }
            questions[index].right = right
            questions[index].unanswered = given.count(where: \.unanswered)
            questions[index].shareRight = given.isEmpty ? 0 : (Double(right) / Double(given.count) * 10_000).rounded() / 10_000
            questions[index].mostChosenWrong = wrong.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }.map { option, count in
                let options = story.quiz.questions[index].options
                return RoomResults.WrongChoice(option: option, text: options.indices.contains(option) ? options[option] : "", count: count)
            }
        }
        return RoomResults(code: code.rawValue, title: story.title, phase: phase.name, questions: questions, players: ranked)
    }
}

extension RoomResults {
    /// Names and questions first, as a teacher reads them; the ids last. `result` is `right`, `not right`,
    /// `did not answer` (present, question concluded, no answer) or empty (not asked yet, or the child was
    /// not there yet).
    public static let csvHeader = ["child", "question", "question_text", "answer", "result", "points", "total_points", "rank", "time_ms", "player_id"]

    /// One row per child per question, for a spreadsheet (`CSVFile` adds the byte order mark).
    public func csv() -> String {
        // A class room's rows also say which child of the class each player is.
        let classRoom = players.contains { $0.member != nil }
        var header = Self.csvHeader
        if classRoom { header.insert("member", at: header.count - 1) }
        var lines = [header.joined(separator: ",")]
        for player in players {
            for answer in player.answers {
                let cells: [String] = [
                    player.nickname, String(answer.question + 1), questions[answer.question].text, answer.answer ?? "",
                    Self.resultWord(answer), String(answer.points), String(player.score), String(player.rank),
                    answer.timeMs.map(String.init) ?? "",
                ] + (classRoom ? [player.member ?? ""] : []) + [player.id]
                lines.append(cells.map(Self.csvCell).joined(separator: ","))
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func resultWord(_ answer: AnswerResult) -> String {
        if let correct = answer.correct { return correct ? "right" : "not right" }
        return answer.unanswered ? "did not answer" : ""
    }

    /// A cell that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a
    /// carriage return) is prefixed with `'` so it stays text; quotes, commas and line breaks are quoted.
    static func csvCell(_ value: String) -> String {
        var cell = value
        if let first = cell.first, "=+-@\t\r".contains(first), Int(cell) == nil {
            cell = "'" + cell
        }
        if cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            var quoted = "\""
            for character in cell {
                quoted.append(character)
                if character == "\"" { quoted.append("\"") }
            }
            cell = quoted + "\""
        }
        return cell
    }
}
