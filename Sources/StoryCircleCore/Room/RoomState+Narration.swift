extension RoomState {
    /// Starts (or restarts) preparing the narration: the shell synthesises and reports back.
    mutating func prepare(at: ServerTime) -> [RoomDirective] {
        preparation += 1
        epoch += 1
        plan = nil
        let questions = settings.readQuestions && settings.narration != .off
            ? story.quiz.questions.map { ([$0.text] + $0.options).joined(separator: " … ") }
            : nil
        let total = story.sentences.count + (questions?.count ?? 0)
        phase = .preparing(ready: 0, total: total)
        var voice = story.narration
        if let override = settings.voice { voice.voice = override }
        let request = NarrationRequest(preparation: preparation, sentences: story.sentences, settings: voice, questions: questions)
        return [.persist(.phase(PhaseRecord(phase: .preparing, at: at)))]
            + sendToAll(.preparing(Preparing(ready: 0, total: total)))
            + [.prepareNarration(request)]
    }

    mutating func narrationUpdate(_ update: NarrationUpdate, at: ServerTime) -> [RoomDirective] {
        guard case .preparing = phase else { return [] }
        switch update {
        case .progress(let id, let ready, let total):
            guard id == preparation else { return [] }
            phase = .preparing(ready: ready, total: total)
            return sendToAll(.preparing(Preparing(ready: ready, total: total)))
        case .prepared(let id, let plan):
            guard id == preparation, !plan.sentences.isEmpty else { return [] }
            self.plan = plan
            let startAt = at + timing.planLeadMs
            return [.persist(.phase(PhaseRecord(phase: .narrating, at: at)))]
                + sendToAll { role in .narrationPlan(self.planMessage(for: role, startAt: startAt)) }
                + narrate(from: 0, startingAt: startAt)
        case .failed(let id, let problem):
            guard id == preparation else { return [] }
            epoch += 1
            phase = .failed(problem)
            return [.persist(.phase(PhaseRecord(phase: .error, at: at)))]
                + sendToAll { role in .narrationError(NarrationFailure(problem, for: role)) }
        }
    }

    /// Sentence `sentence` starts at `startAt` (announced now, ahead of time); the rest follow the plan.
    mutating func narrate(from sentence: Int, startingAt startAt: ServerTime) -> [RoomDirective] {
        epoch += 1
        let run = NarrationRun(sentence: sentence, startedAt: startAt, pausedAt: nil)
        phase = .narrating(run)
        return sendToAll(.progress(SentenceProgress(sentence: sentence, at: startAt))) + [scheduleBoundary(after: run)]
    }

    private func boundary(after run: NarrationRun) -> ServerTime {
        let duration = plan?.sentences[run.sentence].durationMs ?? 0
        return run.startedAt + duration + timing.sentenceGapMs
    }

    private func scheduleBoundary(after run: NarrationRun) -> RoomDirective {
        .schedule(.narration(sentence: run.sentence + 1, epoch: epoch), at: boundary(after: run))
    }

    mutating func narrationBoundary(sentence: Int, at: ServerTime) -> [RoomDirective] {
        guard case .narrating(var run) = phase, run.pausedAt == nil, sentence == run.sentence + 1, let plan else { return [] }
        let startAt = boundary(after: run)
        guard sentence < plan.sentences.count else {
            return completeNarration(at: at)
        }
        run.sentence = sentence
        run.startedAt = startAt
        phase = .narrating(run)
        return sendToAll(.progress(SentenceProgress(sentence: sentence, at: startAt))) + [scheduleBoundary(after: run)]
    }

    /// The story is over: tell everyone, and unlock the quiz for all at one instant, announced ahead.
    mutating func completeNarration(at: ServerTime) -> [RoomDirective] {
        preparation += 1
        let opensAt = at + timing.unlockLeadMs
        return sendToAll(.narrationComplete(Instant(at: at)))
            + sendToAll(.quizUnlock(QuizUnlock(at: opensAt, questionCount: story.quiz.questions.count)))
            + openQuestion(0, opensAt: opensAt, at: at)
    }

    mutating func pauseNarration(_ run: NarrationRun, at: ServerTime) -> [RoomDirective] {
        var run = run
        run.pausedAt = at
        epoch += 1
        phase = .narrating(run)
        return sendToAll(.paused(Paused(what: "narration", sentence: run.sentence, remainingMs: nil)))
    }

    /// Resuming restarts the interrupted sentence from its beginning: easier to follow than mid-word.
    mutating func resumeNarration(_ run: NarrationRun, at: ServerTime) -> [RoomDirective] {
        sendToAll(.resumed(Resumed())) + narrate(from: run.sentence, startingAt: at + timing.resumeLeadMs)
    }

    mutating func replayNarration(_ run: NarrationRun, at: ServerTime) -> [RoomDirective] {
        (run.pausedAt == nil ? [] : sendToAll(.resumed(Resumed()))) + narrate(from: 0, startingAt: at + timing.resumeLeadMs)
    }
}
