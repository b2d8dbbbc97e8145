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
    public static func restore(
        _ archive: RoomArchive, timing: RoomTiming = .init(), lookalikes: any ConfusableSkeleton, classRoster: ClassRoster? = nil, at now: ServerTime
    ) -> (RoomState, [RoomDirective]) {
        let header = archive.header
        // A class room whose class is gone (deleted after the room finished) still knows it was one.
        let roster = classRoster ?? header.classID.map { ClassRoster(id: $0, name: "", members: []) }
        var state = RoomState(code: RoomCode(header.code), story: header.story, settings: archive.settings, credentials: header.credentials, timing: timing, lookalikes: lookalikes, classRoster: roster)
        state.isLocked = archive.locked
        state.roster = PlayerRoster(lookalikes: lookalikes, releasedTokens: archive.releasedTokenHashes)
        for record in archive.players {
            state.add(Player(
                id: record.id, nickname: record.nickname, tokenHash: record.tokenHash, joinedAt: record.joinedAt, member: record.member, connection: nil,
                kicked: archive.kicked.contains(record.id), blocked: archive.blocked.contains(record.id), released: archive.released.contains(record.id)
            ))
        }
        for answer in archive.answers {
            state.accept(answer)
        }
        for record in archive.phases where record.phase == .question {
            if let index = record.question { state.book.asked(index, at: record.at) }
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
        // Rooms kept before an end recorded the open question's reveal: their answers count all the same.
        if archive.phases.last?.phase == .finished, let ended = archive.phases.dropLast().last, ended.phase == .question,
           let index = ended.question, !concludedQuestions.contains(where: { $0.index == index }), !state.book.answers(to: index).isEmpty {
            state.conclude(index, skipped: false)
        }

        guard let last = archive.phases.last else { return (state, state.lobbyReadAhead) }
        // Restoring writes nothing: what it does, a second restore would do again from the same records.
        // (So a room rebuilt while storage is failing has no write to wait for before it answers.) The one
        // exception is a stored question that no longer exists, where the room ends: that is a change.
        let directives = state.resume(after: last, at: now).filter { directive in
            guard case .persist(let record) = directive else { return true }
            if case .phase(let phase) = record, phase.phase == .finished, last.phase != .finished { return true }
            return false
        }
        // Every child is reconnecting now (the room moved, or its server restarted): a reopened question
        // waits for them as for children who just dropped, from the moment it opens again.
        if case .question(let run) = state.phase {
            state.roster.holdAll(until: run.opensAt + Self.reconnectGraceMs)
        }
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
            phase = .failed(.notReadyAfterRestart)
            return []
        case .question:
            let index = last.question ?? book.concluded
            guard story.quiz.questions.indices.contains(index) else { return finish(at: now) }
            return openQuestion(index, opensAt: now + timing.recoveryLeadMs, at: now)
        case .reveal:
            phase = .reveal(question: last.question ?? max(0, book.concluded - 1))
            return []
        case .finished:
            phase = .finished
            finishedAt = last.at
            return []
        }
    }
}

extension RoomState {
    /// Where a connection stands after its room was rebuilt from storage. `self` is the room as restored
    /// from its store (`restore`: exactly what a restart would give), `previous` the room as it was in
    /// memory when the shell gave up writing its records, `connections` every connection the shell still
    /// holds for the room. The store is the truth, so each one is told what it holds:
    /// - teachers and dashboards: a fresh `welcome`;
    /// - a child whose player is stored: a fresh `welcome` (no token: the page has it), then
    ///   `storage_unavailable` if an answer of theirs was lost: it is not in the rebuilt room, so the
    ///   question is open to them again;
    /// - a child whose join was lost, and a connection whose refusal was lost with the records before it:
    ///   `storage_unavailable` and close 1013 (try again later).
    ///
    /// `gone`, when the store dropped players on purpose (a child's data erased): what a child whose player
    /// is no longer stored at all is told, refused and closed, instead of "try again later".
    public mutating func reattach(_ connections: [ConnectionID], from previous: RoomState, at: ServerTime, gone: RoomError? = nil) -> [RoomDirective] {
        storeProblem = previous.storeProblem
        book.keepRoundTrips(of: connections, from: previous.book)
        var directives: [RoomDirective] = []
        for connection in connections.sorted() where audience[connection] == nil {
            switch previous.audience[connection] {
            case .teacher?:
                directives += admitScreen(connection, role: .teacher, at: at)
            case .dashboard?:
                directives += admitScreen(connection, role: .dashboard, at: at)
            case .child(let id)?:
                guard let index = roster.index(of: id), !roster.players[index].kicked,
                      let before = previous.roster.index(of: id).map({ previous.roster.players[$0] }), before.tokenHash == roster.players[index].tokenHash
                else {
                    if let gone, roster.index(of: id) == nil {
                        directives += refuse(connection, gone)
                        continue
                    }
                    directives += Self.storageLost([connection], RoomError(.storageUnavailable, "We could not save your place in the room just now. Please try again in a moment."))
                    continue
                }
                connect(index, to: connection)
                audience.admit(connection, as: .child(playerID: id))
                let welcome = Welcome(role: .child, player: PlayerInfo(id: id.rawValue, nickname: roster.players[index].nickname), token: nil, serverTime: at, room: snapshot(for: .child(playerID: id)))
                directives.append(.send(.welcome(welcome), to: [connection]))
                let lostAnswer = book.lacksAnswer(of: id, keptIn: previous.book)
                if lostAnswer {
                    directives += reply(connection, RoomError(.storageUnavailable, "Your answer could not be saved yet — tap again."))
                }
            case nil where previous.picking.isPicking(connection):
                // A name-picker had nothing stored to lose: it goes on picking, from the names as stored.
                picking.add(connection)
                directives.append(.send(.names(namesList), to: [connection]))
            case nil:
                directives += Self.storageLost([connection], RoomError(.storageUnavailable, "The room could not save its work just now. Please try again in a moment."))
            }
        }
        return directives
    }

    /// Telling connections that they cannot go on for now: the error, then close 1013, "try again later".
    static func storageLost(_ connections: [ConnectionID], _ error: RoomError) -> [RoomDirective] {
        connections.sorted().flatMap { connection -> [RoomDirective] in
            [.send(.error(error), to: [connection]), .close(connection, CloseReason(ErrorCode.storageUnavailable))]
        }
    }
}
