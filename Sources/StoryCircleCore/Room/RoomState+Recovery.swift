extension RoomState {
    /// Rebuilds a room from what was stored, after a restart. Players come back disconnected and rejoin with
    /// their resume tokens; scores are recomputed from the stored answers.
    ///
    /// Where the room was decides where it resumes (documented in `docs/operations.md`):
    /// - lobby, reveal, finished: exactly there;
    /// - preparing or narrating: narration is prepared again and restarts from the first sentence (the audio
    ///   cache makes that instant);
    /// - a failed narration: the error state, so the teacher can retry;
    /// - an open question: reopened with its full time limit, starting `timing.recoveryLeadMs` after the
    ///   restart so children have time to reconnect; answers already given stand and cannot be changed.
    public static func restore(_ archive: RoomArchive, timing: RoomTiming = .init(), at now: ServerTime) -> (RoomState, [RoomDirective]) {
        let header = archive.header
        var state = RoomState(code: header.code, story: header.story, settings: archive.settings, credentials: header.credentials, timing: timing)
        state.isLocked = archive.locked
        for record in archive.players {
            state.add(Player(id: record.id, nickname: record.nickname, tokenHash: record.tokenHash, joinedAt: record.joinedAt, connection: nil, kicked: archive.kicked.contains(record.id), blocked: archive.blocked.contains(record.id)))
            if let number = Int(record.id.dropFirst()) { state.nextPlayerNumber = max(state.nextPlayerNumber, number + 1) }
        }
        for answer in archive.answers where state.answers.indices.contains(answer.question) {
            state.answers[answer.question][answer.player] = answer
        }
        // Replay the concluded questions in order, so streaks and scores come out as they were.
        var concludedQuestions: [(index: Int, skipped: Bool)] = []
        for record in archive.phases where record.phase == .reveal {
            if let index = record.question, !concludedQuestions.contains(where: { $0.index == index }) {
                concludedQuestions.append((index, record.skipped))
            }
        }
        for (index, skipped) in concludedQuestions.sorted(by: { $0.index < $1.index }) {
            state.conclude(index, skipped: skipped)
        }

        guard let last = archive.phases.last else { return (state, []) }
        let directives = state.resume(after: last, at: now)
        return (state, directives)
    }

    /// Puts a restored room back where `last` left it; returns what that start-up needs.
    private mutating func resume(after last: PhaseRecord, at now: ServerTime) -> [RoomDirective] {
        switch last.phase {
        case .lobby:
            return []
        case .preparing, .narrating:
            return prepare(at: now)
        case .error:
            phase = .failed(message: "The narration was not ready when the server restarted. Press retry to prepare it again.")
            return []
        case .question:
            let index = last.question ?? concluded
            guard story.quiz.questions.indices.contains(index) else { return finish(at: now) }
            return openQuestion(index, opensAt: now + timing.recoveryLeadMs, at: now)
        case .reveal:
            phase = .reveal(question: last.question ?? max(0, concluded - 1))
            return []
        case .finished:
            phase = .finished
            return []
        }
    }
}
