extension RoomState {
    mutating func openQuestion(_ index: Int, opensAt: ServerTime, at: ServerTime) -> [RoomDirective] {
        let question = story.quiz.questions[index]
        let timeLimitMs = settings.timer ? (question.timeLimit ?? settings.questionSeconds) * 1_000 : nil
        let run = QuestionRun(index: index, opensAt: opensAt, deadline: timeLimitMs.map { opensAt + $0 }, timeLimitMs: timeLimitMs)
        epoch += 1
        phase = .question(run)
        book.asked(index, at: at)
        countAnswers(to: index)
        var directives: [RoomDirective] = [.persist(.phase(PhaseRecord(phase: .question, question: index, at: at)))]
        directives += sendToAll { role in .question(self.questionView(run, for: role)) }
        if let deadline = run.deadline {
            directives.append(.schedule(.deadline(question: index, epoch: epoch), at: deadline + timing.answerGraceMs))
        }
        return directives + markScreensDirty(at: at)
    }

    mutating func answer(question index: Int, option: Int, from playerID: PlayerID, connection: ConnectionID, at: ServerTime, roundTripMs: Int) -> [RoomDirective] {
        // A question that does not exist was never open (and cannot have closed), whatever the phase.
        guard story.quiz.questions.indices.contains(index) else {
            return reply(connection, RoomError(.notOpen, "There is no question \(index) in this quiz."))
        }
        guard case .question(let run) = phase else {
            if case .reveal(let revealed) = phase, index <= revealed {
                return reply(connection, RoomError(.questionClosed, "That question has closed."))
            }
            if phase == .finished {
                return reply(connection, RoomError(.questionClosed, "The quiz has finished."))
            }
            return reply(connection, RoomError(.notOpen, "There is no question to answer right now."))
        }
        if index < run.index {
            return reply(connection, RoomError(.questionClosed, "That question has closed."))
        }
        if index > run.index {
            return reply(connection, RoomError(.notOpen, "That question is not open yet."))
        }
        if run.pausedAt != nil {
            return reply(connection, RoomError(.roomPaused, "The quiz is paused. Wait for your teacher."))
        }
        if at < run.opensAt {
            return reply(connection, RoomError(.notOpen, "The question has not opened yet."))
        }
        let question = story.quiz.questions[index]
        guard question.options.indices.contains(option) else {
            return reply(connection, RoomError(.invalidOption, "There is no option \(option) for this question."))
        }
        guard book.answer(of: playerID, to: index) == nil, let playerIndex = roster.index(of: playerID) else {
            return reply(connection, RoomError(.alreadyAnswered, "You have already answered this question; your first answer counts."))
        }
        // Half the round trip is how long the answer spent on the network: credit it, up to a bound, so
        // children on slow Wi-Fi are not penalised, and a client cannot claim unlimited delay.
        let credit = min(max(roundTripMs, 0) / 2, timing.answerGraceMs)
        let sentAt = at + (-credit)
        if let deadline = run.deadline, sentAt > deadline {
            return reply(connection, RoomError(.tooLate, "Time is up for this question."))
        }
        let elapsedMs = max(0, sentAt - run.opensAt - run.pausedMs)
        let correct = option == question.answer
        let points = settings.scoring.points(correct: correct, elapsedMs: elapsedMs, timeLimitMs: run.timeLimitMs, streakBefore: roster.players[playerIndex].streak)
        let record = AnswerRecord(player: playerID, question: index, option: option, receivedAt: at, elapsedMs: elapsedMs, correct: correct, points: points)
        book.accept(record, presence: roster.players[playerIndex].presence)
        // The acknowledgement says only that the answer counted, not whether it is right.
        return [.persist(.answer(record)), .send(.answerAck(AnswerAck(question: index, option: option)), to: [connection])]
            + markScreensDirty(at: at)
            + revealIfEveryoneAnswered(at: at)
    }

    /// How long a child who disconnected without answering the open question holds up its automatic
    /// reveal (`Player.graceUntil`): long enough for a page's quick reconnection, or a room's move to
    /// another node, to bring back a tap the page kept; short enough that a child who really left does not
    /// keep the class waiting. The teacher's reveal never waits for it.
    public static let reconnectGraceMs = 4_000

    /// Reveals the open question as soon as every connected child has answered it, and no child who has
    /// not is still within their reconnection grace; while one is, a timer looks again when the first grace
    /// runs out. A disconnected child who had answered does not hold anything up: their answer is kept.
    mutating func revealIfEveryoneAnswered(at: ServerTime) -> [RoomDirective] {
        guard case .question(let run) = phase, run.pausedAt == nil else { return [] }
        assert(book.countedQuestion == run.index, "the answer count is about question \(book.countedQuestion), not the open \(run.index)")
        guard roster.connected > 0, book.answeredHere == roster.connected else { return [] }
        // O(players), but only once everyone connected has answered, which happens about once per question.
        let answered = book.answers(to: run.index)
        var graceEnds: ServerTime?
        for player in roster.players where player.presence == .away && answered[player.id] == nil {
            guard let until = player.graceUntil, until > at else { continue }
            graceEnds = min(graceEnds ?? until, until)
        }
        if let graceEnds {
            return [.schedule(.reconnectGrace(question: run.index, epoch: epoch), at: graceEnds)]
        }
        return reveal(at: at)
    }

    mutating func reveal(at: ServerTime) -> [RoomDirective] {
        guard case .question(let run) = phase else { return [] }
        let index = run.index
        conclude(index, skipped: false)
        epoch += 1
        phase = .reveal(question: index)
        // The screens' reveal carries the whole board: a flush now would send the same board again (40 or
        // 2,000 entries per screen, in every room at once as a quiz's rooms reveal). Whatever changes
        // after this marks them dirty again.
        screens.sentEverything()
        return [.persist(.phase(PhaseRecord(phase: .reveal, question: index, at: at)))] + revealSends(of: index)
    }

