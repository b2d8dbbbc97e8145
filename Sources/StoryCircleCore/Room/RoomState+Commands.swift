extension RoomState {
    /// Carries out a teacher's command, or explains why it cannot be done now (and changes nothing).
    public mutating func perform(_ command: TeacherCommand, at: ServerTime) throws(RoomError) -> [RoomDirective] {
        switch command {
        case .start:
            switch phase {
            case .lobby, .failed: return prepare(at: at)
            case .finished: throw Self.ended
            default: throw RoomError(.invalidCommand, "The room has already started.")
            }
        case .retry:
            guard case .failed = phase else {
                throw RoomError(.invalidCommand, "Retry is for when the narration could not be prepared, and nothing has failed.")
            }
            return prepare(at: at)
        case .pause:
            switch phase {
            case .narrating(let run) where run.pausedAt == nil: return pauseNarration(run, at: at)
            case .question(let run) where run.pausedAt == nil: return pauseQuestion(run, at: at)
            case .narrating, .question: throw RoomError(.invalidCommand, "The room is already paused.")
            default: throw RoomError(.invalidCommand, "Nothing is playing that could be paused.")
            }
        case .resume:
            switch phase {
            case .narrating(let run) where run.pausedAt != nil: return resumeNarration(run, at: at)
            case .question(let run) where run.pausedAt != nil:
                return resumeQuestion(run, pausedAt: run.pausedAt ?? at, at: at)
            default: throw RoomError(.invalidCommand, "The room is not paused.")
            }
        case .replay:
            guard case .narrating(let run) = phase else {
                throw RoomError(.invalidCommand, "Replay works while the story is being told.")
            }
            return replayNarration(run, at: at)
        case .reveal:
            guard case .question = phase else {
                throw RoomError(.invalidCommand, "There is no open question to reveal.")
            }
            return reveal(at: at)
        case .next:
            switch phase {
            case .reveal(let index): return advance(after: index, at: at)
            case .question: return reveal(at: at)
            case .lobby: throw RoomError(.invalidCommand, "The room has not started yet; use start.")
            case .finished: throw Self.ended
            default: throw RoomError(.invalidCommand, "The story is still being prepared or told; use skip to go straight to the quiz.")
            }
        case .skip:
            switch phase {
            case .preparing, .failed, .narrating: return completeNarration(at: at)
            case .question(let run): return skipQuestion(run, at: at)
            case .reveal(let index): return advance(after: index, at: at)
            case .lobby: throw RoomError(.invalidCommand, "The room has not started yet; use start.")
            case .finished: throw Self.ended
            }
        case .lock, .unlock:
            guard phase != .finished else { throw Self.ended }
            isLocked = command == .lock
            return [.persist(.roomUpdated(settings: settings, locked: isLocked, at: at))] + sendToAll(.room(status))
        case .end:
            guard phase != .finished else { throw Self.ended }
            return finish(at: at)
        case .kick(let player):
            return try kick(player, block: false, at: at)
        case .block(let player):
            return try kick(player, block: true, at: at)
        case .settings(let patch):
            switch phase {
            case .lobby, .failed: break
            case _ where patch.changesOnlyDisplay: break
            default: throw RoomError(.settingsLocked, "Settings can only change in the lobby, before the story starts (or after the narration failed).")
            }
            let before = settings
            settings = try settings.applying(patch)
            // Turning the answer grid on sends dashboards the results they were not given while it was off.
            let refresh = settings.answerGrid != before.answerGrid ? markScreensDirty(at: at) : []
            return [.persist(.roomUpdated(settings: settings, locked: isLocked, at: at))] + sendToAll(.room(status)) + refresh
        }
    }

    private static let ended = RoomError(.roomEnded, "This room has already ended.")

    var status: RoomStatus { RoomStatus(locked: isLocked, settings: settings) }
}
