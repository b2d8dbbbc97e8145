import Foundation
import Testing
@testable import StoryCircleCore

@Suite("Teacher commands")
struct RoomCommandTests {
    /// A room with Ana and Ben at the first question, open.
    private func roomAtFirstQuestion(settings: RoomSettings = .init()) throws -> (RoomDriver, RoomDriver.Child, RoomDriver.Child) {
        var room = RoomDriver(settings: settings)
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        return (room, ana, ben)
    }

    @Test func pauseAndResumeNarrationRestartsTheSentence() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.startAndPrepare()
        room.advance(by: 2_500)
        try room.command(.pause)
        guard case .narrating(let paused) = room.state.phase else { Issue.record("not narrating"); return }
        #expect(paused.pausedAt == room.now)
        #expect(room.messages(to: ana.connection).last == .paused(Paused(what: "narration", sentence: 0, remainingMs: nil)))
        room.advance(by: 60_000)
        #expect(room.state.phase == .narrating(paused), "nothing moves while paused")
        #expect(throws: RoomError(.invalidCommand, "The room is already paused.", params: ["problem": "already_paused", "command": "pause"])) { try room.command(.pause) }

        try room.command(.resume)
        let restart = room.now + RoomTiming().resumeLeadMs
        #expect(Array(room.messages(to: ana.connection).suffix(2)) == [.resumed(Resumed()), .progress(SentenceProgress(sentence: 0, at: restart))])
        room.advance(to: restart + 1_000 + 300)
        #expect(room.messages(to: ana.connection).last == .progress(SentenceProgress(sentence: 1, at: restart + 1_300)))
    }

    @Test func replayStartsTheStoryAgain() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.startAndPrepare()
        room.advance(by: 5_000)
        try room.command(.replay)
        #expect(room.messages(to: ana.connection).last == .progress(SentenceProgress(sentence: 0, at: room.now + 800)))
        room.narrateToFirstQuestion()
        #expect(room.messages(to: ana.connection).filter { if case .narrationComplete = $0 { true } else { false } }.count == 1)
        #expect(throws: RoomError.self) { try room.command(.replay) }
    }

    @Test func pauseDuringAQuestionMovesTheDeadline() throws {
        var (room, ana, _) = try roomAtFirstQuestion()
        guard case .question(let run) = room.state.phase, let deadline = run.deadline else { Issue.record("no question"); return }
        room.advance(by: 5_000)
        try room.command(.pause)
        #expect(room.messages(to: ana.connection).last == .paused(Paused(what: "question", sentence: nil, remainingMs: 15_000)))
        room.answer(ana, question: 0, option: 2)
        #expect(room.lastError(to: ana.connection)?.code == .roomPaused)
        room.advance(by: 60_000)
        #expect(room.state.phase.name == .question, "the deadline does not pass while paused")
        try room.command(.resume)
        #expect(room.messages(to: ana.connection).last == .resumed(Resumed(question: 0, opensAt: run.opensAt, deadline: deadline + 60_000)))
        room.advance(by: 1_000)
        room.answer(ana, question: 0, option: 2)
        let answer = try #require(room.state.results().players.first { $0.nickname == "Ana" }?.answers[0])
        #expect(answer.timeMs == 6_000, "time spent paused does not count against speed")
        room.advance(by: 14_250)
        #expect(room.state.phase == .reveal(question: 0))
    }

    @Test func revealEarlyAndNextAndFinish() throws {
        var (room, ana, ben) = try roomAtFirstQuestion()
        room.answer(ana, question: 0, option: 2)
        try room.command(.reveal)
        #expect(room.state.phase == .reveal(question: 0))
        let reveal = room.messages(to: ben.connection).compactMap { if case .reveal(let r) = $0 { r } else { nil } }.last
        #expect(reveal?.you?.outcome == .missed)
        #expect(reveal?.correctOption == 2)
        #expect(reveal?.explanation == "It was blue.")
        #expect(reveal?.distribution == [0, 0, 1, 0])
        #expect(throws: RoomError.self) { try room.command(.reveal) }
        try room.command(.next)
        guard case .question(let second) = room.state.phase else { Issue.record("no second question"); return }
        #expect(second.index == 1)
        #expect(second.opensAt == room.now + 1_000)
        try room.command(.next)
        #expect(room.state.phase == .reveal(question: 1), "next during a question reveals it")
        try room.command(.next)
        try room.command(.next)
        try room.command(.next)
        #expect(room.state.phase == .finished)
        #expect(throws: RoomError(.roomEnded, "This room has already ended.")) { try room.command(.next) }
    }

    @Test func skipGoesFromStoryToQuizAndPastAQuestionWithoutScoring() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.start)
        try room.command(.skip)
        #expect(room.messages(to: ana.connection).contains { if case .narrationComplete = $0 { true } else { false } })
        room.waitForOpening()
        room.answer(ana, question: 0, option: 2)
        #expect(room.state.phase == .reveal(question: 0))
        try room.command(.next)
        room.waitForOpening()
        room.answer(ana, question: 1, option: 0)
        try room.command(.next)
        room.waitForOpening()
        room.advance(by: 3_000)
        try room.command(.skip)
        #expect(room.state.phase == .finished)
        let results = room.state.results()
        #expect(results.questions.map(\.skipped) == [false, false, true])
        #expect(results.players[0].score == 1_000 + 1_100, "the second correct answer in a row has the streak bonus")
        let finalResults = room.messages(to: ana.connection).compactMap { message -> [QuestionOutcome]? in
            if case .finished(let finished) = message { return finished.you?.results }
            return nil
        }.last
        #expect(finalResults == [QuestionOutcome.correct, .correct, .skipped])
    }

    @Test func skipAfterAFailedNarrationGoesStraightToTheQuiz() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        try room.command(.start)
        room.apply(.narration(.failed(preparation: room.narrationRequests[0].preparation, problem: NarrationProblem(.unknown, "No voice.")), at: room.now))
        try room.command(.skip)
        #expect(room.state.phase.name == .question)
    }

    @Test func kickRemovesAPlayerByNicknameOrID() throws {
        var (room, ana, ben) = try roomAtFirstQuestion()
        let dashboard = room.dashboard()
        room.answer(ana, question: 0, option: 2)
        try room.command(.kick(player: "BEN"))
        #expect(room.messages(to: ben.connection).last == .kicked(Notice(code: .kicked, message: "Your teacher removed you from this room.")))
        #expect(room.closed[ben.connection] == CloseReason(status: 4001, reason: "kicked"))
        #expect(room.state.phase == .reveal(question: 0), "with Ben gone, everyone left has answered")
        #expect(room.state.playerCount == 1)
        #expect(throws: RoomError(.playerNotFound, "No player called \"Ben\" is in this room.", params: ["player": "Ben"])) { try room.command(.kick(player: "Ben")) }
        let stranger = room.newConnection()
        room.apply(.hello(stranger, .rejoin(token: "nobody's token"), at: room.now))
        #expect(room.lastError(to: stranger)?.code == .badToken)
        try room.command(.kick(player: ana.id))
        #expect(room.state.playerCount == 0)
        room.advance(by: 300)
        let board = room.messages(to: dashboard).compactMap { if case .scoreboard(let s) = $0 { s.entries } else { nil } }.last
        #expect(board == [])
    }

    @Test func lockRefusesNewChildrenButNotReturningOnes() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.lock)
        #expect(room.messages(to: ana.connection).last == .room(RoomStatus(locked: true, settings: RoomSettings(), language: "en")))
        #expect(room.join("Ben") == nil)
        #expect(room.lastError(to: ConnectionID(2))?.code == .roomLocked)
        let back = room.newConnection()
        room.apply(.hello(back, .rejoin(token: ana.token), at: room.now))
        #expect(room.state.role(of: back) == .child)
        try room.command(.unlock)
        _ = try room.child("Ben")
    }

    @Test func endFinishesFromAnyPhaseAndRefusesNewJoins() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.end)
        #expect(room.state.phase == .finished)
        #expect(room.messages(to: ana.connection).last.map { if case .finished = $0 { true } else { false } } == true)
        #expect(room.join("Late") == nil)
        #expect(room.lastError(to: ConnectionID(2))?.code == .roomEnded)
    }

    @Test func settingsChangeOnlyInTheLobbyAndAreChecked() throws {
        var room = RoomDriver()
        try room.command(.settings(RoomSettingsPatch(speedPoints: false, questionSeconds: 30)))
        #expect(room.state.settings.speedPoints == false)
        #expect(room.state.settings.questionSeconds == 30)
        #expect(throws: RoomError(.invalidSettings, "questionSeconds must be from 5 to 300.", params: ["setting": "questionSeconds", "min": "5", "max": "300"])) { try room.command(.settings(RoomSettingsPatch(questionSeconds: 3))) }
        #expect(room.state.settings.questionSeconds == 30, "a refused change changes nothing")
        try room.command(.start)
        #expect(throws: RoomError.self) { try room.command(.settings(RoomSettingsPatch(timer: false))) }
    }

    @Test func commandsOutOfPlaceAreRefusedWithReasons() throws {
        var room = RoomDriver()
        // Each refusal names its problem and command, for the teacher's page to word.
        #expect(throws: RoomError(.invalidCommand, "Nothing is playing that could be paused.", params: ["problem": "nothing_to_pause", "command": "pause"])) { try room.command(.pause) }
        #expect(throws: RoomError(.invalidCommand, "The room is not paused.", params: ["problem": "not_paused", "command": "resume"])) { try room.command(.resume) }
        #expect(throws: RoomError.self) { try room.command(.retry) }
        #expect(throws: RoomError(.invalidCommand, "The room has not started yet; use start.", params: ["problem": "not_started", "command": "next"])) { try room.command(.next) }
        #expect(throws: RoomError(.invalidCommand, "The room has not started yet; use start.", params: ["problem": "not_started", "command": "skip"])) { try room.command(.skip) }
        #expect(throws: RoomError(.invalidCommand, "Retry is for when the narration could not be prepared, and nothing has failed.", params: ["problem": "nothing_failed", "command": "retry"])) { try room.command(.retry) }
        #expect(throws: RoomError(.invalidCommand, "\"dance\" is not a command. Commands: \(TeacherCommand.names.joined(separator: ", ")).", params: ["problem": "unknown_command", "command": "dance"])) {
            _ = try TeacherCommand.named("dance", player: nil, settings: nil)
        }
        #expect(throws: RoomError.self) { try room.command(.reveal) }
        #expect(throws: RoomError.self) { try room.command(.replay) }
        #expect(room.state.phase == .lobby)
    }
}

