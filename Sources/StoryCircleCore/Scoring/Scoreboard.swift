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
    /// How a nickname sorts among tied scores.
    public static func sortName(_ nickname: String) -> String {
        nickname.lowercased()
    }

    /// Ranks `players` by score, highest first; ties share a rank and are listed by nickname.
    public static func rank<Player>(_ players: [Player], score: (Player) -> Int, nickname: (Player) -> String) -> [(rank: Int, player: Player)] {
        rank(players, score: score, sortName: { sortName(nickname($0)) })
    }

    /// `rank(_:score:nickname:)` for players whose `sortName(_:)` is already known (a room works it out once
    /// per player, as it ranks its class at every scoreboard and reveal).
    public static func rank<Player>(_ players: [Player], score: (Player) -> Int, sortName: (Player) -> String) -> [(rank: Int, player: Player)] {
        // Each key once, not in every comparison: while scores tie (the start of a quiz) nearly every
        // comparison is between nicknames.
        let keyed = players.map { (player: $0, score: score($0), name: sortName($0)) }
        let sorted = keyed.sorted { a, b in
            a.score != b.score ? a.score > b.score : a.name < b.name
        }
        var ranked: [(rank: Int, player: Player)] = []
        ranked.reserveCapacity(sorted.count)
        var previousScore: Int?
        for (index, entry) in sorted.enumerated() {
            if let previous = ranked.last, previousScore == entry.score {
                ranked.append((previous.rank, entry.player))
            } else {
                ranked.append((index + 1, entry.player))
            }
            previousScore = entry.score
        }
        return ranked
    }
}
