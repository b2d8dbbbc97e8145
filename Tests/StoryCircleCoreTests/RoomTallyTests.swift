import Testing
@testable import StoryCircleCore

/// "Has everyone answered?" is answered from counts kept in step with every change, not by walking every
/// child each time. A count that drifts would reveal a question too early or never: these tests compare the
/// counts with their definition (`RoomState.recount`) after every event of many random rooms.
@Suite("Answer counts")
struct RoomTallyTests {
    private struct Kid {
        var nickname: String
        var token: String
        var connection: ConnectionID?
    }

    private static let names = ["Ana", "Ben", "Cat", "Dan", "Eve", "Fin", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lu"]

    /// One random room: joins, rejoins (also replacing a live connection), leaves, kicks, blocks, answers
    /// (right, wrong, late, twice, to the wrong question), every teacher command, time passing (deadlines),
    /// and restarts from the stored records. After every event the counts must equal their definition.
    private func play(seed: UInt64, steps: Int) throws {
        var random = SeededRandom(seed: seed)
        let settings = RoomSettings(timer: !random.oneIn(3), lateJoin: !random.oneIn(4))
        var room = RoomDriver(settings: settings)
        var kids: [Kid] = []
        var screens: [ConnectionID] = []
        // What the store holds from drivers before the last restart (each driver logs only its own).
        var stored: [RoomRecord] = []

        func check(_ step: Int, _ what: String) throws {
            let state = room.state
            let expected = state.recount(question: state.tally.question)
            try #require(state.tally == expected, "seed \(seed), step \(step) (\(what)): counted \(state.tally), but there are \(expected)")
            if case .question(let run) = state.phase {
                try #require(state.tally.question == run.index, "seed \(seed), step \(step): counting answers to \(state.tally.question) while \(run.index) is open")
            }
        }

        for step in 0..<steps {
            let what: String
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<14:
                what = "join"
                let name = Self.names.randomElement(using: &random)!
                let connection = room.newConnection()
                let token = "token-\(seed)-\(step)"
                room.apply(.hello(connection, .join(nickname: name, resumeToken: token), at: room.now))
                if room.state.playerID(of: connection) != nil {
                    kids.append(Kid(nickname: name, token: token, connection: connection))
                }
            case 14..<22:
                what = "rejoin"
                guard let index = kids.indices.randomElement(using: &random) else { continue }
                let connection = room.newConnection()
                room.apply(.hello(connection, .rejoin(token: kids[index].token), at: room.now))
                if room.state.playerID(of: connection) != nil {
                    // A live connection of the same child was replaced (and closed).
                    kids[index].connection = connection
                }
            case 22..<32:
                what = "leave"
                guard let index = kids.indices.filter({ kids[$0].connection != nil }).randomElement(using: &random) else { continue }
                room.apply(.disconnected(kids[index].connection!, at: room.now))
                kids[index].connection = nil
            case 32..<35:
                what = "a screen comes or goes"
                if let screen = screens.randomElement(using: &random), random.oneIn(2) {
                    room.apply(.disconnected(screen, at: room.now))
                    screens.removeAll { $0 == screen }
                } else {
                    screens.append(random.oneIn(2) ? room.dashboard() : room.teacher())
                }
            case 35..<40:
                what = "kick or block"
                guard let index = kids.indices.randomElement(using: &random) else { continue }
                let block = random.oneIn(2)
                _ = try? room.command(block ? .block(player: kids[index].nickname) : .kick(player: kids[index].nickname))
                for i in kids.indices where kids[i].connection.map({ room.state.playerID(of: $0) == nil }) == true {
                    kids[i].connection = nil
                }
            case 40..<72:
                what = "answer"
                guard let index = kids.indices.filter({ kids[$0].connection != nil }).randomElement(using: &random) else { continue }
                var question = 0
                if case .question(let run) = room.state.phase { question = run.index }
                if random.oneIn(6) { question += Int.random(in: -1...1, using: &random) }
                room.apply(.message(kids[index].connection!, .answer(question: question, option: Int.random(in: 0..<4, using: &random)), at: room.now))
            case 72..<84:
                let commands: [TeacherCommand] = [.start, .next, .next, .reveal, .skip, .pause, .resume, .lock, .unlock, .end]
                let command = random.oneIn(20) ? .end : commands.dropLast().randomElement(using: &random)!
                what = "command \(command)"
                _ = try? room.command(command)
                if command == .start, case .preparing = room.state.phase { room.prepared() }
            case 84..<97:
                what = "time passes"
                room.advance(by: Int.random(in: 100...8_000, using: &random))
            default:
                what = "restart"
                stored += room.persisted
                var archive = RoomArchive(header: RoomHeader(code: room.state.code.rawValue, story: room.state.story, settings: settings, credentials: Fixtures.credentials, createdAt: ServerTime(milliseconds: 0)))
                stored.forEach { archive.apply($0) }
                let (restored, directives) = RoomState.restore(archive, lookalikes: LookalikeTable(), at: room.now + 1_000)
                room = RoomDriver(restoring: restored, at: room.now + 1_000, directives: directives)
                // Every connection is gone (the driver numbers new ones from 1 again: no clash).
                for i in kids.indices { kids[i].connection = nil }
                screens = []
            }
            try check(step, what)
        }
    }

