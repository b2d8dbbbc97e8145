/// How the state looks to each kind of screen. Views for children never include anything secret: a
/// `QuestionView` has no answer field, and the correct option travels only in `Reveal`.
extension RoomState {
    func plays(_ role: Role) -> Bool {
        switch settings.narration {
        case .devices: role == .child
        case .dashboard: role != .child
        case .off: false
        }
    }

    func planMessage(for role: Role, startAt: ServerTime) -> NarrationPlanMessage {
        let plays = plays(role)
        let sentences = (plays ? plan : plan?.silent)?.sentences ?? []
        return NarrationPlanMessage(startAt: startAt, gapMs: timing.sentenceGapMs, mode: settings.narration, playsAudio: plays, sentences: sentences)
    }

    func questionView(_ run: QuestionRun, for role: Role) -> QuestionView {
        let question = story.quiz.questions[run.index]
        let audio = plays(role) ? plan?.questionAudio?[safe: run.index] : nil
        return QuestionView(index: run.index, count: story.quiz.questions.count, text: question.text, options: question.options, opensAt: run.opensAt, deadline: run.deadline, timeLimitMs: run.timeLimitMs, audio: audio)
    }

    /// Active players ranked by score (ties share a rank), as indices into `players`.
    func rankedPlayers() -> [(rank: Int, index: Int)] {
        let active = players.indices.filter { !players[$0].kicked }
        return Scoreboard.rank(active, score: { players[$0].score }, nickname: { players[$0].nickname })
            .map { (rank: $0.rank, index: $0.player) }
    }

    /// A player's rank without sorting everyone: one more than the number of players ahead of them.
    func rank(of player: Player) -> Int {
        1 + players.count { !$0.kicked && $0.score > player.score }
    }

    func results(of player: Player) -> [QuestionOutcome] {
        (0..<concluded).map { player.outcomes[$0] ?? .missed }
    }

    func standing(of player: Player, rank: Int) -> PlayerStanding {
        PlayerStanding(score: player.score, rank: rank, streak: player.streak, results: results(of: player))
    }

    func entries(_ ranked: ArraySlice<(rank: Int, index: Int)>, includeResults: Bool, answered question: Int? = nil) -> [ScoreboardEntry] {
        ranked.map { rank, index in
            let player = players[index]
            return ScoreboardEntry(
                rank: rank, id: player.id, nickname: player.nickname, score: player.score, streak: player.streak,
                connected: player.connection != nil,
                answered: question.map { answers[$0][player.id] != nil },
                results: includeResults ? results(of: player) : []
            )
        }
    }

    /// The whole board, for screens; while a question is open each entry says whether that child answered.
    func board(includeResults: Bool) -> [ScoreboardEntry] {
        var openQuestion: Int?
        if case .question(let run) = phase { openQuestion = run.index }
        return entries(rankedPlayers()[...], includeResults: includeResults, answered: openQuestion)
    }

    /// How many active players chose each option of question `index`.
    func distribution(of index: Int) -> [Int] {
        var counts = Array(repeating: 0, count: story.quiz.questions[index].options.count)
        for answer in answers[index].values where playerIndex[answer.player].map({ !players[$0].kicked }) == true {
            counts[answer.option] += 1
        }
        return counts
    }

    func answerProgress() -> AnswerProgress? {
        guard case .question(let run) = phase else { return nil }
        let answered = answers[run.index].keys.count { playerIndex[$0].map { !players[$0].kicked } == true }
        return AnswerProgress(question: run.index, answered: answered, total: playerCount)
    }

    func lobby() -> Lobby {
        let list = activePlayers.map { LobbyPlayer(id: $0.id, nickname: $0.nickname, connected: $0.connection != nil) }
        return Lobby(players: list, count: list.count)
    }

    /// The room as `member` should see it on arrival.
    func snapshot(for member: Member) -> RoomSnapshot {
        let role = member.role
        var snapshot = RoomSnapshot(
            code: code, title: story.title, phase: phase.name, paused: phase.isPaused, locked: isLocked,
            settings: settings, questionCount: story.quiz.questions.count, playerCount: playerCount
        )
        var player: Player?
        if case .child(let id) = member, let index = playerIndex[id] { player = players[index] }

        switch phase {
        case .lobby:
            break
        case .preparing(let ready, let total):
            snapshot.preparing = Preparing(ready: ready, total: total)
        case .failed(let message):
            snapshot.error = message
        case .narrating(let run):
            snapshot.plan = planMessage(for: role, startAt: run.startedAt)
            snapshot.sentence = run.sentence
            snapshot.sentenceAt = run.startedAt
        case .question(let run):
            snapshot.question = questionView(run, for: role)
            if let player { snapshot.yourAnswer = answers[run.index][player.id]?.option }
        case .reveal(let index):
            // The question as it was asked (no longer open: no deadline), beside its reveal.
            snapshot.question = questionView(QuestionRun(index: index, opensAt: ServerTime(milliseconds: 0), deadline: nil, timeLimitMs: nil), for: role)
            snapshot.reveal = revealView(of: index, for: player)
        case .finished:
            let ranked = rankedPlayers()
            let podium = podium(ranked)
            snapshot.finished = player == nil
                ? Finished(podium: podium, you: nil, entries: entries(ranked[...], includeResults: true))
                : Finished(podium: podium, you: player.map { standing(of: $0, rank: rank(of: $0)) }, entries: nil)
        }
        if let player {
            snapshot.you = standing(of: player, rank: rank(of: player))
        } else {
            snapshot.players = lobby().players
            snapshot.scoreboard = board(includeResults: true)
        }
        return snapshot
    }

    private func revealView(of index: Int, for player: Player?) -> Reveal {
        let ranked = rankedPlayers()
        guard let player else {
            return revealMessage(of: index, distribution: distribution(of: index), top: entries(ranked[...], includeResults: true), for: nil, rank: 0)
        }
        return revealMessage(of: index, distribution: distribution(of: index), top: entries(ranked.prefix(timing.topCount), includeResults: false), for: player, rank: rank(of: player))
    }

    /// The reveal of question `index`: for a child, with their own result; for screens (`player` nil), without.
    func revealMessage(of index: Int, distribution: [Int], top: [ScoreboardEntry], for player: Player?, rank: Int) -> Reveal {
        let question = story.quiz.questions[index]
        let you = player.map { player in
            let answer = answers[index][player.id]
            let outcome = player.outcomes[index] ?? .missed
            return PlayerResult(option: answer?.option, outcome: outcome, points: outcome == .correct ? answer?.points ?? 0 : 0, standing: standing(of: player, rank: rank))
        }
        return Reveal(question: index, correctOption: question.answer, explanation: question.explanation, distribution: distribution, you: you, top: top)
    }

    /// Everyone ranked third or better (ties can make it more than three).
    func podium(_ ranked: [(rank: Int, index: Int)]) -> [ScoreboardEntry] {
        entries(ranked.prefix { $0.rank <= 3 }, includeResults: false)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
