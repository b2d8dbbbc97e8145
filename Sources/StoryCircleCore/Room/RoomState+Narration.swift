extension RoomState {
    /// Starts (or restarts) preparing the narration: the shell synthesises and reports back.
    mutating func prepare(at: ServerTime) -> [RoomDirective] {
        let preparation = narration.begin()
        epoch += 1
        let questions = settings.readQuestions && settings.narration != .off
            ? story.quiz.questions.map { ([$0.text] + $0.options).joined(separator: " … ") }
            : nil
        let total = story.sentences.count + (questions?.count ?? 0)
        phase = .preparing(ready: 0, total: total)
        let request = NarrationRequest(preparation: preparation, sentences: story.sentences, settings: narrationSettings, questions: questions)
        return [.persist(.phase(PhaseRecord(phase: .preparing, at: at)))]
            + sendToAll(.preparing(Preparing(ready: 0, total: total)))
            + [.prepareNarration(request)]
    }

    /// How the story will be read: the story's voice, or the one the room chose instead.
    var narrationSettings: NarrationSettings {
        var voice = story.narration
        if let override = settings.voice { voice.voice = override }
        return voice
    }

    /// A room in its lobby (just created, or brought back on this node: its audio cache is this node's)
    /// has its story read ahead with its voice while the children join.
    public var lobbyReadAhead: [RoomDirective] {
        guard case .lobby = phase else { return [] }
        return [.readAhead(NarrationRequest(preparation: narration.preparation, sentences: story.sentences, settings: narrationSettings, questions: nil))]
    }

    /// The story read ahead again, when a change in the lobby gave it another voice.
    func readAhead(unless before: NarrationSettings) -> [RoomDirective] {
        narrationSettings != before ? lobbyReadAhead : []
    }

    /// The clips a preparation makes: every sentence, and each question when they are read aloud.
    private var clipCount: Int {
        story.sentences.count + (settings.readQuestions && settings.narration != .off ? story.quiz.questions.count : 0)
    }

    mutating func narrationUpdate(_ update: NarrationUpdate, at: ServerTime) -> [RoomDirective] {
        switch update {
        case .progress(let id, let ready, let total):
            guard narration.isCurrent(id), case .preparing = phase else { return [] }
            phase = .preparing(ready: ready, total: total)
            return sendToAll(.preparing(Preparing(ready: ready, total: total)))
        case .sentence(let id, let sentence, let notice):
            guard narration.isCurrent(id) else { return [] }
            return sentenceReady(sentence, notice: notice, at: at)
        case .restarted(let id):
            guard narration.isCurrent(id), isPreparingNarration else { return [] }
            return restartPreparation(at: at)
        case .prepared(let id, let plan):
            guard narration.isCurrent(id), !plan.sentences.isEmpty else { return [] }
            switch phase {
            case .preparing:
                narration.adopt(plan)
                let startAt = at + timing.planLeadMs
                return [.persist(.phase(PhaseRecord(phase: .narrating, at: at)))]
                    + sendToAll { role in .narrationPlan(self.planMessage(for: role, startAt: startAt)) }
                    + narrate(from: 0, startingAt: startAt)
            case .narrating(let run) where narration.isStreaming:
                return planCompleted(plan, run: run, at: at)
            default:
                return []
            }
        case .failed(let id, let problem):
            guard narration.isCurrent(id), isPreparingNarration else { return [] }
            epoch += 1
            narration.discard()
            phase = .failed(problem)
            return [.persist(.phase(PhaseRecord(phase: .error, at: at)))]
                + sendToAll { role in .narrationError(NarrationFailure(problem, for: role)) }
        }
    }

    /// Preparing, or narrating a story whose later sentences are still being synthesised.
    private var isPreparingNarration: Bool {
        switch phase {
        case .preparing: true
        case .narrating: narration.isStreaming
        default: false
        }
    }

    /// A streamed sentence is ready. The first starts the story (announced ahead, as a whole plan would
    /// be); a later one goes to every screen, and starts at once if the story was waiting for it.
    private mutating func sentenceReady(_ sentence: NarratedSentence, notice: NarrationNotice?, at: ServerTime) -> [RoomDirective] {
        switch phase {
        case .preparing:
            guard sentence.index == 0, story.sentences.count > 0 else { return [] }
            narration.startStreaming(sentence, notice: notice)
            let startAt = at + timing.planLeadMs
            return [.persist(.phase(PhaseRecord(phase: .narrating, at: at)))]
                + sendToAll { role in .narrationPlan(self.planMessage(for: role, startAt: startAt)) }
                + narrate(from: 0, startingAt: startAt)
        case .narrating(var run) where narration.isStreaming:
            guard narration.append(sentence, storyLength: story.sentences.count) else { return [] }
            let ready = narration.sentenceCount, total = story.sentences.count
            var directives = sendToAll { role in
                .narrationSentence(NarrationSentenceMessage(sentence: self.plays(role) ? sentence : sentence.silent, ready: ready, total: total))
            }
            if run.waiting, run.pausedAt == nil, sentence.index == run.sentence + 1 {
                run.waiting = false
                run.sentence = sentence.index
                run.startedAt = at + timing.lateSentenceLeadMs
                epoch += 1
                phase = .narrating(run)
                directives += sendToAll(.progress(SentenceProgress(sentence: run.sentence, at: run.startedAt))) + [scheduleBoundary(after: run)]
            }
            return directives
        default:
            return []
        }
    }

    /// The streamed plan is whole (the question audio with it): a story waiting at its end goes on.
    private mutating func planCompleted(_ whole: NarrationPlan, run: NarrationRun, at: ServerTime) -> [RoomDirective] {
        var run = run
        var directives: [RoomDirective] = []
        let (added, lateNotice) = narration.complete(with: whole)
        // Sentences the stream had not reported yet (a narrator may report only some) reach the screens now.
        for (index, sentence) in zip(added.indices, added) {
            let ready = index + 1, total = whole.sentences.count
            directives += sendToAll { role in
                .narrationSentence(NarrationSentenceMessage(sentence: self.plays(role) ? sentence : sentence.silent, ready: ready, total: total))
            }
        }
        if let lateNotice {
            // Known only now (the natural voice failed on a question after the story was read): the
            // teacher is told at once, not with whatever full update comes next.
            let teachers = audience.teachers
            if !teachers.isEmpty { directives.append(.send(.narrationNotice(lateNotice), to: teachers)) }
        }
        guard run.waiting, run.pausedAt == nil else { return directives }
        guard run.sentence + 1 < narration.sentenceCount else { return directives + completeNarration(at: at) }
        run.waiting = false
        run.sentence += 1
        run.startedAt = at + timing.lateSentenceLeadMs
        epoch += 1
        phase = .narrating(run)
        return directives + sendToAll(.progress(SentenceProgress(sentence: run.sentence, at: run.startedAt))) + [scheduleBoundary(after: run)]
    }

    /// The narrator reads the story again from its first sentence with another voice: every screen goes
    /// back to "getting the story ready" and the story starts over when that voice's first sentence is.
    private mutating func restartPreparation(at: ServerTime) -> [RoomDirective] {
        epoch += 1
        narration.discard()
        let total = clipCount
        phase = .preparing(ready: 0, total: total)
        return [.persist(.phase(PhaseRecord(phase: .preparing, at: at)))]
            + sendToAll(.preparing(Preparing(ready: 0, total: total)))
    }

    /// Sentence `sentence` starts at `startAt` (announced now, ahead of time); the rest follow the plan.
    mutating func narrate(from sentence: Int, startingAt startAt: ServerTime) -> [RoomDirective] {
        epoch += 1
        let run = NarrationRun(sentence: sentence, startedAt: startAt, pausedAt: nil)
        phase = .narrating(run)
        return sendToAll(.progress(SentenceProgress(sentence: sentence, at: startAt))) + [scheduleBoundary(after: run)]
    }

    private func boundary(after run: NarrationRun) -> ServerTime {
        let duration = narration.duration(of: run.sentence)
        return run.startedAt + duration + timing.sentenceGapMs
    }

    private func scheduleBoundary(after run: NarrationRun) -> RoomDirective {
        .schedule(.narration(sentence: run.sentence + 1, epoch: epoch), at: boundary(after: run))
    }

    mutating func narrationBoundary(sentence: Int, at: ServerTime) -> [RoomDirective] {
        guard case .narrating(var run) = phase, run.pausedAt == nil, !run.waiting, sentence == run.sentence + 1, narration.plan != nil else { return [] }
        let startAt = boundary(after: run)
        guard sentence < narration.sentenceCount else {
            guard narration.isStreaming else { return completeNarration(at: at) }
            // The next sentence (or the question audio) is still being synthesised: hold here, never cut
            // a sentence or start the quiz early; it starts when it arrives.
            run.waiting = true
            phase = .narrating(run)
            return []
        }
        run.sentence = sentence
        run.startedAt = startAt
        phase = .narrating(run)
        return sendToAll(.progress(SentenceProgress(sentence: sentence, at: startAt))) + [scheduleBoundary(after: run)]
    }

    /// The story is over: tell everyone, and unlock the quiz for all at one instant, announced ahead.
    mutating func completeNarration(at: ServerTime) -> [RoomDirective] {
        narration.stop()
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
