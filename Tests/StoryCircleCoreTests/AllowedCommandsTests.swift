import Testing
@testable import StoryCircleCore

/// Teacher screens enable exactly the commands the server lists; these tests hold that list to what
/// `perform` does, in every state a room can be in.
@Suite("The commands a teacher may send")
struct AllowedCommandsTests {
    /// A room with Ana, a teacher and a dashboard, in each state a room can be in, by the path a class takes.
    private func roomsInEveryState() throws -> [(name: String, room: RoomDriver)] {
        var rooms: [(String, RoomDriver)] = []
        var room = RoomDriver()
        _ = try room.child("Ana")
        rooms.append(("lobby", room))

        var failed = room
        try failed.command(.start)
        rooms.append(("preparing", failed))
        failed.apply(.narration(.failed(preparation: failed.narrationRequests.last!.preparation, problem: NarrationProblem(.unknown, "No voice.")), at: failed.now))
        rooms.append(("error", failed))

        try room.startAndPrepare()
        room.advance(by: 1_000)
        rooms.append(("narrating", room))
        var paused = room
        try paused.command(.pause)
        rooms.append(("narrating, paused", paused))

        room.narrateToFirstQuestion()
        rooms.append(("question", room))
        paused = room
        try paused.command(.pause)
        rooms.append(("question, paused", paused))

        try room.command(.reveal)
        rooms.append(("reveal", room))
        try room.command(.end)
        rooms.append(("finished", room))
        // Each of them locked as well.
        return rooms + rooms.map { name, room in
            var locked = room
            locked.state.isLocked = true
            return ("\(name), locked", locked)
        }
    }

    /// The commands `perform` carries out on a copy of `room`, by name, in `TeacherCommand.names` order.
    private func accepted(by room: RoomDriver) -> [CommandName] {
        TeacherCommand.representatives.compactMap { command in
            var copy = room.state
            let tried: TeacherCommand = switch command {
            case .kick: .kick(player: "Ana")
            case .block: .block(player: "Ana")
            default: command
            }
            return (try? copy.perform(tried, at: room.now)) == nil ? nil : command.commandName
        }
    }

    @Test func theListIsExactlyWhatPerformAccepts() throws {
        for (name, room) in try roomsInEveryState() {
            #expect(room.state.allowedCommands == accepted(by: room), "\(name)")
        }
    }

    @Test func whatEachStateAllows() throws {
        let allowed = Dictionary(uniqueKeysWithValues: try roomsInEveryState().map { ($0.name, $0.room.state.allowedCommands.map(\.rawValue)) })
        #expect(allowed["lobby"] == ["start", "kick", "block", "lock", "end", "settings"])
        #expect(allowed["preparing"] == ["skip", "kick", "block", "lock", "end"])
        // After a failure the teacher may start again (as retry does), skip to the quiz, or fix the voice.
        #expect(allowed["error"] == ["start", "retry", "skip", "kick", "block", "lock", "end", "settings"])
        #expect(allowed["narrating"] == ["pause", "replay", "skip", "kick", "block", "lock", "end"])
        #expect(allowed["narrating, paused"] == ["resume", "replay", "skip", "kick", "block", "lock", "end"])
        #expect(allowed["question"] == ["pause", "reveal", "next", "skip", "kick", "block", "lock", "end"])
        #expect(allowed["question, paused"] == ["resume", "reveal", "next", "skip", "kick", "block", "lock", "end"])
        #expect(allowed["reveal"] == ["next", "skip", "kick", "block", "lock", "end"])
        #expect(allowed["reveal, locked"] == ["next", "skip", "kick", "block", "unlock", "end"])
        #expect(allowed["finished"] == ["kick", "block"])
    }

    @Test func aSecondLockOrUnlockIsRefusedAndChangesNothing() throws {
        var room = RoomDriver()
        #expect(throws: RoomError(.invalidCommand, "The room is not locked.", params: ["problem": "not_locked", "command": "unlock"])) { try room.command(.unlock) }
        try room.command(.lock)
        #expect(throws: RoomError(.invalidCommand, "The room is already locked.", params: ["problem": "already_locked", "command": "lock"])) { try room.command(.lock) }
        #expect(room.state.isLocked)
    }

