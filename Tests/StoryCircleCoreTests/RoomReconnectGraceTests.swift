import Testing
@testable import StoryCircleCore

/// A question is revealed by itself once everyone has answered, but not while a child who dropped without
/// answering may still come back with a tap their page kept (a Wi-Fi blip, or the room moving to another
/// node): such a child holds the reveal up for `RoomState.reconnectGraceMs` from the drop, the room looks
/// again on a timer, and the teacher can reveal by hand at any moment.
@Suite struct RoomReconnectGraceTests {
    private let grace = RoomState.reconnectGraceMs

    private func roomAtFirstQuestion(_ names: [String]) throws -> (RoomDriver, [RoomDriver.Child]) {
        var room = RoomDriver()
        let kids = try names.map { try room.child($0) }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        return (room, kids)
    }

    @Test func aChildWhoDroppedWithoutAnsweringHoldsTheRevealUpUntilTheirGraceEnds() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben", "Cat"])
        room.answer(kids[0], question: 0, option: 2)
        room.apply(.disconnected(kids[2].connection, at: room.now))
        room.answer(kids[1], question: 0, option: 1)
        #expect(room.state.phase.name == .question, "Cat dropped a moment ago and has not answered: she may come back with her tap")
        room.advance(by: grace - 1)
        #expect(room.state.phase.name == .question)
        room.advance(by: 1)
        #expect(room.state.phase == .reveal(question: 0), "her grace is over: everyone else answered, so the question is revealed")
    }

    @Test func aChildWhoComesBackWithinTheGraceAndSendsTheKeptTapHasItCounted() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben", "Cat"])
        room.answer(kids[0], question: 0, option: 2)
        room.apply(.disconnected(kids[2].connection, at: room.now))
        room.answer(kids[1], question: 0, option: 1)
        room.advance(by: 1_500)
        let back = room.newConnection()
        room.apply(.hello(back, .rejoin(token: kids[2].token), at: room.now))
        #expect(room.state.phase.name == .question)
        room.apply(.message(back, .answer(question: 0, option: 0), at: room.now))
        #expect(room.messages(to: back).contains(.answerAck(AnswerAck(question: 0, option: 0))), "the kept tap is acknowledged")
        #expect(room.state.phase == .reveal(question: 0), "now everyone has answered")
        #expect(room.state.answersToCurrentQuestion == 0)
        #expect(room.persisted.filter { if case .answer = $0 { true } else { false } }.count == 3)
    }

    @Test func childrenWhoDroppedAfterAnsweringHoldNothingUp() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben", "Cat"])
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[2], question: 0, option: 2)
        // Ana and Cat are reconnecting (their room is moving, say): their answers are kept and count.
        room.apply(.disconnected(kids[0].connection, at: room.now))
        room.apply(.disconnected(kids[2].connection, at: room.now))
        room.answer(kids[1], question: 0, option: 1)
        #expect(room.state.phase == .reveal(question: 0))
    }

    @Test func theTeacherRevealsByHandWithoutWaitingForTheGrace() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben"])
        room.answer(kids[0], question: 0, option: 2)
        room.apply(.disconnected(kids[1].connection, at: room.now))
        #expect(room.state.phase.name == .question)
        try room.command(.reveal)
        #expect(room.state.phase == .reveal(question: 0))
        // The grace timer that was pending finds the question gone and does nothing.
        room.advance(by: grace)
        #expect(room.state.phase == .reveal(question: 0))
    }

    @Test func aGraceThatRanOutBeforeTheQuestionHoldsNothingUp() throws {
        var room = RoomDriver()
        let kids = try ["Ana", "Ben"].map { try room.child($0) }
        room.apply(.disconnected(kids[1].connection, at: room.now))
        room.advance(by: grace)
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(kids[0], question: 0, option: 2)
        #expect(room.state.phase == .reveal(question: 0), "Ben left long before the question opened")
    }

    @Test func aPausedQuestionIsNotRevealedWhenTheGraceEnds() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben"])
        room.answer(kids[0], question: 0, option: 2)
        room.apply(.disconnected(kids[1].connection, at: room.now))
        try room.command(.pause)
        room.advance(by: grace)
        #expect(room.state.phase.name == .question)
        try room.command(.resume)
        #expect(room.state.phase == .reveal(question: 0), "on resuming, Ben's grace is over and everyone here has answered")
    }

    /// A room taken over by another node (or restored after a restart) starts with every child
    /// disconnected: those who had answered come back first, and the question must wait for the others,
    /// whose pages kept their taps, from the moment it opens again.
    @Test func aQuestionReopenedAfterATakeoverWaitsForTheChildrenStillReconnecting() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben", "Cat", "Dan"])
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 1)
        let takeoverAt = room.now + 1_000
        let (restored, directives) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: takeoverAt)
        var again = RoomDriver(restoring: restored, at: takeoverAt, directives: directives)
        // Ana, Ben and Cat are back; Cat sends her tap as soon as the question opens again. Dan is not back yet.
        var connections: [ConnectionID] = []
        for kid in kids.prefix(3) {
            let connection = ConnectionID(100 + kid.connection.rawValue)
            again.apply(.hello(connection, .rejoin(token: kid.token), at: again.now))
            connections.append(connection)
        }
        guard case .question(let run) = again.state.phase else { Issue.record("not reopened"); return }
        again.advance(to: run.opensAt)
        again.apply(.message(connections[2], .answer(question: 0, option: 0), at: again.now))
        #expect(again.state.phase.name == .question, "Dan is still reconnecting: his kept tap must not find the question closed")
        again.advance(by: 2_000)
        let dan = ConnectionID(200)
        again.apply(.hello(dan, .rejoin(token: kids[3].token), at: again.now))
        again.apply(.message(dan, .answer(question: 0, option: 3), at: again.now))
        #expect(again.messages(to: dan).contains(.answerAck(AnswerAck(question: 0, option: 3))))
        #expect(again.state.phase == .reveal(question: 0))
    }

    @Test func aQuestionReopenedAfterATakeoverIsRevealedOnceTheGraceEndsForThoseWhoNeverCameBack() throws {
        var (room, kids) = try roomAtFirstQuestion(["Ana", "Ben", "Cat"])
        room.answer(kids[0], question: 0, option: 2)
        let takeoverAt = room.now + 1_000
        let (restored, directives) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: takeoverAt)
        var again = RoomDriver(restoring: restored, at: takeoverAt, directives: directives)
        again.apply(.hello(ConnectionID(100), .rejoin(token: kids[0].token), at: again.now))
        again.apply(.hello(ConnectionID(101), .rejoin(token: kids[2].token), at: again.now))
        guard case .question(let run) = again.state.phase else { Issue.record("not reopened"); return }
        again.advance(to: run.opensAt)
        again.apply(.message(ConnectionID(101), .answer(question: 0, option: 1), at: again.now))
        again.advance(to: run.opensAt + (grace - 1))
        #expect(again.state.phase.name == .question)
        again.advance(by: 1)
        #expect(again.state.phase == .reveal(question: 0), "Ben never came back: his grace ran out")
    }
}
