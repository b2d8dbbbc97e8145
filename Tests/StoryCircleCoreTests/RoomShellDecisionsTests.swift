import Testing
@testable import StoryCircleCore

/// What the core decides so that the shell only carries it out: pongs and the round trip they report, what
/// goes out at once, when a room finished, and which messages are replies.
@Suite("Decisions the room makes for its shell")
struct RoomShellDecisionsTests {
    @Test func aPingIsAnsweredAtOnceWithTheEventsServerTime() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let directives = room.apply(.message(ana.connection, .ping(id: 7, clientTime: 1.5, roundTripMs: nil), at: room.now))
        #expect(directives == [.sendAtOnce(.pong(Pong(id: 7, clientTime: 1.5, serverTime: room.now)), to: [ana.connection])])
    }

    @Test func anUnreadableMessageIsAnsweredAtOnceAndChangesNothing() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let error = RoomError(.invalidJSON, "That was not JSON.")
        #expect(room.apply(.unreadable(ana.connection, error, at: room.now)) == [.sendAtOnce(.error(error), to: [ana.connection])])
        #expect(room.state.connectionCount == 1)
    }

    /// Half the reported round trip is credited to an answer's speed, up to the grace; a page cannot claim
    /// more than the most a client may report, nor less than nothing.
    @Test func theRoundTripAPageReportsIsCreditedToItsAnswersClampedAndForgottenWhenItLeaves() throws {
        func points(reporting roundTrip: Int?) throws -> Int {
            var room = RoomDriver()
            let ana = try room.child("Ana")
            try room.startAndPrepare()
            room.narrateToFirstQuestion()
            room.advance(by: 3_000)
            let correct = room.state.story.quiz.questions[0].answer
            room.answer(ana, question: 0, option: correct, roundTripMs: roundTrip)
            room.advance(by: 60_000)
            return try #require(room.state.players.first?.score)
        }
        let none = try points(reporting: nil)
        let some = try points(reporting: 400)
        #expect(some > none, "a slow connection's answer is credited for its trip")
        #expect(try points(reporting: -500) == none, "a negative round trip counts as none")
        let most = try points(reporting: RoomState.maximumReportedRoundTripMs)
        #expect(try points(reporting: 1_000_000) == most)

        var room = RoomDriver()
        let ana = try room.child("Ana")
        room.apply(.message(ana.connection, .ping(id: 1, clientTime: nil, roundTripMs: 300), at: room.now))
        #expect(room.state.roundTrips[ana.connection] == 300)
        room.apply(.disconnected(ana.connection, at: room.now))
        #expect(room.state.roundTrips[ana.connection] == nil)
    }

    @Test func endingTheRoomRecordsWhenAndStopsNarration() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        try room.command(.start)
        #expect(room.state.finishedAt == nil)
        room.advance(by: 1_234)
        let ended = try room.command(.end)
        #expect(room.state.finishedAt == room.now)
        #expect(ended.contains(.stopNarration), "narration still being prepared is not wanted any more")
    }

    @Test func aRestoredFinishedRoomKnowsWhenItFinished() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        room.advance(by: 5_000)
        try room.command(.end)
        let finished = try #require(room.state.finishedAt)
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now + 60_000)
        #expect(restored.finishedAt == finished)
        let (unfinished, _) = RoomState.restore(RoomDriver().archive(), lookalikes: LookalikeTable(), at: room.now)
        #expect(unfinished.finishedAt == nil)
    }

    @Test func repliesAreTheMessagesThatAnswerOneClient() throws {
        var room = RoomDriver()
        let teacher = room.teacher()
        let welcome = try #require(room.messages(to: teacher).first)
        let replies: [ServerMessage] = [
            welcome,
            .answerAck(AnswerAck(question: 0, option: 1)), .error(RoomError(.notOpen, "Not open.")),
            .pong(Pong(id: 1, clientTime: nil, serverTime: ServerTime(milliseconds: 1))),
        ]
        #expect(replies.allSatisfy { $0.isReply })
        #expect(!ServerMessage.storage(StoreHealthStatus(ok: true)).isReply)
        #expect(!ServerMessage.kicked(Notice(code: .kicked, message: "Bye")).isReply)
    }
}
