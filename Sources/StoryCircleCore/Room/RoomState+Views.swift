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
        let plan = narration.plan
        let sentences = (plays ? plan : plan?.silent)?.sentences ?? []
        var message = NarrationPlanMessage(
            startAt: startAt, gapMs: timing.sentenceGapMs, mode: settings.narration, playsAudio: plays, sentences: sentences,
            notice: role == .teacher ? plan?.notice : nil
        )
        let pictures = story.sentencePictures.indices.compactMap { index in
            PictureView(story.sentencePictures[index]).map { SentencePictureView(sentence: index, picture: $0) }
        }
        if !pictures.isEmpty { message.pictures = pictures }
        if narration.isStreaming { message.total = story.sentences.count }
        return message
    }

    func questionView(_ run: QuestionRun, for role: Role) -> QuestionView {
        let question = story.quiz.questions[run.index]
        let audio = plays(role) ? narration.plan?.questionAudio?[safe: run.index] : nil
        var view = QuestionView(index: run.index, count: story.quiz.questions.count, text: question.text, options: question.options, opensAt: run.opensAt, deadline: run.deadline, timeLimitMs: run.timeLimitMs, audio: audio)
        view.picture = PictureView(question.picture)
        let optionPictures = question.optionPictures.compactMap(PictureView.init)
        if !optionPictures.isEmpty, optionPictures.count == question.options.count { view.optionPictures = optionPictures }
        return view
    }

    /// Active players ranked by score (ties share a rank), as indices into `players`.
    func rankedPlayers() -> [(rank: Int, index: Int)] {
        // A name given back before any answer was a wrong tap: nobody to rank (a child released after
        // answering keeps their place and points until their name is picked again).
        let active = roster.players.indices.filter { !roster.players[$0].kicked && !(roster.players[$0].released && !hasAnswered(roster.players[$0].id)) }
        return Scoreboard.rank(active, score: { roster.players[$0].score }, sortName: { roster.players[$0].sortName })
            .map { (rank: $0.rank, index: $0.player) }
    }

    /// A player's rank (one more than the number of players ahead of them) and the place just ahead, in one
    /// pass and without sorting everyone. A welcome computes it for every child who joins, so the pass reads
    /// two fields of each player in place: iterating copied each whole `Player`, which made a class of
    /// thousands joining quadratic in copies (docs/performance.md, "Joining").
    func place(of player: Player) -> (rank: Int, ahead: PlaceAhead?) {
        // Points are added only when a question is concluded: before that, nobody is ahead of anybody.
        guard book.concluded > 0 else { return (1, nil) }
        let score = player.score
        return roster.players.withUnsafeBufferPointer { players in
            var ahead = 0
            var best: Int?
            for index in players.indices where !players[index].kicked && players[index].score > score {
                ahead += 1
                guard let current = best else { best = index; continue }
                let other = players[index].score, currentScore = players[current].score
                if other < currentScore || (other == currentScore && players[index].sortName < players[current].sortName) {
                    best = index
                }
            }
            return (1 + ahead, best.map { PlaceAhead(nickname: players[$0].nickname, points: players[$0].score - score) })
        }
    }

    func results(of player: Player) -> [QuestionOutcome] {
        results(player.outcomes)
    }

    private func results(_ outcomes: [Int: QuestionOutcome]) -> [QuestionOutcome] {
        (0..<book.concluded).map { outcomes[$0] ?? .missed }
    }

    /// A child's standing: their own score, streak and results; their place and the classmate just ahead
    /// only in a competitive room (a child is never told a named classmate leads unless the teacher chose it).
    func standing(of player: Player, rank: Int, ahead: PlaceAhead?) -> PlayerStanding {
        let competitive = settings.competitive
        return PlayerStanding(score: player.score, rank: competitive ? rank : nil, streak: player.streak, results: results(of: player),
                              ahead: competitive ? ahead : nil)
    }

    /// The classmates a child's reveal and end screen name (the top of the class, the podium): none unless
    /// the room is competitive. Screens (the projector, the teacher) always get them.
    func childrenSeeOthers() -> Bool {
        settings.competitive
    }

    func standing(of player: Player, place: (rank: Int, ahead: PlaceAhead?)) -> PlayerStanding {
        standing(of: player, rank: place.rank, ahead: place.ahead)
    }

    /// For each position of `ranked` (sorted by score, highest first), the first player of the nearest
    /// group with a higher score: one pass for a whole class.
    func placesAhead(_ ranked: [(rank: Int, index: Int)]) -> [PlaceAhead?] {
        var places: [PlaceAhead?] = []
        places.reserveCapacity(ranked.count)
        var groupStart = 0
        var previousGroupStart: Int?
        for position in ranked.indices {
            let score = roster.players[ranked[position].index].score
            if position > 0, score != roster.players[ranked[position - 1].index].score {
                previousGroupStart = groupStart
                groupStart = position
            }
            places.append(previousGroupStart.map { start in
                let ahead = roster.players[ranked[start].index]
                return PlaceAhead(nickname: ahead.nickname, points: ahead.score - score)
            })
        }
        return places
    }

    /// Whether a screen gets each child's right and wrong answers: the teacher always, the projector only
    /// when the teacher turned the answer grid on.
    func showsResults(to role: Role) -> Bool {
        role == .teacher || settings.answerGrid
    }

    /// Reads each player's fields in place: taking `players[index]` as a value copies the whole `Player`
    /// (strings, arrays, a dictionary), for every child of every screen's board a few times a second.
    func entries(_ ranked: ArraySlice<(rank: Int, index: Int)>, includeResults: Bool, answered question: Int? = nil) -> [ScoreboardEntry] {
        let answered = question.map { book.answers(to: $0) }
        return roster.players.withUnsafeBufferPointer { players in
            ranked.map { rank, index in
                ScoreboardEntry(
                    rank: rank, id: players[index].id.rawValue, nickname: players[index].nickname, score: players[index].score,
                    streak: players[index].streak, connected: players[index].connection != nil,
                    answered: answered.map { $0[players[index].id] != nil },
                    results: includeResults ? results(players[index].outcomes) : []
                )
            }
        }
    }

    /// Why the narration failed, as `role` should read it: the reason for the teacher, and for children and
    /// the projector a kind sentence with nothing technical in it.

    /// The whole board, for screens; while a question is open each entry says whether that child answered.
    func board(includeResults: Bool, ranked: [(rank: Int, index: Int)]? = nil) -> [ScoreboardEntry] {
        var openQuestion: Int?
        if case .question(let run) = phase { openQuestion = run.index }
        return entries((ranked ?? rankedPlayers())[...], includeResults: includeResults, answered: openQuestion)
    }

    /// How many active players chose each option of question `index`.
    func distribution(of index: Int) -> [Int] {
        var counts = Array(repeating: 0, count: story.quiz.questions[index].options.count)
        for answer in book.answers(to: index).values where roster.index(of: answer.player).map({ !roster.players[$0].kicked }) == true {
            counts[answer.option] += 1
        }
        return counts
    }

    func answerProgress() -> AnswerProgress? {
        guard case .question(let run) = phase else { return nil }
        let answered = book.answers(to: run.index).keys.count { roster.index(of: $0).map { !roster.players[$0].kicked && !roster.players[$0].released } == true }
        return AnswerProgress(question: run.index, answered: answered, total: playerCount)
    }

    func lobby() -> Lobby {
        // A name given back is held by nobody: listed again once a child picks it.
        let list = roster.players.filter { !$0.kicked && !$0.released }.map { LobbyPlayer(id: $0.id.rawValue, nickname: $0.nickname, connected: $0.connection != nil) }
        return Lobby(players: list, count: list.count)
    }

    /// The room as `member` should see it on arrival.
    func snapshot(for member: Member) -> RoomSnapshot {
        let role = member.role
        var snapshot = RoomSnapshot(
            code: code.rawValue, title: story.title, phase: phase.name, paused: phase.isPaused, locked: isLocked,
            settings: settings, language: language, questionCount: story.quiz.questions.count, playerCount: playerCount
        )
        var player: Player?
        if case .child(let id) = member, let index = roster.index(of: id) { player = roster.players[index] }

        switch phase {
        case .lobby:
            break
        case .preparing(let ready, let total):
            snapshot.preparing = Preparing(ready: ready, total: total)
        case .failed(let problem):
            let failure = NarrationFailure(problem, for: role)
            snapshot.error = failure.message
            snapshot.errorReason = failure.reason
            snapshot.errorParams = failure.params
        case .narrating(let run):
            snapshot.plan = planMessage(for: role, startAt: run.startedAt)
            snapshot.sentence = run.sentence
            snapshot.sentenceAt = run.startedAt
        case .question(let run):
            snapshot.question = questionView(run, for: role)
            if let player { snapshot.yourAnswer = book.answer(of: player.id, to: run.index)?.option }
        case .reveal(let index):
            // The question as it was asked (no longer open: no deadline), beside its reveal.
            snapshot.question = questionView(QuestionRun(index: index, opensAt: ServerTime(milliseconds: 0), deadline: nil, timeLimitMs: nil), for: role)
            snapshot.reveal = revealView(of: index, for: player, role: role)
        case .finished:
            let ranked = rankedPlayers()
            let podium = podium(ranked)
            snapshot.finished = player == nil
                ? Finished(podium: podium.entries, podiumMore: podium.more, you: nil, entries: entries(ranked[...], includeResults: showsResults(to: role)))
                : Finished(podium: childrenSeeOthers() ? podium.entries : [], podiumMore: childrenSeeOthers() ? podium.more : nil,
                           you: player.map { standing(of: $0, place: place(of: $0)) }, entries: nil)
        }
        if role == .teacher { snapshot.schoolClass = rosterView }
        if let player {
            snapshot.you = standing(of: player, place: place(of: player))
        } else {
            snapshot.players = lobby().players
            snapshot.scoreboard = board(includeResults: showsResults(to: role))
        }
        if role == .teacher { snapshot.commands = allowedCommands.map(\.rawValue) }
        return snapshot
    }

    private func revealView(of index: Int, for player: Player?, role: Role) -> Reveal {
        let ranked = rankedPlayers()
        guard let player else {
            return revealMessage(of: index, distribution: distribution(of: index), top: entries(ranked[...], includeResults: showsResults(to: role)), for: nil, rank: 0, ahead: nil)
        }
        let place = place(of: player)
        return revealMessage(
            of: index, distribution: distribution(of: index), top: childrenSeeOthers() ? entries(ranked.prefix(timing.topCount), includeResults: false) : [],
            for: player, rank: place.rank, ahead: place.ahead
        )
    }

    /// The reveal of question `index`: for a child, with their own result; for screens (`player` nil), without.
    func revealMessage(of index: Int, distribution: [Int], top: [ScoreboardEntry], for player: Player?, rank: Int, ahead: PlaceAhead?) -> Reveal {
        let question = story.quiz.questions[index]
        let you = player.map { player in
            let answer = book.answer(of: player.id, to: index)
            let outcome = player.outcomes[index] ?? .missed
            return PlayerResult(
                option: answer?.option, outcome: outcome, points: outcome == .correct ? answer?.points ?? 0 : 0,
                standing: standing(of: player, rank: rank, ahead: ahead)
            )
        }
        return Reveal(question: index, correctOption: question.answer, explanation: question.explanation, distribution: distribution, you: you, top: top)
    }

    /// The first three places, among those who scored, in board order, naming at most `timing.podiumCount`
    /// players; `more` counts the others who share the last place named. Nobody stands on the podium with
    /// 0 points: a place there is for something done, not for being there.
    ///
    /// Bounded because every child's `finished` carries it: with ties (equal scores share a place) the
    /// first three places could hold the whole class, 2,000 names in each of 2,000 messages. Only the last
    /// place named can be cut short: any place after it would come after more than `podiumCount` players,
    /// so it is no podium place.
    func podium(_ ranked: [(rank: Int, index: Int)]) -> (entries: [ScoreboardEntry], more: PodiumMore?) {
        let placed = ranked.prefix { $0.rank <= 3 && roster.players[$0.index].score > 0 }
        let named = placed.prefix(max(timing.podiumCount, 3))
        let more = named.last.flatMap { last in placed.count > named.count ? PodiumMore(rank: last.rank, count: placed.count - named.count) : nil }
        return (entries(named, includeResults: false), more)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
