import FoundationEssentials

/// A room's results for the teacher: per child per question, the answer, whether it was right, how long it
/// took and the points; totals and ranks. Built from the room's state, live or restored from storage.
public struct RoomResults: Sendable, Equatable, Codable {
    public struct QuestionSummary: Sendable, Equatable, Codable {
        public var index: Int
        public var text: String
        public var options: [String]
        public var correctOption: Int
        /// Whether it was revealed or skipped yet; open and future questions do not count towards totals.
        public var concluded: Bool
        public var skipped: Bool
    }

    public struct AnswerResult: Sendable, Equatable, Codable {
        public var question: Int
        public var option: Int?
        public var answer: String?
        public var correct: Bool?
        public var timeMs: Int?
        public var points: Int
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
        let questions = story.quiz.questions.enumerated().map { index, question in
            RoomResults.QuestionSummary(index: index, text: question.text, options: question.options, correctOption: question.answer, concluded: index < concluded, skipped: skipped.contains(index))
        }
        let ranked = rankedPlayers().map { rank, index in
            let player = self.players[index]
            let playerAnswers = story.quiz.questions.indices.map { question in
                let answer = self.answers[question][player.id]
                let counts = question < concluded && !skipped.contains(question)
                return RoomResults.AnswerResult(
                    question: question, option: answer?.option,
                    answer: answer.map { story.quiz.questions[question].options[$0.option] },
                    correct: answer?.correct, timeMs: answer?.elapsedMs,
                    points: counts ? answer?.points ?? 0 : 0
                )
            }
            return RoomResults.PlayerResults(rank: rank, id: player.id, nickname: player.nickname, score: player.score, correct: playerAnswers.count { $0.correct == true && $0.points > 0 }, answers: playerAnswers, member: player.member)
        }
        return RoomResults(code: code, title: story.title, phase: phase.name, questions: questions, players: ranked)
    }
}

extension RoomResults {
    public static let csvHeader = ["rank", "nickname", "player_id", "question", "question_text", "answer", "correct", "time_ms", "points", "total_score"]

    /// One row per child per question, for a spreadsheet. Cells that a spreadsheet would run as a formula
    /// (a nickname starting with `=`, `+`, `-` or `@`) are prefixed with `'` so they stay text.
    public func csv() -> String {
        // A class room's rows also say which child of the class each player is.
        let classRoom = players.contains { $0.member != nil }
        var header = Self.csvHeader
        if classRoom { header.insert("member", at: 3) }
        var lines = [header.joined(separator: ",")]
        for player in players {
            for answer in player.answers {
                let cells: [String] = [
                    String(player.rank), player.nickname, player.id] + (classRoom ? [player.member ?? ""] : []) + [String(answer.question + 1),
                    questions[answer.question].text, answer.answer ?? "",
                    answer.correct.map { $0 ? "yes" : "no" } ?? "", answer.timeMs.map(String.init) ?? "",
                    String(answer.points), String(player.score),
                ]
                lines.append(cells.map(Self.csvCell).joined(separator: ","))
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

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
