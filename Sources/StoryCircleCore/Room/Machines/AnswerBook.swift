/// The quiz's answers as a room keeps them: one of the machines `RoomState` is composed of. Its rules:
/// - each player's first accepted answer to a question is the one kept (`accept` is called only for an
///   answer the room took, or one read back from storage);
/// - the questions concluded (revealed or skipped) always form a prefix of the quiz;
/// - `answeredHere` counts, as answers and players change, the connected players in the room who have
///   answered `countedQuestion` (the open one while a question is open, else the last one opened), so that
///   "has everyone answered?" after each answer costs nothing per player;
/// - a connection's round trip is what its page last reported, within `maximumRoundTripMs`.
struct AnswerBook: Sendable {
    /// The most round trip a client may claim (at most `answerGraceMs` of it is credited anyway).
    static let maximumRoundTripMs = 10_000

    /// Per question, the accepted answers by player id.
    private var answers: [[PlayerID: AnswerRecord]]
    /// When each question was first asked: who counts as present for it in the results (`RoomResults`).
    private(set) var askedAt: [Int: ServerTime] = [:]
    /// Questions revealed or skipped so far.
    private(set) var concluded = 0
    private(set) var skipped: Set<Int> = []
    /// Each connection's round trip as its page last reported it (in its pings): an answer's speed is
    /// credited half of it.
    private(set) var roundTrips: [ConnectionID: Int] = [:]
    private(set) var countedQuestion = 0
    private(set) var answeredHere = 0

    init(questionCount: Int) {
        answers = Array(repeating: [:], count: questionCount)
    }

    // MARK: - Reading

    var questionCount: Int { answers.count }

    /// The answers accepted for question `question`, by player id (none for a question not in the quiz).
    func answers(to question: Int) -> [PlayerID: AnswerRecord] {
        answers.indices.contains(question) ? answers[question] : [:]
    }

    func answer(of player: PlayerID, to question: Int) -> AnswerRecord? {
        answers.indices.contains(question) ? answers[question][player] : nil
    }

    /// Whether the player has an accepted answer to any question.
    func hasAnswered(_ player: PlayerID) -> Bool {
        answers.contains { $0[player] != nil }
    }

    /// Whether an answer of the player in `earlier` is not here (it was not stored).
    func lacksAnswer(of player: PlayerID, keptIn earlier: AnswerBook) -> Bool {
        earlier.answers.indices.contains { earlier.answers[$0][player] != nil && answer(of: player, to: $0) == nil }
    }

    func roundTrip(of connection: ConnectionID) -> Int { roundTrips[connection] ?? 0 }

    /// `answeredHere` by its definition, given the ids of the connected players in the room.
    func answeredHere(among here: some Sequence<PlayerID>, question: Int) -> Int {
        here.reduce(0) { $0 + (answer(of: $1, to: question) != nil ? 1 : 0) }
    }

    // MARK: - Changing

    /// Records an accepted answer of a player whose presence is `presence`. Ignored for a question not in
    /// the quiz.
    mutating func accept(_ answer: AnswerRecord, presence: PlayerRoster.Presence) {
        guard answers.indices.contains(answer.question) else { return }
        let isNew = answers[answer.question].updateValue(answer, forKey: answer.player) == nil
        if isNew, presence == .here, answer.question == countedQuestion { answeredHere += 1 }
    }

    /// A player's presence changed: `answeredHere` follows.
    mutating func follow(_ change: PlayerRoster.PresenceChange) {
        guard change.from != change.to, answer(of: change.player, to: countedQuestion) != nil else { return }
        if change.from == .here { answeredHere -= 1 }
        if change.to == .here { answeredHere += 1 }
    }

    /// Points the count at question `question` (when it opens), given the ids of the connected players in
    /// the room: one pass, once per question, since answers to it may already be stored (a question
    /// reopened after a restart).
    mutating func count(question: Int, among here: some Sequence<PlayerID>) {
        countedQuestion = question
        answeredHere = answeredHere(among: here, question: question)
    }

    /// Question `question` was asked at `at` (only its first asking counts).
    mutating func asked(_ question: Int, at: ServerTime) {
        if askedAt[question] == nil { askedAt[question] = at }
    }

    /// Question `question` was revealed or skipped.
    mutating func conclude(_ question: Int, skipped isSkipped: Bool) {
        guard answers.indices.contains(question) else { return }
        if isSkipped { skipped.insert(question) }
        concluded = max(concluded, question + 1)
    }

    mutating func noteRoundTrip(_ milliseconds: Int, of connection: ConnectionID) {
        roundTrips[connection] = min(max(milliseconds, 0), Self.maximumRoundTripMs)
    }

    mutating func forget(_ connection: ConnectionID) {
        roundTrips[connection] = nil
    }

    /// Takes the round trips of `connections` from `earlier` (a room rebuilt from storage).
    mutating func keepRoundTrips(of connections: [ConnectionID], from earlier: AnswerBook) {
        for connection in connections { roundTrips[connection] = earlier.roundTrips[connection] }
    }
}
