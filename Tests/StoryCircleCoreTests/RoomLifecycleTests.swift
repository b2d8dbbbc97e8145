import Foundation
import Testing
@testable import StoryCircleCore

@Suite("Room lifecycle")
struct RoomLifecycleTests {
    @Test func oneChildWalksTheWholeRoom() throws {
        var room = RoomDriver()
        let dashboard = room.dashboard()
        let ana = try room.child("Ana")
        #expect(room.state.phase == .lobby)

        try room.startAndPrepare()
        guard case .narrating = room.state.phase else { Issue.record("expected narration, got \(room.state.phase)"); return }
        room.narrateToFirstQuestion()
        guard case .question(let first) = room.state.phase else { Issue.record("expected the first question"); return }
        #expect(first.index == 0)

        room.advance(by: 2_000)
        room.answer(ana, question: 0, option: 2)
        #expect(room.state.phase == .reveal(question: 0), "the only child answered, so the question is revealed")

        try room.command(.next)
        room.waitForOpening()
        room.answer(ana, question: 1, option: 3)
        try room.command(.next)
        room.waitForOpening()
        room.advance(by: 400)
        room.answer(ana, question: 2, option: 1)
        try room.command(.next)
        #expect(room.state.phase == .finished)

        let finished = room.messages(to: ana.connection).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last
        let standing = try #require(finished?.you)
        #expect(standing.results == [.correct, .wrong, .correct])
        // 2 s into a 20 s question: 1000 × (1 − 0.5 × 1500/19500) ≈ 962; then 1000 (no streak after a wrong answer).
        #expect(standing.score == 962 + 1_000)
        #expect(standing.rank == nil, "a place only in a contest (RoomSettings.competitive)")
        let screens = room.messages(to: dashboard).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last
        #expect(screens?.entries?.map(\.nickname) == ["Ana"])
        #expect(screens?.podium.map(\.nickname) == ["Ana"])
    }

    @Test func endingWithAQuestionOpenCountsTheAnswersAlreadyGiven() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.advance(by: 2_000)
        room.answer(ana, question: 0, option: 2)
        guard case .question = room.state.phase else { Issue.record("Ben has not answered: the question stays open"); return }
        try room.command(.end)

        func standing(_ child: RoomDriver.Child) -> PlayerStanding? {
            room.messages(to: child.connection).compactMap { if case .finished(let f) = $0 { f.you } else { nil } }.last
        }
        let anas = try #require(standing(ana))
        #expect(anas.results == [.correct])
        #expect(anas.score == 962, "a right answer is worth its points, as at a reveal")
        let bens = try #require(standing(ben))
        #expect(bens.results == [.missed])
        #expect(bens.score == 0)

        // What is kept says the same: a report or a restart rebuilds the room from it.
        let (rebuilt, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(rebuilt.phase == .finished)
        #expect(rebuilt.roster.players.map(\.score) == [962, 0])

        // A room kept before the end recorded the question's reveal reads the same.
        var older = room.archive()
        older.phases.removeAll { $0.phase == .reveal }
        let (rebuiltOlder, _) = RoomState.restore(older, lookalikes: LookalikeTable(), at: room.now)
        #expect(rebuiltOlder.roster.players.map(\.score) == [962, 0])
        #expect(rebuiltOlder.results().players.map { $0.answers.first?.correct } == [true, nil])
    }

