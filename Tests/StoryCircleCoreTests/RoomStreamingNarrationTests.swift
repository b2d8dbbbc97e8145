import Foundation
import Testing
@testable import StoryCircleCore

/// A narrator that streams: the story starts with its first sentence, the rest arrive while it plays.
/// Fixture sentence i lasts (i + 1) s; the gap between sentences is 300 ms, the plan's lead 2 s.
@Suite("Streamed narration")
struct RoomStreamingNarrationTests {
    private func sentence(_ index: Int, in story: Story = Fixtures.story) -> NarratedSentence {
        Fixtures.plan(for: story).sentences[index]
    }

    private func stream(_ room: inout RoomDriver, _ index: Int, notice: NarrationNotice? = nil) {
        let request = room.narrationRequests.last!
        room.apply(.narration(.sentence(preparation: request.preparation, sentence(index), notice: notice), at: room.now))
    }

    private func finishStream(_ room: inout RoomDriver, withQuestionAudio: Bool = false) {
        let request = room.narrationRequests.last!
        room.apply(.narration(.prepared(preparation: request.preparation, Fixtures.plan(withQuestionAudio: withQuestionAudio)), at: room.now))
    }

    private func progress(_ room: RoomDriver, to connection: ConnectionID) -> [SentenceProgress] {
        room.messages(to: connection).compactMap { if case .progress(let p) = $0 { p } else { nil } }
    }

    private func plans(_ room: RoomDriver, to connection: ConnectionID) -> [NarrationPlanMessage] {
        room.messages(to: connection).compactMap { if case .narrationPlan(let p) = $0 { p } else { nil } }
    }

    private func streamed(_ room: RoomDriver, to connection: ConnectionID) -> [NarrationSentenceMessage] {
        room.messages(to: connection).compactMap { if case .narrationSentence(let s) = $0 { s } else { nil } }
    }

    @Test func theStoryStartsWithItsFirstSentenceAndTheRestFollowOnTheSameSchedule() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let board = room.dashboard()
        try room.command(.start)
        let planStart = room.now + 2_000
        stream(&room, 0)
        #expect(room.state.phase.name == .narrating)
        let plan = try #require(plans(room, to: ana.connection).first)
        #expect(plan.startAt == planStart)
        #expect(plan.sentences.map(\.index) == [0])
        #expect(plan.total == 3, "the pages know more sentences are coming")
        room.advance(by: 500)
        stream(&room, 1)
        room.advance(by: 500)
        stream(&room, 2)
        finishStream(&room)
        room.narrateToFirstQuestion()