    @Test func theCountsMatchTheirDefinitionAfterEveryEvent() throws {
        for seed in 1...300 as ClosedRange<UInt64> {
            try play(seed: seed, steps: 160)
        }
    }

    @Test func everyoneHasAnsweredWhenTheLastConnectedChildAnswersOrTheLastHoldoutLeaves() throws {
        var room = RoomDriver()
        let kids = try ["Ana", "Ben", "Cat"].map { try room.child($0) }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(kids[0], question: 0, option: 2)
        // Cat leaves and comes back: she still has to answer.
        room.apply(.disconnected(kids[2].connection, at: room.now))
        let back = room.newConnection()
        room.apply(.hello(back, .rejoin(token: kids[2].token), at: room.now))
        room.answer(kids[1], question: 0, option: 1)
        #expect(room.state.phase.name == .question, "Cat is back and has not answered")
        #expect(room.state.tally.answeredConnected == 2 && room.state.tally.connected == 3)
        // Ben leaves after answering: his answer stops counting towards the connected, and so does he.
        room.apply(.disconnected(kids[1].connection, at: room.now))
        #expect(room.state.tally.answeredConnected == 1 && room.state.tally.connected == 2)
        // Cat is kicked: now everyone still here has answered.
        try room.command(.kick(player: "Cat"))
        #expect(room.state.phase == .reveal(question: 0))
    }

    @Test func aQuestionReopenedAfterARestartCountsTheAnswersAlreadyStored() throws {
        var room = RoomDriver()
        let kids = try ["Ana", "Ben"].map { try room.child($0) }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(kids[0], question: 0, option: 2)
        let restartAt = room.now + 1_000
        let (restored, directives) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: restartAt)
        var again = RoomDriver(restoring: restored, at: restartAt, directives: directives)
        #expect(again.state.tally == RoomState.Tally(active: 2, connected: 0, question: 0, answeredConnected: 0))
        // Ana comes back: she has answered already. Ben comes back and answers: everyone has.
        for kid in kids {
            again.apply(.hello(ConnectionID(100 + kid.connection.rawValue), .rejoin(token: kid.token), at: again.now))
        }
        #expect(again.state.tally == RoomState.Tally(active: 2, connected: 2, question: 0, answeredConnected: 1))
        guard case .question(let run) = again.state.phase else { Issue.record("not reopened"); return }
        again.advance(to: run.opensAt)
        again.apply(.message(ConnectionID(100 + kids[1].connection.rawValue), .answer(question: 0, option: 1), at: again.now))
        #expect(again.state.phase == .reveal(question: 0))
    }
}
