import Testing
@testable import StoryCircleCore

/// A child removed by mistake comes back with their browser's resume token: the same child, their answers
/// and points kept, one row in the results; a blocked child never does.
@Suite("Coming back after a removal")
struct RoomReadmissionTests {
    /// Ana and Ben at the reveal of question 0, both right; Ana then removed.
    private func anaRemovedAfterARightAnswer() throws -> (RoomDriver, RoomDriver.Child, RoomDriver.Child) {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ana, question: 0, option: Fixtures.story.quiz.questions[0].answer)
        room.answer(ben, question: 0, option: Fixtures.story.quiz.questions[0].answer)
        #expect(room.state.phase == .reveal(question: 0))
        #expect(room.state.results().players.first { $0.id == ana.id }?.score == Self.scoreForQuestion0)
        try room.command(.kick(player: "Ana"))
        #expect(room.state.results().players.map(\.id) == [ben.id], "a removed child leaves the results")
        #expect(room.state.playerCount == 1)
        return (room, ana, ben)
    }

    /// What Ana scored for question 0 before she was removed (answered at once, right).
    private static var scoreForQuestion0: Int {
        var room = RoomDriver()
        let ana = try! room.child("Ana")
        try! room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ana, question: 0, option: Fixtures.story.quiz.questions[0].answer)
        return room.state.results().players[0].score
    }

    private func rejoin(_ room: inout RoomDriver, _ child: RoomDriver.Child) -> ConnectionID {
        let connection = room.newConnection()
        room.apply(.hello(connection, .rejoin(token: child.token), at: room.now))
        return connection
    }

    @Test func aRemovedChildWhoRejoinsWithTheirTokenGetsTheirScoreAndAnswersBack() throws {
        var (room, ana, _) = try anaRemovedAfterARightAnswer()
        let scoreBefore = Self.scoreForQuestion0
        let back = rejoin(&room, ana)
        guard case .welcome(let welcome)? = room.messages(to: back).last else {
            Issue.record("no welcome: \(room.messages(to: back))")
            return
        }
        #expect(welcome.player == PlayerInfo(id: ana.id, nickname: "Ana"), "the same child, not a new one")
        #expect(welcome.token == nil, "the page keeps the token it has")
        #expect(room.state.playerCount == 2)
        let results = room.state.results()
        #expect(results.players.count == 2)
        let row = try #require(results.players.first { $0.id == ana.id })
        #expect(row.score == scoreBefore && row.answers[0].correct == true)
        // Stored before the welcome goes out.
        let directives = room.log.suffix(from: room.log.lastIndex { if case .persist(.playerReadmitted) = $0 { true } else { false } } ?? room.log.endIndex)
        #expect(directives.first == .persist(.playerReadmitted(player: PlayerID(ana.id), at: room.now)))
        // Her name is hers again.
        #expect(room.join("ANA") == nil)
        #expect(room.lastError(to: ConnectionID(room.lastConnection))?.code == .nicknameTaken)
        // And she plays on.
        try room.command(.next)
        room.waitForOpening()
        room.answer(RoomDriver.Child(connection: back, token: ana.token, id: ana.id), question: 1, option: 0)
        #expect(room.messages(to: back).contains { if case .answerAck = $0 { true } else { false } })
    }

    @Test func theRoomComesBackAfterARestartWithTheChildLetBackIn() throws {
        var (room, ana, _) = try anaRemovedAfterARightAnswer()
        _ = rejoin(&room, ana)
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now + 1_000)
        #expect(restored.playerCount == 2)
        #expect(restored.results() == room.state.results())
        var after = RoomDriver(restoring: restored, at: room.now + 1_000, directives: [])
        let again = after.newConnection()
        after.apply(.hello(again, .rejoin(token: ana.token), at: after.now))
        #expect(after.state.role(of: again) == .child)
        #expect(after.persisted.isEmpty, "an ordinary rejoin: nothing to store")
    }

    @Test func aRestartWhileRemovedKeepsTheWayBack() throws {
        let (room, ana, _) = try anaRemovedAfterARightAnswer()
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), at: room.now + 1_000)
        #expect(restored.playerCount == 1)
        var after = RoomDriver(restoring: restored, at: room.now + 1_000, directives: [])
        let back = rejoin(&after, ana)
        #expect(after.state.playerID(of: back)?.rawValue == ana.id)
        #expect(after.state.results().players.first { $0.id == ana.id }?.answers[0].correct == true)
    }

    @Test func aBlockedChildNeverComesBack() throws {
        var (room, ana, _) = try anaRemovedAfterARightAnswer()
        try room.command(.block(player: "Ana"))
        let back = rejoin(&room, ana)
        #expect(room.lastError(to: back)?.code == .blocked)
        #expect(room.state.playerCount == 1)
        // Nor after a restart, whatever order the records came in.
        var archive = room.archive()
        archive.apply(.playerReadmitted(player: PlayerID(ana.id), at: room.now))
        #expect(archive.kicked.contains(PlayerID(ana.id)), "a readmission never lifts a block")
    }

    @Test func comingBackIsRefusedAsAJoinWouldBe() throws {
        var (room, ana, ben) = try anaRemovedAfterARightAnswer()
        // Someone took a name that looks like hers meanwhile.
        let other = try room.child("\u{0410}na")
        var back = rejoin(&room, ana)
        #expect(room.lastError(to: back)?.code == .nicknameTaken)
        try room.command(.kick(player: other.id))
        try room.command(.lock)
        back = rejoin(&room, ana)
        #expect(room.lastError(to: back)?.code == .roomLocked)
        try room.command(.unlock)
        try room.command(.end)
        back = rejoin(&room, ana)
        #expect(room.lastError(to: back)?.code == .roomEnded)
        #expect(room.state.playerCount == 1)
        _ = ben
    }

    @Test func aFullRoomHasNoPlaceForHer() throws {
        var settings = RoomSettings()
        settings.maxPlayers = 1
        var room = RoomDriver(settings: settings)
        let ana = try room.child("Ana")
        try room.command(.kick(player: "Ana"))
        _ = try room.child("Ben")
        let back = rejoin(&room, ana)
        #expect(room.lastError(to: back)?.code == .roomFull)
    }
}