    /// Question `index`'s reveal for every connection: each child's own, the screens' with the whole board.
    /// Not `mutating`, so that building a class's messages reads the state in place rather than copying it
    /// for each child.
    private func revealSends(of index: Int) -> [RoomDirective] {
        let distribution = distribution(of: index)
        let ranked = rankedPlayers()
        let top = childrenSeeOthers() ? entries(ranked.prefix(timing.topCount), includeResults: false) : []
        let ahead = placesAhead(ranked)
        var directives: [RoomDirective] = []
        directives.reserveCapacity(ranked.count + 2)
        for (position, (rank, playerIndex)) in ranked.enumerated() {
            guard let connection = roster.players[playerIndex].connection else { continue }
            let message = revealMessage(of: index, distribution: distribution, top: top, for: roster.players[playerIndex], rank: rank, ahead: ahead[position])
            directives.append(.send(.reveal(message), to: [connection]))
        }
        directives += sendToScreens { role in
            .reveal(revealMessage(of: index, distribution: distribution, top: entries(ranked[...], includeResults: showsResults(to: role)), for: nil, rank: 0, ahead: nil))
        }
        return directives
    }

    /// After question `index`: the next question, or the end.
    mutating func advance(after index: Int, at: ServerTime) -> [RoomDirective] {
        if index + 1 < story.quiz.questions.count {
            return openQuestion(index + 1, opensAt: at + timing.questionLeadMs, at: at)
        }
        return finish(at: at)
    }

    /// Closes the open question without scoring it, and moves on.
    mutating func skipQuestion(_ run: QuestionRun, at: ServerTime) -> [RoomDirective] {
        conclude(run.index, skipped: true)
        epoch += 1
        return [.persist(.phase(PhaseRecord(phase: .reveal, question: run.index, skipped: true, at: at)))] + advance(after: run.index, at: at)
    }

    mutating func pauseQuestion(_ run: QuestionRun, at: ServerTime) -> [RoomDirective] {
        var run = run
        run.pausedAt = at
        epoch += 1
        phase = .question(run)
        let remaining = run.deadline.map { max(0, $0 - max(at, run.opensAt)) }
        return sendToAll(.paused(Paused(what: "question", sentence: nil, remainingMs: remaining)))
    }

    mutating func resumeQuestion(_ run: QuestionRun, pausedAt: ServerTime, at: ServerTime) -> [RoomDirective] {
        var run = run
        let pause = max(0, at - pausedAt)
        if pausedAt < run.opensAt {
            run.opensAt = run.opensAt + pause
        } else {
            run.pausedMs += pause
        }
        run.deadline = run.deadline.map { $0 + pause }
        run.pausedAt = nil
        epoch += 1
        phase = .question(run)
        var directives = sendToAll(.resumed(Resumed(question: run.index, opensAt: run.opensAt, deadline: run.deadline)))
        if let deadline = run.deadline {
            directives.append(.schedule(.deadline(question: run.index, epoch: epoch), at: deadline + timing.answerGraceMs))
        }
        // Whoever had not answered may have left during the pause.
        return directives + revealIfEveryoneAnswered(at: at)
    }

    mutating func finish(at: ServerTime) -> [RoomDirective] {
        // Ended with a question open: the answers already given count, as its reveal would count them, so
        // that no report shows a right answer worth nothing. A question still in its lead was never
        // answerable: it stays unasked, as the questions after it.
        var concluding: [RoomDirective] = []
        if case .question(let run) = phase, book.concluded <= run.index, (run.pausedAt ?? at) >= run.opensAt {
            conclude(run.index, skipped: false)
            concluding.append(.persist(.phase(PhaseRecord(phase: .reveal, question: run.index, at: at))))
        }
        epoch += 1
        narration.stop()
        phase = .finished
        finishedAt = at
        return concluding + [.persist(.phase(PhaseRecord(phase: .finished, at: at))), .stopNarration] + podiumSends()
    }

    /// The podium for every connection: each child's with its own standing, the screens' with the whole
    /// board. Not `mutating`, for the reason `revealSends(of:)` is not.
    private func podiumSends() -> [RoomDirective] {
        let ranked = rankedPlayers()
        let podium = podium(ranked)
        let ahead = placesAhead(ranked)
        var directives: [RoomDirective] = []
        directives.reserveCapacity(ranked.count + 2)
        for (position, (rank, playerIndex)) in ranked.enumerated() {
            guard let connection = roster.players[playerIndex].connection else { continue }
            let message = Finished(podium: childrenSeeOthers() ? podium.entries : [], podiumMore: childrenSeeOthers() ? podium.more : nil,
                                   you: standing(of: roster.players[playerIndex], rank: rank, ahead: ahead[position]), entries: nil)
            directives.append(.send(.finished(message), to: [connection]))
        }
        directives += sendToScreens { role in
            .finished(Finished(podium: podium.entries, podiumMore: podium.more, you: nil, entries: entries(ranked[...], includeResults: showsResults(to: role))))
        }
        return directives
    }

    /// Applies the outcome of question `index` to every player, once: at its reveal or skip, or when a restart replays them.
    mutating func conclude(_ index: Int, skipped isSkipped: Bool) {
        guard story.quiz.questions.indices.contains(index) else { return }
        roster.conclude(index, answers: book.answers(to: index), skipped: isSkipped)
        book.conclude(index, skipped: isSkipped)
    }
}
