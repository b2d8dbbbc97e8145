/// One line of a scoreboard.
public struct ScoreboardEntry: Sendable, Equatable, Codable {
    /// Standard competition ranking: equal scores share a rank and the next rank skips (1, 2, 2, 4).
    public var rank: Int
    public var id: String
    public var nickname: String
    public var score: Int
    public var streak: Int
    public var connected: Bool
    /// Whether this player has answered the open question (only while a question is open).
    public var answered: Bool?
    /// One entry per question so far: "correct", "wrong", "missed" or "skipped".
    public var results: [QuestionOutcome]

    public init(rank: Int, id: String, nickname: String, score: Int, streak: Int, connected: Bool, answered: Bool? = nil, results: [QuestionOutcome] = []) {
        self.rank = rank
        self.id = id
        self.nickname = nickname
        self.score = score
        self.streak = streak
        self.connected = connected
        self.answered = answered
        self.results = results
    }
}

/// What happened to one player on one question, once it is revealed.
public enum QuestionOutcome: String, Sendable, Codable, Equatable {
    case correct, wrong, missed, skipped
}

public enum Scoreboard {
    /// Ranks `players` by score, highest first; ties share a rank and are listed by nickname.
    public static func rank<Player>(_ players: [Player], score: (Player) -> Int, nickname: (Player) -> String) -> [(rank: Int, player: Player)] {
        let sorted = players.sorted { a, b in
            let (sa, sb) = (score(a), score(b))
            return sa != sb ? sa > sb : nickname(a).lowercased() < nickname(b).lowercased()
        }
        var ranked: [(rank: Int, player: Player)] = []
        ranked.reserveCapacity(sorted.count)
        for (index, player) in sorted.enumerated() {
            if let previous = ranked.last, score(previous.player) == score(player) {
                ranked.append((previous.rank, player))
            } else {
                ranked.append((index + 1, player))
            }
        }
        return ranked
    }
}
