import Foundation
import Testing
@testable import StoryCircleCore

@Suite("Narration in a room")
struct RoomNarrationTests {
    @Test func eventsComeInOrderWithTimestampsFromTheDurations() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let start = room.now
        try room.command(.start)
        let request = try #require(room.narrationRequests.last)
        #expect(request.sentences == Fixtures.story.sentences)
        room.apply(.narration(.progress(preparation: request.preparation, ready: 2, total: 3), at: room.now))
        room.advance(by: 40)
        room.prepared()
        room.narrateToFirstQuestion()

        let messages = room.messages(to: ana.connection).filter { $0.type != "welcome" }
        #expect(messages.map(\.type) == [
            "preparing", "preparing", "narration.plan", "progress", "progress", "progress",
            "narration.complete", "quiz.unlock", "question",
        ])
        let planStart = start + 40 + 2_000
        guard case .narrationPlan(let plan) = messages[2] else { Issue.record("expected .narrationPlan"); return }
        #expect(plan.startAt == planStart)
        #expect(plan.playsAudio)
        #expect(plan.sentences.map(\.durationMs) == [1_000, 2_000, 3_000])
        let progress = messages.compactMap { if case .progress(let p) = $0 { p } else { nil } }
        // Each sentence starts when the one before it ends, plus the gap.
        #expect(progress == [
            SentenceProgress(sentence: 0, at: planStart),
            SentenceProgress(sentence: 1, at: planStart + 1_000 + 300),
            SentenceProgress(sentence: 2, at: planStart + 1_300 + 2_000 + 300),
        ])
        let end = planStart + 3_600 + 3_000 + 300
        #expect(messages[6] == .narrationComplete(Instant(at: end)))
        #expect(messages[7] == .quizUnlock(QuizUnlock(at: end + 1_500, questionCount: 3)))
        guard case .question(let question) = messages[8] else { Issue.record("expected .question"); return }
        #expect(question.opensAt == end + 1_500)
        #expect(question.deadline == end + 1_500 + 20_000)
    }

    @Test func aVoiceChosenInTheLobbyIsReadAheadAndNothingElseAsksForIt() throws {
        var room = RoomDriver()
        func readAheads(_ directives: [RoomDirective]) -> [NarrationRequest] {
            directives.compactMap { if case .readAhead(let request) = $0 { request } else { nil } }
        }
        let natural = "piper:en_US-joe-medium"
        let chosen = readAheads(try room.command(.settings(RoomSettingsPatch(voice: natural))))
        var expected = Fixtures.story.narration
        expected.voice = natural
        #expect(chosen.map(\.settings) == [expected])
        #expect(chosen.first?.sentences == Fixtures.story.sentences)
        #expect(chosen.first?.questions == nil, "questions are read only when the story is prepared")
        // The same voice again, or a change that does not touch the voice: nothing new to read.
        #expect(readAheads(try room.command(.settings(RoomSettingsPatch(voice: " \(natural) ")))).isEmpty)
        #expect(readAheads(try room.command(.settings(RoomSettingsPatch(timer: false, answerGrid: true)))).isEmpty)
        // Back to the story's own voice: read ahead with that one.
        #expect(readAheads(try room.command(.settings(RoomSettingsPatch(voice: "")))).map(\.settings) == [Fixtures.story.narration])
        #expect(room.narrationRequests.isEmpty, "reading ahead is not preparing: the room stays in its lobby")
        #expect(room.state.phase == .lobby)

        // Once the story is being prepared the preparation reads it; a failed one is retried, not read ahead.
        try room.command(.start)
        room.apply(.narration(.failed(preparation: try #require(room.narrationRequests.last).preparation, problem: NarrationProblem(.synthesisFailed, "no")), at: room.now))
        #expect(readAheads(try room.command(.settings(RoomSettingsPatch(voice: natural)))).isEmpty)
    }

    /// A room brought back in its lobby (a restart, or another node taking it) reads its story ahead there;
    /// one brought back later in its life does not.
    @Test func aRoomRestoredInItsLobbyIsReadAheadAndOneRestoredLaterIsNot() throws {
        var room = RoomDriver()
        try room.command(.settings(RoomSettingsPatch(voice: "piper:en_US-joe-medium")))
        let (_, inLobby) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(inLobby.compactMap { if case .readAhead(let request) = $0 { request.settings.voice } else { nil } } == ["piper:en_US-joe-medium"])
        try room.startAndPrepare()
        let (_, started) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(!started.contains { if case .readAhead = $0 { true } else { false } })
    }

    @Test func audioGoesOnlyWhereTheModeSays() throws {
        for mode in NarrationMode.allCases {
            var room = RoomDriver(settings: RoomSettings(narration: mode, readQuestions: true))
            let ana = try room.child("Ana")
            let dashboard = room.dashboard()
            try room.command(.start)
            room.prepared(Fixtures.plan(withQuestionAudio: true))
            room.narrateToFirstQuestion()
            func plan(_ c: ConnectionID) -> NarrationPlanMessage? {
                room.messages(to: c).compactMap { if case .narrationPlan(let p) = $0 { p } else { nil } }.first
            }
            func question(_ c: ConnectionID) -> QuestionView? {
                room.messages(to: c).compactMap { if case .question(let q) = $0 { q } else { nil } }.first
            }
            let childHears = mode == .devices, dashboardHears = mode == .dashboard
            #expect(plan(ana.connection)?.sentences.allSatisfy { ($0.audio != nil) == childHears } == true)
            #expect(plan(dashboard)?.sentences.allSatisfy { ($0.audio != nil) == dashboardHears } == true)
            #expect((question(ana.connection)?.audio != nil) == childHears)
            #expect((question(dashboard)?.audio != nil) == dashboardHears)
            #expect(room.narrationRequests[0].questions != nil || mode == .off)
        }
    }

    @Test func readingQuestionsAloudAsksForTheirAudio() throws {
        var room = RoomDriver(settings: RoomSettings(readQuestions: true))
        try room.command(.start)
        #expect(room.narrationRequests[0].questions?.first == "What colour was the gear? … Red … Green … Blue … Yellow")
        #expect(room.state.phase == .preparing(ready: 0, total: 6))
    }

    @Test func aLateTimerFromBeforeAPauseIsIgnored() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.startAndPrepare()
        let stale = try #require(room.timers[.narration])
        try room.command(.pause)
        room.apply(.timer(stale.timer, at: stale.at))
        #expect(room.messages(to: ana.connection).last == .paused(Paused(what: "narration", sentence: 0, remainingMs: nil)))
    }
}

@Suite("Recovery")
struct RoomRecoveryTests {
    @Test func aRoomRestoredMidQuestionKeepsAnswersAndScoresAndReopensTheQuestion() throws {
        var room = RoomDriver()
        let kids = try (1...4).map { try room.child("Kid \($0)") }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        for (i, kid) in kids.enumerated() { room.advance(by: 700); room.answer(kid, question: 0, option: i % 2 == 0 ? 2 : 1) }
        try room.command(.next)
        room.waitForOpening()
        room.advance(by: 1_200)
        room.answer(kids[0], question: 1, option: 0)
        room.answer(kids[1], question: 1, option: 3)
        let before = room.state.results()

        let restartAt = room.now + 60_000
        let (restored, directives) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: restartAt)
        var again = RoomDriver(restoring: restored, at: restartAt, directives: directives)
        guard case .question(let run) = again.state.phase else { Issue.record("not reopened: \(again.state.phase)"); return }
        #expect(run.index == 1)
        #expect(run.opensAt == restartAt + 5_000)
        #expect(run.deadline == restartAt + 5_000 + 10_000, "the reopened question gets its full time again")
        #expect(again.state.results() == before, "every answer and score survives")
        #expect(again.state.connectedPlayerCount == 0)

        // Children come back with their resume tokens and find their points.
        let back = again.newConnection()
        again.apply(.hello(back, .rejoin(token: kids[0].token), at: again.now))
        guard case .welcome(let welcome) = again.messages(to: back).last else { Issue.record("no welcome"); return }
        #expect(welcome.room.you?.score == before.players.first { $0.nickname == "Kid 1" }?.score)
        #expect(welcome.room.yourAnswer == 0)
        again.advance(to: run.opensAt)
        again.apply(.message(back, .answer(question: 1, option: 1), at: again.now))
        #expect(again.lastError(to: back)?.code == .alreadyAnswered)
        // New players get fresh ids.
        #expect(try again.child("Newcomer").id == "p5")
    }

    @Test func aRoomRestoredWhileNarratingPreparesAgain() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        try room.startAndPrepare()
        room.advance(by: 3_000)
        let (restored, directives) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(restored.phase == .preparing(ready: 0, total: 3))
        #expect(directives.contains { if case .prepareNarration = $0 { true } else { false } })
    }

    @Test func aRoomRestoredAfterItsNarrationFailedTellsTheTeacherWhyAsACode() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        try room.command(.start)
        let request = try #require(room.narrationRequests.last)
        room.apply(.narration(.failed(preparation: request.preparation, problem: NarrationProblem(.synthesisFailed, "No sound.")), at: room.now))
        var (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(restored.phase == .failed(.notReadyAfterRestart))
        let teacher = ConnectionID(900)
        let welcome = restored.handle(.hello(teacher, .control(token: "teacher-secret"), at: room.now))
        let snapshots = welcome.compactMap { if case .send(.welcome(let w), _) = $0 { w.room } else { nil } }
        #expect(snapshots.map(\.errorReason) == [.notReadyAfterRestart])
        #expect(snapshots.map(\.error) == [NarrationProblem.notReadyAfterRestart.message])
    }

    @Test func finishedAndRevealAndLobbyRoomsComeBackAsTheyWere() throws {
        var room = RoomDriver(settings: RoomSettings(speedPoints: false))
        let ana = try room.child("Ana")
        try room.command(.lock)
        #expect(RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now).0.isLocked)
        #expect(RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now).0.phase == .lobby)
        try room.command(.unlock)
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ana, question: 0, option: 2)
        #expect(RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now).0.phase == .reveal(question: 0))
        try room.command(.end)
        let (finished, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(finished.phase == .finished)
        #expect(finished.results() == room.state.results())
        #expect(finished.settings.speedPoints == false)
    }

    @Test func skippedQuestionsAndKickedPlayersStaySoAfterARestart() throws {
        var room = RoomDriver(settings: RoomSettings(speedPoints: false))
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        let cat = try room.child("Cat")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ana, question: 0, option: 2)
        room.answer(ben, question: 0, option: 2)
        try room.command(.skip)
        room.waitForOpening()
        room.answer(ana, question: 1, option: 0)
        try room.command(.kick(player: "Cat"))
        try room.command(.reveal)
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(restored.results() == room.state.results())
        #expect(restored.results().questions.map(\.skipped) == [true, false, false])
        #expect(restored.playerCount == 2)
        #expect(restored.results().players.map(\.score) == [1_000, 0])
        _ = cat
    }
}