    @Test func onlyTeachersAreToldTheCommands() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let dashboard = room.dashboard()
        let teacher = room.teacher()
        func welcome(_ connection: ConnectionID) -> RoomSnapshot? {
            room.messages(to: connection).lazy.compactMap { if case .welcome(let welcome) = $0 { welcome.room } else { nil } }.first
        }
        #expect(welcome(teacher)?.commands == ["start", "kick", "block", "lock", "end", "settings"])
        #expect(welcome(dashboard)?.commands == nil)
        #expect(welcome(ana.connection)?.commands == nil)

        try room.command(.lock)
        #expect(room.messages(to: teacher).last == .room(RoomStatus(locked: true, settings: RoomSettings(), language: "en", commands: ["start", "kick", "block", "unlock", "end", "settings"])))
        #expect(room.messages(to: dashboard).last == .room(RoomStatus(locked: true, settings: RoomSettings(), language: "en")))
        #expect(room.messages(to: ana.connection).last == .room(RoomStatus(locked: true, settings: RoomSettings(), language: "en")))
    }

    /// The `room` messages among `directives`, with whom each goes to.
    private func roomMessages(in directives: some Collection<RoomDirective>) -> [(status: RoomStatus, to: [ConnectionID])] {
        directives.compactMap { directive in
            switch directive {
            case .send(.room(let status), let recipients), .sendAtOnce(.room(let status), let recipients): (status, recipients)
            default: nil
            }
        }
    }

    /// The list a teacher's screen has: from the last `welcome` or `room` it was sent.
    private func commandsKnown(by teacher: ConnectionID, in room: RoomDriver) -> [String]? {
        room.messages(to: teacher).reversed().lazy.compactMap { message -> [String]? in
            switch message {
            case .welcome(let welcome): welcome.room.commands
            case .room(let status): status.commands
            default: nil
            }
        }.first
    }

    /// Checks that the directives from `start` on tell the teacher (and only the teacher) the list allowed
    /// now, once, after the message that moved the room on (`moved`).
    private func expectTeacherTold(
        _ room: RoomDriver, since start: Int, teacher: ConnectionID, after moved: (ServerMessage) -> Bool,
        _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let directives = room.log[start...]
        let rooms = roomMessages(in: directives)
        #expect(rooms.count == 1, comment, sourceLocation: sourceLocation)
        #expect(rooms.first?.to == [teacher], comment, sourceLocation: sourceLocation)
        #expect(rooms.first?.status == RoomStatus(locked: room.state.isLocked, settings: room.state.settings, language: room.state.language, commands: room.state.allowedCommands.map(\.rawValue)), comment, sourceLocation: sourceLocation)
        let movedAt = directives.firstIndex { if case .send(let message, _) = $0 { moved(message) } else { false } }
        let toldAt = directives.firstIndex { if case .send(.room, _) = $0 { true } else { false } }
        #expect(movedAt != nil && toldAt != nil && movedAt! < toldAt!, "the list follows the change: \(comment)", sourceLocation: sourceLocation)
    }

    @Test func theTeacherIsToldTheNewListWhenTheRoomMovesOnByItself() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        _ = room.dashboard()
        let teacher = room.teacher()
        try room.command(.start)

        var failed = room
        var start = failed.log.count
        failed.apply(.narration(.failed(preparation: failed.narrationRequests.last!.preparation, problem: NarrationProblem(.unknown, "No voice.")), at: failed.now))
        #expect(failed.state.phase.name == .error)
        expectTeacherTold(failed, since: start, teacher: teacher, after: { if case .narrationError = $0 { true } else { false } }, "narration failed")

        start = room.log.count
        room.prepared()
        #expect(room.state.phase.name == .narrating)
        expectTeacherTold(room, since: start, teacher: teacher, after: { if case .narrationPlan = $0 { true } else { false } }, "narration prepared")

        start = room.log.count
        room.narrateToFirstQuestion()
        #expect(room.state.phase.name == .question)
        expectTeacherTold(room, since: start, teacher: teacher, after: { if case .question = $0 { true } else { false } }, "the story over")

        // Nobody answers question 0: its deadline reveals it.
        start = room.log.count
        room.advance(by: 21_000)
        #expect(room.state.phase.name == .reveal)
        expectTeacherTold(room, since: start, teacher: teacher, after: { if case .reveal = $0 { true } else { false } }, "deadline passed")

        try room.command(.next)
        room.waitForOpening()
        // An answer that leaves the room where it was tells nobody anything about commands.
        let ordinary = room.answer(ben, question: 1, option: 0)
        #expect(room.state.phase.name == .question)
        #expect(roomMessages(in: ordinary).isEmpty)
        start = room.log.count
        room.answer(ana, question: 1, option: 1)
        #expect(room.state.phase.name == .reveal)
        expectTeacherTold(room, since: start, teacher: teacher, after: { if case .reveal = $0 { true } else { false } }, "everyone answered")

        try room.command(.next)
        room.waitForOpening()
        try room.command(.reveal)
        start = room.log.count
        try room.command(.next)
        #expect(room.state.phase == .finished)
        expectTeacherTold(room, since: start, teacher: teacher, after: { if case .finished = $0 { true } else { false } }, "the last question done")
        #expect(commandsKnown(by: teacher, in: room) == ["kick", "block"])
    }

    @Test func whatTheTeacherKnowsIsAlwaysTheListAllowedNow() throws {
        var room = RoomDriver()
        let teacher = room.teacher()
        let ana = try room.child("Ana")
        var steps = 0
        func check(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
            steps += 1
            #expect(commandsKnown(by: teacher, in: room) == room.state.allowedCommands.map(\.rawValue), "after \(step)", sourceLocation: sourceLocation)
        }
        check("the welcome")
        try room.command(.lock); check("lock")
        try room.command(.unlock); check("unlock")
        try room.command(.start); check("start")
        room.apply(.narration(.failed(preparation: room.narrationRequests.last!.preparation, problem: NarrationProblem(.unknown, "No voice.")), at: room.now)); check("a failure")
        try room.command(.retry); check("retry")
        room.prepared(); check("prepared")
        try room.command(.pause); check("pause")
        try room.command(.resume); check("resume")
        try room.command(.replay); check("replay")
        while case .narrating = room.state.phase { room.advance(by: 500); check("narrating") }
        room.waitForOpening(); check("the question opening")
        try room.command(.pause); check("pause in a question")
        try room.command(.lock); check("lock while paused")
        try room.command(.resume); check("resume in a question")
        room.answer(ana, question: 0, option: 2); check("the only answer")
        try room.command(.next); check("next")
        try room.command(.skip); check("skip a question")
        room.waitForOpening(); check("the last question opening")
        room.apply(.disconnected(ana.connection, at: room.now)); check("the only child leaving")
        try room.command(.end); check("end")
        #expect(steps > 20)
    }

    @Test func noTeacherNoRoomMessage() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        _ = room.dashboard()
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        #expect(roomMessages(in: room.log).isEmpty)
    }

    @Test func aTeacherWatchingWithTheTeacherTokenIsToldTooAfterAFailure() throws {
        var room = RoomDriver()
        try room.command(.start)
        room.apply(.narration(.failed(preparation: room.narrationRequests[0].preparation, problem: NarrationProblem(.unknown, "No voice.")), at: room.now))
        let screen = room.newConnection()
        room.apply(.hello(screen, .watch(token: "teacher-secret"), at: room.now))
        guard case .welcome(let welcome)? = room.messages(to: screen).first else { Issue.record("no welcome"); return }
        #expect(welcome.role == .teacher)
        #expect(welcome.room.commands?.contains("start") == true)
        #expect(welcome.room.commands?.contains("retry") == true)
    }
}