@Suite("Answers")
struct RoomAnswerTests {
    private func roomAtFirstQuestion(settings: RoomSettings = .init(), children: Int = 2) throws -> (RoomDriver, [RoomDriver.Child]) {
        var room = RoomDriver(settings: settings)
        let kids = try (1...children).map { try room.child("Kid \($0)") }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        return (room, kids)
    }

    @Test func duplicateAndLateAndEarlyAnswersHaveDistinctCodes() throws {
        var (room, kids) = try roomAtFirstQuestion(children: 3)
        room.answer(kids[0], question: 0, option: 1)
        room.answer(kids[0], question: 0, option: 2)
        #expect(room.lastError(to: kids[0].connection)?.code == .alreadyAnswered)
        room.answer(kids[1], question: 0, option: 9)
        #expect(room.lastError(to: kids[1].connection)?.code == .invalidOption)
        room.answer(kids[1], question: 1, option: 0)
        #expect(room.lastError(to: kids[1].connection)?.code == .notOpen)
        guard case .question(let run) = room.state.phase, let deadline = run.deadline else { Issue.record("no question"); return }
        room.advance(to: deadline + 200)
        room.answer(kids[1], question: 0, option: 2, roundTripMs: 100)
        #expect(room.lastError(to: kids[1].connection)?.code == .tooLate, "50 ms of credit does not cover 200 ms late")
        room.answer(kids[2], question: 0, option: 2, roundTripMs: 480)
        #expect(room.lastError(to: kids[2].connection) == nil, "240 ms of credit covers 200 ms late")
        room.advance(to: deadline + 250)
        #expect(room.state.phase == .reveal(question: 0))
        room.answer(kids[1], question: 0, option: 2)
        #expect(room.lastError(to: kids[1].connection)?.code == .questionClosed)
        // The first answer counted, not the repeat.
        #expect(room.state.results().players.first { $0.nickname == "Kid 1" }?.answers[0].option == 1)
    }

