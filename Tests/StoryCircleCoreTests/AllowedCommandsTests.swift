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
        failed.apply(.narration(.failed(preparation: failed.narrationRequests.last!.preparation, message: "No voice."), at: failed.now))
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
    private func accepted(by room: RoomDriver) -> [String] {
        TeacherCommand.representatives.compactMap { command in
            var copy = room.state
            let tried: TeacherCommand = switch command {
            case .kick: .kick(player: "Ana")
            case .block: .block(player: "Ana")
            default: command
            }
            return (try? copy.perform(tried, at: room.now)) == nil ? nil : command.name
        }
    }

    @Test func theListIsExactlyWhatPerformAccepts() throws {
        for (name, room) in try roomsInEveryState() {
            #expect(room.state.allowedCommands == accepted(by: room), "\(name)")
        }
    }

    @Test func theRulesCoverEveryStateAndAgreeWithTheRoom() throws {
        let rooms = try roomsInEveryState()
        let rules = RoomState.commandRules
        for (name, room) in rooms {
            let state = room.state
            let matching = rules.filter { $0.phase == state.phase.name && $0.paused == state.phase.isPaused && $0.locked == state.isLocked }
            #expect(matching.map(\.commands) == [state.allowedCommands], "\(name)")
        }
        #expect(rules.count == rooms.count, "one rule per state a room can be in, and no more")
    }

    @Test func whatEachStateAllows() throws {
        let allowed = Dictionary(uniqueKeysWithValues: try roomsInEveryState().map { ($0.name, $0.room.state.allowedCommands) })
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
        #expect(throws: RoomError(.invalidCommand, "The room is not locked.")) { try room.command(.unlock) }
        try room.command(.lock)
        #expect(throws: RoomError(.invalidCommand, "The room is already locked.")) { try room.command(.lock) }
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
        #expect(welcome(teacher)?.commandRules == RoomState.commandRules)
        #expect(welcome(dashboard)?.commands == nil && welcome(dashboard)?.commandRules == nil)
        #expect(welcome(ana.connection)?.commands == nil && welcome(ana.connection)?.commandRules == nil)

        try room.command(.lock)
        #expect(room.messages(to: teacher).last == .room(RoomStatus(locked: true, settings: RoomSettings(), commands: ["start", "kick", "block", "unlock", "end", "settings"])))
        #expect(room.messages(to: dashboard).last == .room(RoomStatus(locked: true, settings: RoomSettings())))
        #expect(room.messages(to: ana.connection).last == .room(RoomStatus(locked: true, settings: RoomSettings())))
    }

    @Test func aTeacherWatchingWithTheTeacherTokenIsToldTooAfterAFailure() throws {
        var room = RoomDriver()
        try room.command(.start)
        room.apply(.narration(.failed(preparation: room.narrationRequests[0].preparation, message: "No voice."), at: room.now))
        let screen = room.newConnection()
        room.apply(.hello(screen, .watch(token: "teacher-secret"), at: room.now))
        guard case .welcome(let welcome)? = room.messages(to: screen).first else { Issue.record("no welcome"); return }
        #expect(welcome.role == .teacher)
        #expect(welcome.room.commands?.contains("start") == true)
        #expect(welcome.room.commands?.contains("retry") == true)
    }
}
