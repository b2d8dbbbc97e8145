extension RoomState {
    /// What a command does in a phase. `plan(_:phase:locked:)` is the only place that decides whether a
    /// command is allowed: `perform` carries its plans out, and teacher screens are sent the list of
    /// commands it allows (`allowedCommands`) whenever it changes, so a page can never offer what the
    /// core would refuse, nor hide what it would do.
    enum CommandPlan: Sendable, Equatable {
        case prepare
        case pauseNarration(NarrationRun)
        case pauseQuestion(QuestionRun)
        case resumeNarration(NarrationRun)
        case resumeQuestion(QuestionRun, pausedAt: ServerTime)
        case replay(NarrationRun)
        case reveal
        case advance(after: Int)
        case completeNarration
        case skipQuestion(QuestionRun)
        case setLocked(Bool)
        case finish
        case kick(player: String, block: Bool)
        case settings(RoomSettingsPatch)
        case release(member: MemberID)
    }

    /// What `command` would do in `phase`, or why it cannot be done there. Depends only on the phase (its
    /// case and whether it is paused), whether the room is locked and, for `settings`, whether the patch
    /// changes only the display.
    static func plan(_ command: TeacherCommand, phase: RoomPhase, locked: Bool) throws(RoomError) -> CommandPlan {
        switch command {
        case .start:
            switch phase {
            case .lobby, .failed: return .prepare
            case .finished: throw ended
            default: throw CommandRefusal.alreadyStarted.error(command.name, "The room has already started.")
            }
        case .retry:
            guard case .failed = phase else {
                throw CommandRefusal.nothingFailed.error(command.name, "Retry is for when the narration could not be prepared, and nothing has failed.")
            }
            return .prepare
        case .pause:
            switch phase {
            case .narrating(let run) where run.pausedAt == nil: return .pauseNarration(run)
            case .question(let run) where run.pausedAt == nil: return .pauseQuestion(run)
            case .narrating, .question: throw CommandRefusal.alreadyPaused.error(command.name, "The room is already paused.")
            default: throw CommandRefusal.nothingToPause.error(command.name, "Nothing is playing that could be paused.")
            }
        case .resume:
            switch phase {
            case .narrating(let run) where run.pausedAt != nil: return .resumeNarration(run)
            case .question(let run) where run.pausedAt != nil: return .resumeQuestion(run, pausedAt: run.pausedAt ?? ServerTime(milliseconds: 0))
            default: throw CommandRefusal.notPaused.error(command.name, "The room is not paused.")
            }
        case .replay:
            guard case .narrating(let run) = phase else {
                throw CommandRefusal.notNarrating.error(command.name, "Replay works while the story is being told.")
            }
            return .replay(run)
        case .reveal:
            guard case .question = phase else {
                throw CommandRefusal.noOpenQuestion.error(command.name, "There is no open question to reveal.")
            }
            return .reveal
        case .next:
            switch phase {
            case .reveal(let index): return .advance(after: index)
            case .question: return .reveal
            case .lobby: throw CommandRefusal.notStarted.error(command.name, "The room has not started yet; use start.")
            case .finished: throw ended
            default: throw CommandRefusal.storyNotOver.error(command.name, "The story is still being prepared or told; use skip to go straight to the quiz.")
            }
        case .skip:
            switch phase {
            case .preparing, .failed, .narrating: return .completeNarration
            case .question(let run): return .skipQuestion(run)
            case .reveal(let index): return .advance(after: index)
            case .lobby: throw CommandRefusal.notStarted.error(command.name, "The room has not started yet; use start.")
            case .finished: throw ended
            }
        case .lock, .unlock:
            guard phase != .finished else { throw ended }
            let lock = command == .lock
            // Refused rather than repeated, like a second pause: the teacher's screen offers only the one that changes something.
            guard lock != locked else {
                throw lock
                    ? CommandRefusal.alreadyLocked.error(command.name, "The room is already locked.")
                    : CommandRefusal.notLocked.error(command.name, "The room is not locked.")
            }
            return .setLocked(lock)
        case .end:
            guard phase != .finished else { throw ended }
            return .finish
        case .kick(let player):
            return .kick(player: player, block: false)
        case .block(let player):
            return .kick(player: player, block: true)
        case .release(let member):
            return .release(member: MemberID(member))
        case .settings(let patch):
            switch phase {
            case .lobby, .failed: return .settings(patch)
            case _ where patch.changesOnlyDisplay: return .settings(patch)
            default: throw RoomError(.settingsLocked, "Settings can only change in the lobby, before the story starts (or after the narration failed).")
            }
        }
    }

    /// Carries out a teacher's command, or explains why it cannot be done now (and changes nothing).
    public mutating func perform(_ command: TeacherCommand, at: ServerTime) throws(RoomError) -> [RoomDirective] {
        let before = commandsKey
        var directives = try carryOut(Self.plan(command, phase: phase, locked: isLocked), at: at)
        tellTeachersIfCommandsChanged(since: before, in: &directives)
        return directives
    }

    private mutating func carryOut(_ plan: CommandPlan, at: ServerTime) throws(RoomError) -> [RoomDirective] {
        let namesBefore = picking.isEmpty ? nil : namesList
        switch plan {
        case .prepare: return prepare(at: at) + pickersFollowAdmission(since: namesBefore)
        case .pauseNarration(let run): return pauseNarration(run, at: at)
        case .pauseQuestion(let run): return pauseQuestion(run, at: at)
        case .resumeNarration(let run): return resumeNarration(run, at: at)
        case .resumeQuestion(let run, let pausedAt): return resumeQuestion(run, pausedAt: pausedAt, at: at)
        case .replay(let run): return replayNarration(run, at: at)
        case .reveal: return reveal(at: at)
        // After the last question, these finish the room: its pickers are told, as `end` tells them.
        case .advance(let index): return advance(after: index, at: at) + pickersFollowAdmission(since: namesBefore)
        case .completeNarration: return completeNarration(at: at)
        case .skipQuestion(let run): return skipQuestion(run, at: at) + pickersFollowAdmission(since: namesBefore)
        case .setLocked(let locked):
            isLocked = locked
            return [.persist(.roomUpdated(settings: settings, locked: isLocked, at: at))] + sendToAll { role in .room(self.status(for: role)) }
                + pickersFollowAdmission(since: namesBefore)
        case .finish: return finish(at: at) + pickersFollowAdmission(since: namesBefore)
        case .kick(let player, let block): return try kick(player, block: block, at: at)
        case .release(let member): return try release(member, at: at)
        case .settings(let patch):
            let before = settings
            let voiceBefore = narrationSettings
            settings = try settings.applying(patch)
            // Turning the answer grid on sends dashboards the results they were not given while it was off.
            let refresh = settings.answerGrid != before.answerGrid ? markScreensDirty(at: at) : []
            return [.persist(.roomUpdated(settings: settings, locked: isLocked, at: at))]
                + sendToAll { role in .room(self.status(for: role)) } + refresh + pickersFollowAdmission(since: namesBefore)
                + readAhead(unless: voiceBefore)
        }
    }

    private static let ended = RoomError(.roomEnded, "This room has already ended.")

    /// The names of the commands a teacher may send now, in `TeacherCommand.names` order: exactly those
    /// `perform` would carry out (for `kick` and `block`, given a player who is here; for `settings`, a
    /// change of the room's rules: a change of the answer grid alone is allowed in any phase).
    public var allowedCommands: [CommandName] {
        let allowed = Self.allowedCommands(phase: phase, locked: isLocked)
        // In a class room a name can be released whenever a child can be removed.
        guard classRoster != nil, let kick = allowed.firstIndex(of: .block) ?? allowed.firstIndex(of: .kick) else { return allowed }
        var withRelease = allowed
        withRelease.insert(.release, at: kick + 1)
        return withRelease
    }

    static func allowedCommands(phase: RoomPhase, locked: Bool) -> [CommandName] {
        allowedByKey[CommandsKey(phase: phase.name, paused: phase.isPaused, locked: locked)] ?? listAllowed(phase: phase, locked: locked)
    }

    /// What `plan` allows: every command planned in turn, most of them refused.
    private static func listAllowed(phase: RoomPhase, locked: Bool) -> [CommandName] {
        TeacherCommand.representatives.compactMap { command in
            (try? plan(command, phase: phase, locked: locked)) == nil ? nil : command.commandName
        }
    }

    /// `listAllowed` for every `CommandsKey`, worked out once. `plan` depends on nothing more, and listing
    /// builds a refusal (its words included) for most commands: done for every pause and resume of every
    /// room, it was a third of a room's work for a teacher's command.
    private static let allowedByKey: [CommandsKey: [CommandName]] = {
        let start = ServerTime(milliseconds: 0)
        let phases: [RoomPhase] = [
            .lobby, .preparing(ready: 0, total: 1), .failed(.notReadyAfterRestart),
            .narrating(NarrationRun(sentence: 0, startedAt: start)), .narrating(NarrationRun(sentence: 0, startedAt: start, pausedAt: start)),
            .question(QuestionRun(index: 0, opensAt: start)), .question(QuestionRun(index: 0, opensAt: start, pausedAt: start)),
            .reveal(question: 0), .finished,
        ]
        var table: [CommandsKey: [CommandName]] = [:]
        for phase in phases {
            for locked in [false, true] {
                table[CommandsKey(phase: phase.name, paused: phase.isPaused, locked: locked)] = listAllowed(phase: phase, locked: locked)
            }
        }
        return table
    }()

    /// All that `allowedCommands` depends on, cheap to read: the list can have changed only if this has.
    struct CommandsKey: Hashable {
        var phase: PhaseName
        var paused: Bool
        var locked: Bool
    }

    var commandsKey: CommandsKey { CommandsKey(phase: phase.name, paused: phase.isPaused, locked: isLocked) }

    /// Appends a `room` for teachers when what they may send has changed since `before`, so their screens
    /// follow the room when it moves on by itself too (the narration ready or failed, the story over, a
    /// deadline passed, everyone answered). Runs after every event, answers included: when the key is
    /// unchanged it reads three values and does nothing else.
    func tellTeachersIfCommandsChanged(since before: CommandsKey, in directives: inout [RoomDirective]) {
        guard commandsKey != before else { return }
        let teachers = audience.teachers
        guard !teachers.isEmpty else { return }
        // A lock, an unlock or a settings change already sends teachers a `room` with the new list.
        let told = directives.contains { directive in
            if case .send(.room(let status), let recipients) = directive { status.commands != nil && recipients == teachers } else { false }
        }
        if !told { directives.append(.send(.room(status(for: .teacher)), to: teachers)) }
    }

    /// The `room` message as `role` gets it: teachers also get the commands allowed now.
    func status(for role: Role) -> RoomStatus {
        RoomStatus(locked: isLocked, settings: settings, language: language, commands: role == .teacher ? allowedCommands.map(\.rawValue) : nil)
    }

    /// The language the room's screens speak: the teacher's choice, else the language of the voice the
    /// story is read in (the room's voice, or the story's), else English.
    public var language: String {
        RoomLanguage.of(settings: settings, story: story)
    }
}