    @Test func endingBeforeAQuestionOpensLeavesItUnasked() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        _ = try room.child("Ben")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.advance(by: 2_000)
        room.answer(ana, question: 0, option: 2)
        try room.command(.reveal)
        try room.command(.next)
        guard case .question(let second) = room.state.phase, room.now < second.opensAt else { Issue.record("expected the second question's lead"); return }
        try room.command(.end)
        let anas = try #require(room.messages(to: ana.connection).compactMap { if case .finished(let f) = $0 { f.you } else { nil } }.last)
        #expect(anas.results == [.correct], "nobody could answer the second question: nobody missed it")
        #expect(anas.score == 962)
    }

    @Test func fortyChildrenPlayAndTheBoardIsRanked() throws {
        var room = RoomDriver(settings: RoomSettings(competitive: true))
        let dashboard = room.dashboard()
        let children = (1...40).compactMap { room.join("Child \($0)") }
        #expect(children.count == 40)
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        for question in 0..<3 {
            for (i, child) in children.enumerated() {
                // Children in groups of four give the same answer at the same moment: ties are certain.
                room.answer(child, question: question, option: (i / 4 + question) % 4)
                if i % 4 == 3 { room.advance(by: 37) }
            }
            #expect(room.state.phase == .reveal(question: question))
            try room.command(.next)
            room.waitForOpening()
        }
        #expect(room.state.phase == .finished)
        let board = try #require(room.messages(to: dashboard).compactMap { if case .finished(let f) = $0 { f.entries } else { nil } }.last)
        #expect(board.count == 40)
        #expect(board.map(\.score) == board.map(\.score).sorted(by: >))
        for (i, entry) in board.enumerated() {
            let expectedRank = 1 + board.count { $0.score > entry.score }
            #expect(entry.rank == expectedRank)
            if i > 0, board[i - 1].score == entry.score { #expect(board[i - 1].rank == entry.rank) }
        }
        #expect(Set(board.map(\.rank)).count < 40, "ties share ranks")
        // Every child hears their own result at every reveal, and the top five.
        for child in children {
            let reveals = room.messages(to: child.connection).compactMap { if case .reveal(let r) = $0 { r } else { nil } }
            #expect(reveals.count == 3)
            #expect(reveals.allSatisfy { $0.top.count == 5 && $0.you != nil })
        }
    }

    @Test func dashboardUpdatesAreCoalesced() throws {
        var room = RoomDriver()
        let dashboard = room.dashboard()
        for i in 1...30 { room.join("Kid \(i)") }
        #expect(room.messages(to: dashboard).count == 1, "only the welcome so far: the roster waits for the flush")
        room.advance(by: 250)
        let lobbies = room.messages(to: dashboard).compactMap { if case .lobby(let l) = $0 { l } else { nil } }
        #expect(lobbies.count == 1)
        #expect(lobbies.first?.count == 30)
    }

    @Test func narrationFailureThenRetryKeepsChildren() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        let teacher = room.teacher()
        let dashboard = room.dashboard()
        try room.command(.start)
        let request = try #require(room.narrationRequests.last)
        let reason = NarrationProblem(.voiceNotInstalled, "The voice \"xx-nonexistent\" is not installed on this computer.", params: ["voice": "xx-nonexistent"])
        room.apply(.narration(.failed(preparation: request.preparation, problem: reason), at: room.now))
        #expect(room.state.phase == .failed(reason))
        // The teacher reads the reason (a code and its voice, for the page to word); children and the
        // projector never see technical text, nor the reason's code.
        #expect(room.messages(to: teacher).contains(.narrationError(NarrationFailure(message: reason.message, reason: .voiceNotInstalled, params: ["voice": "xx-nonexistent"]))))
        for screen in [ana.connection, dashboard] {
            let failures = room.messages(to: screen).compactMap { if case .narrationError(let f) = $0 { f } else { nil } }
            #expect(failures == [NarrationFailure(message: NarrationFailure.childMessage)])
        }
        let late = room.newConnection()
        room.apply(.hello(late, .rejoin(token: ana.token), at: room.now))
        let snapshot = room.messages(to: late).compactMap { if case .welcome(let w) = $0 { w.room } else { nil } }
        #expect(snapshot.map(\.error) == [NarrationFailure.childMessage])
        #expect(snapshot.allSatisfy { $0.errorReason == nil && $0.errorParams == nil })
        let teacherLate = room.teacher()
        let teacherSnapshot = room.messages(to: teacherLate).compactMap { if case .welcome(let w) = $0 { w.room } else { nil } }
        #expect(teacherSnapshot.map(\.errorReason) == [.voiceNotInstalled])
        #expect(teacherSnapshot.map(\.errorParams) == [["voice": "xx-nonexistent"]])
        #expect(!NarrationFailure.childMessage.contains("xx"))
        #expect(throws: RoomError.self) { try room.command(.next) }

        try room.command(.retry)
        #expect(room.narrationRequests.count == 2)
        // A late answer to the abandoned preparation changes nothing.
        room.apply(.narration(.prepared(preparation: request.preparation, Fixtures.plan()), at: room.now))
        #expect(room.state.phase == .preparing(ready: 0, total: 3))
        room.prepared()
        guard case .narrating = room.state.phase else { Issue.record("retry did not narrate"); return }
        #expect(room.state.playerCount == 2)
        #expect(room.state.connectedPlayerCount == 2)
        #expect(room.messages(to: ben.connection).contains { if case .narrationPlan = $0 { true } else { false } })
    }

    @Test func lateJoinOnGetsASnapshotOfTheCurrentSentence() throws {
        var room = RoomDriver()
        room.join("Ana")
        try room.startAndPrepare()
        room.advance(by: 2_000 + 1_000 + 300 + 200)
        let late = try room.child("Late")
        guard case .welcome(let welcome) = room.messages(to: late.connection).first else { Issue.record("no welcome"); return }
        #expect(welcome.room.phase == .narrating)
        #expect(welcome.room.sentence == 1)
        #expect(welcome.room.sentenceAt == ServerTime(milliseconds: 1_000_000 + 2_000 + 1_000 + 300))
        #expect(welcome.room.plan?.sentences.count == 3)
    }

    @Test func lateJoinOffRefusesOnceStarted() throws {
        var room = RoomDriver(settings: RoomSettings(lateJoin: false))
        room.join("Ana")
        try room.command(.start)
        #expect(room.join("Late") == nil)
        let refused = ConnectionID(2)
        #expect(room.lastError(to: refused)?.code == .joinClosed)
        #expect(room.closed[refused] == CloseReason(status: 1008, reason: "join_closed"))
    }

    @Test func nicknamesAreUniqueIgnoringCase() throws {
        var room = RoomDriver()
        room.join("Ana")
        #expect(room.join(" ana ") == nil)
        #expect(room.lastError(to: ConnectionID(2))?.code == .nicknameTaken)
        #expect(room.join("") == nil)
        #expect(room.lastError(to: ConnectionID(3))?.code == .nicknameInvalid)
    }

    @Test func rejoinKeepsThePlayerAndPointsAndReplacesTheOldConnection() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        room.join("Ben")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ana, question: 0, option: 2)
        try room.command(.reveal)
        let scoreBefore = room.state.results().players.first { $0.id == ana.id }?.score
        #expect(scoreBefore == 1_000)

        let second = room.newConnection()
        room.apply(.hello(second, .rejoin(token: ana.token), at: room.now))
        guard case .welcome(let welcome) = room.messages(to: second).first else { Issue.record("no welcome"); return }
        #expect(welcome.player == PlayerInfo(id: ana.id, nickname: "Ana"))
        #expect(welcome.token == nil, "the token is only ever sent once")
        #expect(welcome.room.you?.score == 1_000)
        #expect(welcome.room.reveal?.you?.outcome == .correct)
        #expect(welcome.room.question?.text == "What colour was the gear?", "the revealed question's text comes back too")
        #expect(welcome.room.question?.deadline == nil)
        #expect(room.lastError(to: ana.connection)?.code == .sessionReplaced)
        #expect(room.closed[ana.connection]?.status == 4002)

        let stranger = room.newConnection()
        room.apply(.hello(stranger, .rejoin(token: "made-up"), at: room.now))
        #expect(room.lastError(to: stranger)?.code == .badToken)
    }

    @Test func onlyAHelloWithATokenThatOpensNothingIsReportedForTheGuessingLimit() {
        var room = RoomDriver()
        guard let ana = room.join("Ana") else { Issue.record("Ana could not join"); return }
        // (hello, whether its token opens nothing here). A dashboard link used to control is a real token
        // in the wrong place, not a guess.
        let hellos: [(Hello, Bool)] = [
            (.rejoin(token: "made-up"), true),
            (.watch(token: "guess"), true),
            (.control(token: "guess"), true),
            (.control(token: "dashboard-secret"), false),
            (.watch(token: "dashboard-secret"), false),
            (.control(token: "teacher-secret"), false),
            (.rejoin(token: ana.token), false),
            (.join(nickname: "Bo", resumeToken: "resume-bo"), false),
        ]
        for (hello, guessed) in hellos {
            let connection = room.newConnection()
            let directives = room.apply(.hello(connection, hello, at: room.now))
            let reported = directives.compactMap { if case .failedToken(let who) = $0 { who } else { nil } }
            #expect(reported == (guessed ? [connection] : []), "\(hello)")
            if guessed { #expect(room.closed[connection] == .refused(RoomError(.badToken, ""))) }
        }
    }

    @Test func screensNeedTheRightToken() {
        var room = RoomDriver()
        let wrong = room.newConnection()
        room.apply(.hello(wrong, .watch(token: "guess"), at: room.now))
        #expect(room.lastError(to: wrong)?.code == .badToken)
        let dashboardControls = room.newConnection()
        room.apply(.hello(dashboardControls, .control(token: "dashboard-secret"), at: room.now))
        #expect(room.lastError(to: dashboardControls)?.code == .wrongRole)
        let teacherWatches = room.newConnection()
        room.apply(.hello(teacherWatches, .watch(token: "teacher-secret"), at: room.now))
        #expect(room.state.role(of: teacherWatches) == .teacher)
    }

    @Test func rolesAreEnforcedOnMessages() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let dashboard = room.dashboard()
        let teacher = room.teacher()
        room.apply(.message(ana.connection, .command(.start), at: room.now))
        #expect(room.lastError(to: ana.connection)?.code == .wrongRole)
        room.apply(.message(dashboard, .command(.start), at: room.now))
        #expect(room.lastError(to: dashboard)?.code == .wrongRole)
        room.apply(.message(teacher, .answer(question: 0, option: 0), at: room.now))
        #expect(room.lastError(to: teacher)?.code == .wrongRole)
        room.apply(.message(teacher, .join(room: "123456", nickname: "X"), at: room.now))
        #expect(room.lastError(to: teacher)?.code == .alreadyIdentified)
        room.apply(.message(teacher, .command(.start), at: room.now))
        #expect(room.state.phase == .preparing(ready: 0, total: 3))
        room.apply(.message(teacher, .command(.start), at: room.now))
        #expect(room.lastError(to: teacher)?.code == .invalidCommand)
    }

    @Test func theAnswerNeverLeavesBeforeItsReveal() throws {
        var room = RoomDriver()
        let dashboard = room.dashboard()
        let children = (1...5).compactMap { room.join("K\($0)") }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        for question in 0..<3 {
            for child in children.dropLast() { room.answer(child, question: question, option: 1) }
            room.advance(by: 30_000)
            #expect(room.state.phase == .reveal(question: question))
            if question < 2 { try room.command(.next); room.waitForOpening() }
        }
        try room.command(.next)

        // Walk every message in order: no message to anyone may mention the correct option of a question
        // before that question's reveal.
        var revealed = Set<Int>()
        for case .send(let message, let recipients) in room.log {
            if case .reveal(let reveal) = message {
                revealed.insert(reveal.question)
                continue
            }
            if case .finished = message { continue }
            let json = try JSONSerialization.jsonObject(with: Data(message.encoded()))
            let keys = allKeys(json)
            #expect(!keys.contains("correctOption"), "\(message.type) to \(recipients) carries a correct option")
            #expect(!keys.contains("correct"), "\(message.type) carries correctness")
            #expect(!keys.contains("answer"), "\(message.type) carries an answer")
            if case .welcome(let welcome) = message, let reveal = welcome.room.reveal {
                #expect(revealed.contains(reveal.question))
            }
        }
        #expect(revealed == [0, 1, 2])
        _ = dashboard
    }

    private func allKeys(_ json: Any) -> Set<String> {
        if let object = json as? [String: Any] {
            return object.reduce(into: Set(object.keys)) { $0.formUnion(allKeys($1.value)) }
        }
        if let array = json as? [Any] {
            return array.reduce(into: Set()) { $0.formUnion(allKeys($1)) }
        }
        return []
    }

    @Test func csvCellsQuoteQuotesCommasAndLineBreaksAndDefuseFormulas() {
        #expect(RoomResults.csvCell("Ana") == "Ana")
        #expect(RoomResults.csvCell(#"Say "hi", Ben"#) == #""Say ""hi"", Ben""#)
        #expect(RoomResults.csvCell("\"\"") == "\"\"\"\"\"\"")
        #expect(RoomResults.csvCell("two\nlines") == "\"two\nlines\"")
        #expect(RoomResults.csvCell("=1+1") == "'=1+1")
        #expect(RoomResults.csvCell("-5") == "-5")
    }

    @Test func resultsAndCSVListEveryChildAndQuestion() throws {
        var room = RoomDriver()
        let ana = try room.child("=cmd|Ana")
        let ben = try room.child("Ben, the 2nd")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ana, question: 0, option: 2)
        room.answer(ben, question: 0, option: 0)
        try room.command(.end)
        let results = room.state.results()
        #expect(results.players.map(\.nickname) == ["=cmd|Ana", "Ben, the 2nd"])
        #expect(results.players[0].answers[0].correct == true)
        #expect(results.players[0].answers[1].option == nil)
        let csv = results.csv().components(separatedBy: "\r\n")
        #expect(csv[0] == "child,question,question_text,answer,result,points,total_points,rank,time_ms,player_id")
        #expect(csv[1] == "'=cmd|Ana,1,What colour was the gear?,Blue,right,1000,1000,1,0,p1")
        #expect(csv[4] == #""Ben, the 2nd",1,What colour was the gear?,Red,not right,0,0,2,0,p2"#)
        #expect(csv.count == 1 + 6 + 1)
    }
}