    @Test func aQuestionThatDoesNotExistIsNotOpenInEveryPhase() throws {
        // A question that does not exist is `not_open`, never `question_closed`, though -1 comes "before"
        // question 0: no such question was ever open.
        var (room, kids) = try roomAtFirstQuestion(children: 2)
        for question in [-1, Int.min, room.state.story.quiz.questions.count, Int.max] {
            room.answer(kids[0], question: question, option: 0)
            #expect(room.lastError(to: kids[0].connection)?.code == .notOpen, "question \(question) while one is open")
        }
        room.answer(kids[0], question: 0, option: 0)
        room.answer(kids[1], question: 0, option: 0)
        #expect(room.state.phase == .reveal(question: 0))
        room.answer(kids[0], question: -1, option: 0)
        #expect(room.lastError(to: kids[0].connection)?.code == .notOpen, "question -1 at a reveal")
        room.answer(kids[0], question: 0, option: 0)
        #expect(room.lastError(to: kids[0].connection)?.code == .questionClosed, "a real question that has closed still says so")
    }

    @Test func anAnswerBeforeTheQuestionOpensIsRefused() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.startAndPrepare()
        while case .narrating = room.state.phase { room.advance(by: 100) }
        room.answer(ana, question: 0, option: 2)
        #expect(room.lastError(to: ana.connection) == RoomError(.notOpen, "The question has not opened yet."))
    }

    @Test func acknowledgementWaitsForThePersistedAnswer() throws {
        var (room, kids) = try roomAtFirstQuestion()
        let directives = room.answer(kids[0], question: 0, option: 2)
        let persist = directives.firstIndex { if case .persist(.answer) = $0 { true } else { false } }
        let ack = directives.firstIndex { if case .send(.answerAck, _) = $0 { true } else { false } }
        #expect(persist != nil && ack != nil && persist! < ack!)
        #expect(directives.contains(.send(.answerAck(AnswerAck(question: 0, option: 2)), to: [kids[0].connection])))
    }

    @Test func revealWaitsForEveryoneConnectedAndALeaverCompletesItWhenTheirReconnectionGraceEnds() throws {
        var (room, kids) = try roomAtFirstQuestion(children: 3)
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 1)
        #expect(room.state.phase.name == .question)
        room.apply(.disconnected(kids[2].connection, at: room.now))
        #expect(room.state.phase.name == .question, "the leaver may be reconnecting with a kept tap")
        room.advance(by: RoomState.reconnectGraceMs)
        #expect(room.state.phase == .reveal(question: 0))
    }

    @Test func aQuestionResumedWhenEveryoneStillHereHasAnsweredIsRevealedAtOnce() throws {
        // While paused, the one child who had not answered leaves: nothing is revealed during the pause,
        // and without a question timer nothing else would ever reveal it.
        var (room, kids) = try roomAtFirstQuestion(settings: RoomSettings(timer: false), children: 3)
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 1)
        try room.command(.pause)
        room.apply(.disconnected(kids[2].connection, at: room.now))
        room.advance(by: RoomState.reconnectGraceMs)
        #expect(room.state.phase.name == .question, "nothing is revealed during a pause")
        try room.command(.resume)
        #expect(room.state.phase == .reveal(question: 0), "the leaver's reconnection grace ran out during the pause")
    }

    @Test func noTimerModeWaitsForEveryoneAndScoresFlat() throws {
        var (room, kids) = try roomAtFirstQuestion(settings: RoomSettings(streakBonus: false, timer: false))
        guard case .question(let run) = room.state.phase else { Issue.record("no question"); return }
        #expect(run.deadline == nil)
        room.advance(by: 600_000)
        #expect(room.state.phase.name == .question)
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 2)
        #expect(room.state.results().players.map(\.score) == [1_000, 1_000])
    }

    @Test func speedPointsOffScoresEveryCorrectAnswerTheSame() throws {
        var (room, kids) = try roomAtFirstQuestion(settings: RoomSettings(speedPoints: false))
        room.answer(kids[0], question: 0, option: 2)
        room.advance(by: 15_000)
        room.answer(kids[1], question: 0, option: 2)
        #expect(room.state.results().players.map(\.score) == [1_000, 1_000])
        #expect(room.state.results().players.map(\.rank) == [1, 1])
    }

    @Test func speedPointsOnRewardsTheFaster() throws {
        var (room, kids) = try roomAtFirstQuestion()
        room.answer(kids[0], question: 0, option: 2)
        room.advance(by: 10_250)
        room.answer(kids[1], question: 0, option: 2)
        #expect(room.state.results().players.map(\.score) == [1_000, 750])
    }

    @Test func networkDelayIsCreditedUpToTheBound() throws {
        var (room, kids) = try roomAtFirstQuestion()
        room.advance(by: 10_400)
        room.answer(kids[0], question: 0, option: 2, roundTripMs: 300)
        room.answer(kids[1], question: 0, option: 2, roundTripMs: 5_000)
        let times = room.state.results().players.sorted { $0.nickname < $1.nickname }.map { $0.answers[0].timeMs }
        #expect(times == [10_250, 10_150])
    }

    @Test func streakBonusOnAndOff() throws {
        for streaks in [true, false] {
            var (room, kids) = try roomAtFirstQuestion(settings: RoomSettings(speedPoints: false, streakBonus: streaks), children: 1)
            room.answer(kids[0], question: 0, option: 2)
            try room.command(.next)
            room.waitForOpening()
            room.answer(kids[0], question: 1, option: 0)
            try room.command(.next)
            room.waitForOpening()
            room.answer(kids[0], question: 2, option: 1)
            #expect(room.state.results().players[0].score == (streaks ? 1_000 + 1_100 + 1_200 : 3_000))
        }
    }

    @Test func aWrongAnswerBreaksTheStreak() throws {
        var (room, kids) = try roomAtFirstQuestion(settings: RoomSettings(speedPoints: false), children: 1)
        room.answer(kids[0], question: 0, option: 2)
        try room.command(.next)
        room.waitForOpening()
        room.answer(kids[0], question: 1, option: 3)
        try room.command(.next)
        room.waitForOpening()
        room.answer(kids[0], question: 2, option: 1)
        #expect(room.state.results().players[0].score == 2_000)
    }

    @Test func tiesShareARankOnTheRevealAndTheNextIsSkipped() throws {
        var (room, kids) = try roomAtFirstQuestion(settings: RoomSettings(speedPoints: false, competitive: true), children: 3)
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 2)
        room.answer(kids[2], question: 0, option: 0)
        let ranks = kids.map { kid in room.messages(to: kid.connection).compactMap { if case .reveal(let r) = $0 { r.you?.standing.rank } else { nil } }.last }
        #expect(ranks == [1, 1, 3])
    }
}