        #expect(streamed(room, to: ana.connection).map(\.sentence.index) == [1, 2])
        #expect(streamed(room, to: ana.connection).map(\.ready) == [2, 3])
        #expect(streamed(room, to: ana.connection).allSatisfy { $0.sentence.audio != nil && $0.total == 3 })
        #expect(streamed(room, to: board).count == 2 && streamed(room, to: board).allSatisfy { $0.sentence.audio == nil }, "silent screens get no audio")
        // Ready ahead of time: exactly the schedule a whole plan gives (no wait anywhere).
        #expect(progress(room, to: ana.connection) == [
            SentenceProgress(sentence: 0, at: planStart),
            SentenceProgress(sentence: 1, at: planStart + 1_300),
            SentenceProgress(sentence: 2, at: planStart + 3_600),
        ])
        let end = planStart + 3_600 + 3_300
        #expect(room.messages(to: ana.connection).contains(.narrationComplete(Instant(at: end))))
    }

    @Test func theStoryWaitsAtABoundaryForASentenceNotReadyYetNeverCutsOrOverlaps() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.start)
        let planStart = room.now + 2_000
        stream(&room, 0)
        // Sentence 0 ends at planStart + 1 000; its boundary (with the gap) passes with nothing to play.
        room.advance(to: planStart + 5_000)
        #expect(progress(room, to: ana.connection).map(\.sentence) == [0], "nothing starts that is not ready")
        guard case .narrating(let run) = room.state.phase else { Issue.record("still narrating"); return }
        #expect(run.waiting && run.sentence == 0)
        #expect(room.timers[.narration] == nil, "nothing scheduled while waiting")

        let arrived = room.now
        stream(&room, 1)
        #expect(progress(room, to: ana.connection).last == SentenceProgress(sentence: 1, at: arrived + 800), "announced ahead, after it reached every screen")
        // Sentence 2 arrives in time; the whole story is then prepared before its end.
        stream(&room, 2)
        finishStream(&room)
        room.narrateToFirstQuestion()
        let second = arrived + 800
        #expect(progress(room, to: ana.connection).last == SentenceProgress(sentence: 2, at: second + 2_000 + 300))
        let end = second + 2_300 + 3_300
        #expect(room.messages(to: ana.connection).contains(.narrationComplete(Instant(at: end))))
    }

    @Test func theQuizUnlocksForEveryChildAtOneInstantWhenTheLastSentenceWaitedForTheRest() throws {
        var room = RoomDriver(settings: RoomSettings(readQuestions: true))
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.command(.start)
        stream(&room, 0)
        stream(&room, 1)
        stream(&room, 2)
        // The story ends while the questions' audio is still being synthesised: the room holds there.
        room.advance(by: 20_000)
        #expect(room.state.phase.name == .narrating)
        #expect(!room.messages(to: ana.connection).contains { $0.type == "quiz.unlock" })

        let done = room.now
        finishStream(&room, withQuestionAudio: true)
        let unlocks = room.log.filter { if case .send(.quizUnlock, _) = $0 { true } else { false } }
        #expect(unlocks.count == 1)
        #expect(unlocks.first == .send(.quizUnlock(QuizUnlock(at: done + 1_500, questionCount: 3)), to: [ana.connection, ben.connection]))
        #expect(room.messages(to: ana.connection).contains(.narrationComplete(Instant(at: done))))
    }

    @Test func aLateJoinerGetsEverySentenceSoFarAndTheRestAsTheyCome() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        try room.command(.start)
        stream(&room, 0)
        stream(&room, 1)
        let cat = try room.child("Cat")
        let welcome = try #require(room.messages(to: cat.connection).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first)
        #expect(welcome.room.plan?.sentences.map(\.index) == [0, 1])
        #expect(welcome.room.plan?.total == 3)
        #expect(welcome.room.sentence == 0)
        stream(&room, 2)
        #expect(streamed(room, to: cat.connection).map(\.sentence.index) == [2])
        finishStream(&room)
        let teacher = room.teacher()
        let whole = try #require(room.messages(to: teacher).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first)
        #expect(whole.room.plan?.sentences.count == 3)
        #expect(whole.room.plan?.total == nil, "a whole plan does not grow")
    }

    @Test func aSentenceOutOfOrderOrRepeatedIsIgnored() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.start)
        stream(&room, 1)
        #expect(room.state.phase.name == .preparing, "a story starts at its first sentence")
        stream(&room, 0)
        stream(&room, 0)
        stream(&room, 2)
        #expect(streamed(room, to: ana.connection).isEmpty)
        #expect(room.state.plan?.sentences.count == 1)
    }

    @Test func theNaturalVoiceFailingMidStoryStartsItAgainFromTheFirstSentenceWithTheNotice() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let teacher = room.teacher()
        try room.command(.start)
        stream(&room, 0)
        stream(&room, 1)
        let stale = try #require(room.timers[.narration])
        let request = try #require(room.narrationRequests.last)
        room.apply(.narration(.restarted(preparation: request.preparation), at: room.now))
        #expect(room.state.phase == .preparing(ready: 0, total: 3))
        #expect(room.messages(to: ana.connection).last == .preparing(Preparing(ready: 0, total: 3)))
        #expect(room.persisted.last == .phase(PhaseRecord(phase: .preparing, at: room.now)))
        room.apply(.timer(stale.timer, at: stale.at))
        #expect(progress(room, to: ana.connection).count == 1, "the first voice's schedule is over")

        room.advance(by: 200)
        let restartAt = room.now
        stream(&room, 0, notice: .naturalVoiceFallback)
        let childPlans = plans(room, to: ana.connection)
        let teacherPlans = plans(room, to: teacher)
        #expect(childPlans.count == 2 && teacherPlans.count == 2)
        #expect(childPlans.last?.startAt == restartAt + 2_000 && childPlans.last?.sentences.count == 1)
        #expect(childPlans.last?.notice == nil, "children are never told")
        #expect(teacherPlans.first?.notice == nil)
        #expect(teacherPlans.last?.notice == .naturalVoiceFallback)
        #expect(progress(room, to: ana.connection).last == SentenceProgress(sentence: 0, at: restartAt + 2_000))
        stream(&room, 1, notice: .naturalVoiceFallback)
        stream(&room, 2, notice: .naturalVoiceFallback)
        finishStream(&room)
        room.narrateToFirstQuestion()
        #expect(room.state.phase.name == .question)
        #expect(room.state.plan?.notice == .naturalVoiceFallback, "the whole plan keeps the notice")
    }

    /// The natural voice failed on a question after the story was streamed: the questions are read by
    /// espeak-ng and the whole plan carries the notice. The teacher is told when it is known, not at the
    /// next full update; children and dashboards never are, and a teacher who connects later has it.
    @Test func theQuestionsNoticeReachesTheTeacherAtOnceAndNoOneElse() throws {
        var room = RoomDriver(settings: RoomSettings(readQuestions: true))
        let ana = try room.child("Ana")
        let board = room.dashboard()
        let teacher = room.teacher()
        try room.command(.start)
        stream(&room, 0)
        stream(&room, 1)
        stream(&room, 2)
        let before = room.messages(to: teacher).count
        var whole = Fixtures.plan(withQuestionAudio: true)
        whole.notice = .naturalVoiceQuestionsFallback
        let request = try #require(room.narrationRequests.last)
        room.apply(.narration(.prepared(preparation: request.preparation, whole), at: room.now))

        #expect(Array(room.messages(to: teacher).dropFirst(before)) == [.narrationNotice(.naturalVoiceQuestionsFallback)])
        #expect(!room.messages(to: ana.connection).contains { $0.type == "narration.notice" })
        #expect(!room.messages(to: board).contains { $0.type == "narration.notice" })
        #expect(room.state.plan?.notice == .naturalVoiceQuestionsFallback)
        let later = room.teacher()
        let welcome = try #require(room.messages(to: later).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first)
        #expect(welcome.room.plan?.notice == .naturalVoiceQuestionsFallback)
        room.narrateToFirstQuestion()
        #expect(room.messages(to: teacher).filter { $0.type == "narration.notice" }.count == 1, "told once")
    }

    /// A plan streamed with its notice from the first sentence (espeak-ng for the whole story) does not
    /// tell the teacher again when it is whole.
    @Test func aNoticeTheTeacherAlreadyHasIsNotSentAgain() throws {
        var room = RoomDriver()
        let teacher = room.teacher()
        try room.command(.start)
        stream(&room, 0, notice: .naturalVoiceFallback)
        stream(&room, 1, notice: .naturalVoiceFallback)
        stream(&room, 2, notice: .naturalVoiceFallback)
        var whole = Fixtures.plan(withQuestionAudio: false)
        whole.notice = .naturalVoiceFallback
        let request = try #require(room.narrationRequests.last)
        room.apply(.narration(.prepared(preparation: request.preparation, whole), at: room.now))
        #expect(!room.messages(to: teacher).contains { $0.type == "narration.notice" })
    }

    @Test func aFailureMidStoryPutsTheRoomInErrorAndRetryStartsAgain() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.start)
        stream(&room, 0)
        let request = try #require(room.narrationRequests.last)
        let problem = NarrationProblem(.synthesisFailed, "The story could not be read aloud.")
        room.apply(.narration(.failed(preparation: request.preparation, problem: problem), at: room.now))
        #expect(room.state.phase == .failed(problem))
        #expect(room.messages(to: ana.connection).last?.type == "narration.error")
        room.advance(by: 60_000)
        #expect(progress(room, to: ana.connection).count == 1, "nothing plays on after the failure")
        try room.command(.retry)
        #expect(room.narrationRequests.count == 2)
        stream(&room, 0)
        #expect(plans(room, to: ana.connection).count == 2)
    }

    @Test func aRoomRestoredMidStreamPreparesAgainAndStartsFromTheFirstSentence() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.start)
        stream(&room, 0)
        stream(&room, 1)
        let at = room.now + 3_000
        let (restored, startUp) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: at)
        var again = RoomDriver(restoring: restored, at: at, directives: startUp)
        let request = try #require(again.narrationRequests.last, "the restored room prepares its narration again")
        #expect(request.sentences == Fixtures.story.sentences)
        #expect(again.state.phase == .preparing(ready: 0, total: 3))
        _ = again.state.reattach([ana.connection], from: room.state, at: at)
        again.apply(.narration(.sentence(preparation: request.preparation, sentence(0), notice: nil), at: at))
        guard case .narrating(let run) = again.state.phase else { Issue.record("narrating again"); return }
        #expect(run.sentence == 0 && run.startedAt == at + 2_000)
    }

    @Test func pausedWhileWaitingTheSentenceArrivesAndResumingReplaysTheLastOne() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        try room.command(.start)
        stream(&room, 0)
        room.advance(by: 10_000)
        try room.command(.pause)
        stream(&room, 1)
        #expect(progress(room, to: ana.connection).map(\.sentence) == [0], "nothing starts while paused")
        try room.command(.resume)
        let resumedAt = room.now + 800
        #expect(progress(room, to: ana.connection).last == SentenceProgress(sentence: 0, at: resumedAt))
        stream(&room, 2)
        finishStream(&room)
        room.narrateToFirstQuestion()
        #expect(progress(room, to: ana.connection).map(\.sentence) == [0, 0, 1, 2])
    }
}
