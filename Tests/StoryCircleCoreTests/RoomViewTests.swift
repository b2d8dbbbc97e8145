import Foundation
import Testing
@testable import StoryCircleCore

/// What each screen is shown: kind by default, the child's own standing, the teacher's roster,
/// and removing a child for good.
@Suite("Room views")
struct RoomViewTests {
    private func room(children names: [String], settings: RoomSettings = .init()) throws -> (RoomDriver, [RoomDriver.Child]) {
        var room = RoomDriver(settings: settings)
        let kids = try names.map { try room.child($0) }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        return (room, kids)
    }

    /// A join that must be refused; returns the refusal.
    private func refusedJoin(_ room: inout RoomDriver, _ nickname: String) -> RoomError? {
        let connection = room.newConnection()
        room.apply(.hello(connection, .join(nickname: nickname, resumeToken: "another-\(connection.rawValue)"), at: room.now))
        #expect(room.state.role(of: connection) == nil, "\(nickname) was let in")
        return room.lastError(to: connection)
    }

    private func finished(_ room: RoomDriver, to connection: ConnectionID) -> Finished? {
        room.messages(to: connection).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last
    }

    private func reveal(_ room: RoomDriver, to connection: ConnectionID) -> Reveal? {
        room.messages(to: connection).compactMap { if case .reveal(let r) = $0 { r } else { nil } }.last
    }

    @Test func nobodyStandsOnThePodiumWithZeroPoints() throws {
        var (room, kids) = try self.room(children: ["Ana", "Ben", "Cat", "Dan"], settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))
        let dashboard = room.dashboard()
        // Ana gets one right; the others get everything wrong or miss it.
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 0)
        room.answer(kids[2], question: 0, option: 1)
        room.answer(kids[3], question: 0, option: 3)
        try room.command(.end)
        let screens = try #require(finished(room, to: dashboard))
        #expect(screens.podium.map(\.nickname) == ["Ana"], "Ben, Cat and Dan share second place with 0 points: not a podium place")
        #expect(screens.entries?.count == 4, "the board still lists everyone")
        let ben = try #require(finished(room, to: kids[1].connection))
        #expect(ben.podium.map(\.nickname) == ["Ana"])
        #expect(ben.you?.rank == 2)
    }

    @Test func aRoomWhereNobodyScoredHasAnEmptyPodium() throws {
        var (room, kids) = try self.room(children: ["Ana", "Ben"])
        room.answer(kids[0], question: 0, option: 0)
        try room.command(.end)
        #expect(finished(room, to: kids[0].connection)?.podium == [])
        let late = room.dashboard()
        let snapshot = room.messages(to: late).compactMap { if case .welcome(let w) = $0 { w.room.finished } else { nil } }.first
        #expect(snapshot?.podium == [])
    }

    @Test func aTiedPodiumNamesEightAndCountsTheRestOfTheirPlace() throws {
        // Twenty children, all right, no speed points: twenty share first place.
        let names = (1...20).map { String(format: "Kid %02d", $0) }
        var (room, kids) = try self.room(children: names, settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))
        let dashboard = room.dashboard()
        for kid in kids { room.answer(kid, question: 0, option: 2) }
        try room.command(.end)
        let child = try #require(finished(room, to: kids[19].connection))
        #expect(child.podium.map(\.nickname) == Array(names.prefix(8)), "the first eight on the board, by name")
        #expect(child.podium.allSatisfy { $0.rank == 1 && $0.score == 1_000 })
        #expect(child.podiumMore == PodiumMore(rank: 1, count: 12))
        #expect(child.you?.rank == 1, "a child left out of the names still has their place")
        let screens = try #require(finished(room, to: dashboard))
        #expect(screens.podium == child.podium && screens.podiumMore == child.podiumMore)
        #expect(screens.entries?.count == 20, "screens still get the whole board")
        let late = room.dashboard()
        let snapshot = room.messages(to: late).compactMap { if case .welcome(let w) = $0 { w.room.finished } else { nil } }.first
        #expect(snapshot?.podium == child.podium && snapshot?.podiumMore == child.podiumMore)
    }

    @Test func onlyTheLastPlaceNamedIsCutShort() throws {
        // Ana gets three right, Ben two, and ten children one: places 1, 2 and 3 (ten share it).
        let crowd = (1...10).map { "Kid \($0)" }
        var (room, kids) = try self.room(children: ["Ana", "Ben"] + crowd, settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))
        let answers = [2, 0, 1]
        for question in 0..<3 {
            if question > 0 { try room.command(.next); room.waitForOpening() }
            for (i, kid) in kids.enumerated() {
                let right = i == 0 || (i == 1 && question < 2) || (i >= 2 && question == 0)
                room.answer(kid, question: question, option: right ? answers[question] : (answers[question] + 1) % 4)
            }
        }
        try room.command(.next)
        let podium = try #require(finished(room, to: kids[0].connection))
        #expect(podium.podium.map(\.rank) == [1, 2, 3, 3, 3, 3, 3, 3])
        #expect(podium.podium.prefix(2).map(\.nickname) == ["Ana", "Ben"])
        #expect(podium.podiumMore == PodiumMore(rank: 3, count: 4))
    }

    @Test func tiedPlayersAreListedByNicknameWhateverTheCaseAndWhoeverJoinedFirst() throws {
        // Joined in the reverse of their order by name, and in mixed case: the board's order is the
        // nickname's, case aside, not the order the room added them in.
        var (room, kids) = try self.room(children: ["cat", "Ben", "ana"], settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))
        for kid in kids { room.answer(kid, question: 0, option: 2) }
        try room.command(.end)
        guard case .finished(let finished) = try #require(room.messages(to: kids[0].connection).last) else { Issue.record("not finished"); return }
        #expect(finished.podium.map(\.nickname) == ["ana", "Ben", "cat"])
    }

    @Test func aChildsPodiumStaysSmallInAWhollyTiedClass() throws {
        // Each child's `finished` names at most `podiumCount` players (8) and counts the rest: carrying
        // everyone ranked 1 to 3 would send 300 names to each of 300 children of a tied class.
        var (room, kids) = try self.room(children: (1...300).map { "Child number \($0)" }, settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))
        for kid in kids { room.answer(kid, question: 0, option: 2) }
        try room.command(.end)
        let message = try #require(room.messages(to: kids[150].connection).last)
        #expect(message.encoded().count < 1_500, "\(message.encoded().count) bytes")
        guard case .finished(let finished) = message else { Issue.record("not finished: \(message)"); return }
        #expect(finished.podium.count == 8 && finished.podiumMore == PodiumMore(rank: 1, count: 292))
    }

    @Test func aChildSeesTheirStreakAndTheGapToThePlaceAhead() throws {
        var (room, kids) = try self.room(children: ["Ana", "Ben", "Cat", "Dan"], settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))
        // Question 0 (answer 2): Ana, Ben and Cat right; Dan wrong.
        for kid in kids.prefix(3) { room.answer(kid, question: 0, option: 2) }
        room.answer(kids[3], question: 0, option: 1)
        #expect(reveal(room, to: kids[0].connection)?.you?.standing.ahead == nil, "first place has nobody ahead")
        #expect(reveal(room, to: kids[3].connection)?.you?.standing.ahead == PlaceAhead(nickname: "Ana", points: 1_000),
                "of three tied ahead, the first on the board (by name) is named")
        try room.command(.next)
        room.waitForOpening()
        // Question 1 (answer 0): Ana and Ben right; Cat and Dan wrong.
        room.answer(kids[0], question: 1, option: 0)
        room.answer(kids[1], question: 1, option: 0)
        room.answer(kids[2], question: 1, option: 1)
        room.answer(kids[3], question: 1, option: 1)
        let ana = try #require(reveal(room, to: kids[0].connection)?.you?.standing)
        #expect(ana.streak == 2)
        #expect(ana.rank == 1)
        let cat = try #require(reveal(room, to: kids[2].connection)?.you?.standing)
        #expect(cat.streak == 0)
        #expect(cat.rank == 3)
        #expect(cat.ahead == PlaceAhead(nickname: "Ana", points: 1_000))
        let dan = try #require(reveal(room, to: kids[3].connection)?.you?.standing)
        #expect(dan.rank == 4)
        #expect(dan.ahead == PlaceAhead(nickname: "Cat", points: 1_000), "the nearest higher score, not the leader")

        // A refreshed page gets the same standing in its welcome.
        let again = room.newConnection()
        room.apply(.hello(again, .rejoin(token: kids[3].token), at: room.now))
        let snapshot = room.messages(to: again).compactMap { if case .welcome(let w) = $0 { w.room } else { nil } }.first
        #expect(snapshot?.you?.ahead == PlaceAhead(nickname: "Cat", points: 1_000))
        #expect(snapshot?.reveal?.you?.standing.ahead == PlaceAhead(nickname: "Cat", points: 1_000))
        #expect(snapshot?.you?.streak == 0)

        try room.command(.end)
        #expect(finished(room, to: kids[1].connection)?.you?.ahead == nil, "Ben is tied first")
        #expect(finished(room, to: kids[1].connection)?.you?.streak == 2)
        #expect(finished(room, to: again)?.you?.ahead == PlaceAhead(nickname: "Cat", points: 1_000))
    }

    @Test func aWelcomeGivesEachChildTheStandingTheirRevealGave() throws {
        // A welcome works a child's rank and the place ahead out alone (`place(of:)`); a reveal ranks the
        // whole class at once (`placesAhead`). Both must say the same, kicked children counting for neither.
        var lobby = RoomDriver(settings: RoomSettings(competitive: true))
        _ = try lobby.child("Ana")
        let ben = try lobby.child("Ben")
        let before = lobby.messages(to: ben.connection).compactMap { if case .welcome(let w) = $0 { w.room.you } else { nil } }.first
        #expect(before?.rank == 1 && before?.ahead == nil, "before any reveal everybody is first, nobody ahead")

        let names = (1...24).map { "Child \($0)" }
        var (room, kids) = try self.room(children: names, settings: RoomSettings(speedPoints: false, streakBonus: false, competitive: true))

        // Question 0: everybody answers; then two children with points are kicked; question 1: the rest.
        // Scores spread out, with ties, from a rule of the child's number and the question.
        let kicked: Set<Int> = [1, 6]
        for (index, kid) in kids.enumerated() {
            room.answer(kid, question: 0, option: index % 3 != 0 ? 2 : 1)
        }
        #expect(reveal(room, to: kids[1].connection)?.you?.standing.score ?? 0 > 0)
        try room.command(.kick(player: "Child 2"))
        try room.command(.kick(player: "Child 7"))
        try room.command(.next)
        room.waitForOpening()
        for (index, kid) in kids.enumerated() where !kicked.contains(index) {
            room.answer(kid, question: 1, option: index % 4 == 1 ? 1 : 0)
        }
        var checked = 0
        for (index, kid) in kids.enumerated() where !kicked.contains(index) {
            let revealed = try #require(reveal(room, to: kid.connection)?.you?.standing)
            let again = room.newConnection()
            room.apply(.hello(again, .rejoin(token: kid.token), at: room.now))
            let welcomed = try #require(room.messages(to: again).compactMap { if case .welcome(let w) = $0 { w.room.you } else { nil } }.first)
            #expect(welcomed.rank == revealed.rank, "\(names[index])")
            #expect(welcomed.ahead == revealed.ahead, "\(names[index])")
            checked += 1
        }
        #expect(checked == 22)
    }

    @Test func theProjectorGetsNoAnswerGridUnlessTheTeacherTurnsItOn() throws {
        var (room, kids) = try self.room(children: ["Ana", "Ben"])
        let dashboard = room.dashboard()
        let teacher = room.teacher()
        #expect(room.state.settings.answerGrid == false)
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 1)
        #expect(reveal(room, to: dashboard)?.top.allSatisfy { $0.results.isEmpty } == true)
        #expect(reveal(room, to: teacher)?.top.map(\.results) == [[.correct], [.wrong]], "the teacher's own screen has them")

        // The grid is a display setting: it may change mid-game, while the game's settings may not.
        #expect(throws: RoomError.self) { try room.command(.settings(RoomSettingsPatch(timer: false))) }
        #expect(throws: RoomError.self) { try room.command(.settings(RoomSettingsPatch(timer: false, answerGrid: true))) }
        try room.command(.next)
        try room.command(.settings(RoomSettingsPatch(answerGrid: true)))
        #expect(room.state.settings.answerGrid)
        #expect(room.persisted.last == .roomUpdated(settings: room.state.settings, locked: false, at: room.now))
        room.advance(by: 300)
        let board = room.messages(to: dashboard).compactMap { if case .scoreboard(let s) = $0 { s.entries } else { nil } }.last
        #expect(board?.map(\.results) == [[.correct], [.wrong]], "turning it on sends the projector the results")

        try room.command(.settings(RoomSettingsPatch(answerGrid: false)))
        room.advance(by: 300)
        let hidden = room.messages(to: dashboard).compactMap { if case .scoreboard(let s) = $0 { s.entries } else { nil } }.last
        #expect(hidden?.allSatisfy { $0.results.isEmpty } == true)
        let late = room.dashboard()
        let snapshot = room.messages(to: late).compactMap { if case .welcome(let w) = $0 { w.room.scoreboard } else { nil } }.first
        #expect(snapshot?.allSatisfy { $0.results.isEmpty } == true)
    }

    @Test func theTeachersRosterSaysWhoHasAnsweredAndTheirScore() throws {
        var (room, kids) = try self.room(children: ["Ana", "Ben"])
        let teacher = room.teacher()
        room.answer(kids[0], question: 0, option: 2)
        room.advance(by: 300)
        let update = try #require(room.messages(to: teacher).compactMap { if case .scoreboard(let s) = $0 { s } else { nil } }.last)
        #expect(update.answers == AnswerProgress(question: 0, answered: 1, total: 2))
        #expect(Dictionary(uniqueKeysWithValues: update.entries.map { ($0.nickname, $0.answered) }) == ["Ana": true, "Ben": false])
        room.answer(kids[1], question: 0, option: 2)
        let revealed = try #require(reveal(room, to: teacher))
        #expect(revealed.top.allSatisfy { $0.score > 0 && $0.answered == nil }, "after the reveal: scores, and no stale answered flags")
    }

    @Test func theScreensRevealIsTheirBoardAndNoScoreboardRepeatsIt() throws {
        var (room, kids) = try self.room(children: ["Ana", "Ben", "Cat"])
        let dashboard = room.dashboard()
        let teacher = room.teacher()
        func scoreboards(_ connection: ConnectionID) -> Int {
            room.messages(to: connection).filter { if case .scoreboard = $0 { true } else { false } }.count
        }
        room.answer(kids[0], question: 0, option: 2)
        room.advance(by: 300)
        let during = (scoreboards(dashboard), scoreboards(teacher))
        #expect(during.0 > 0 && during.1 > 0, "answers during the question update the screens")
        room.answer(kids[1], question: 0, option: 1)
        room.answer(kids[2], question: 0, option: 2)
        #expect(reveal(room, to: dashboard)?.top.count == 3 && reveal(room, to: teacher)?.top.count == 3)
        room.advance(by: 1_000)
        #expect(scoreboards(dashboard) == during.0 && scoreboards(teacher) == during.1, "the reveal already carried the board")
        room.apply(.disconnected(kids[1].connection, at: room.now))
        room.advance(by: 300)
        #expect(scoreboards(dashboard) == during.0 + 1, "a change after the reveal still reaches the screens")
    }

    @Test func theLobbyKnowsTheStoryTitleAndHowManyQuestions() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let welcome = room.messages(to: ana.connection).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first
        #expect(welcome?.room.title == "Test Story")
        #expect(welcome?.room.questionCount == 3)
        #expect(welcome?.player?.nickname == "Ana")
    }

    @Test func aBlockedChildCannotComeBackByTokenOrByName() throws {
        var room = RoomDriver()
        let ana = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.command(.block(player: "ben"))
        #expect(room.messages(to: ben.connection).last == .kicked(Notice(code: .blocked, message: "Your teacher removed you from this room.", blocked: true)))
        #expect(room.closed[ben.connection] == CloseReason(status: 4001, reason: "kicked"))
        #expect(room.persisted.last == .playerBlocked(player: PlayerID(ben.id), at: room.now))

        // The same browser (its resume token), and the same name in any case, are refused.
        let back = room.newConnection()
        room.apply(.hello(back, .rejoin(token: ben.token), at: room.now))
        #expect(room.lastError(to: back) == RoomError(.blocked, "Your teacher removed you from this room."))
        #expect(room.closed[back] == CloseReason(status: 1008, reason: "blocked"))
        #expect(refusedJoin(&room, "BEN")?.code == .blocked)
        #expect(refusedJoin(&room, "  ben ")?.code == .blocked)
        #expect(room.state.playerCount == 1)
        _ = try room.child("Benjamin")

        // A plain kick is not a block: that browser comes back as the same child (RoomReadmissionTests),
        // and anyone may join under the freed name.
        try room.command(.kick(player: ana.id))
        let anaBack = room.newConnection()
        room.apply(.hello(anaBack, .rejoin(token: ana.token), at: room.now))
        #expect(room.state.playerID(of: anaBack)?.rawValue == ana.id)
        try room.command(.kick(player: ana.id))
        _ = try room.child("Ana")
        // And a kicked child can still be blocked afterwards, by name.
        try room.command(.block(player: "Benjamin"))
        #expect(refusedJoin(&room, "benjamin")?.code == .blocked)
    }

    @Test func aBlockSurvivesARestart() throws {
        var room = RoomDriver()
        _ = try room.child("Ana")
        let ben = try room.child("Ben")
        try room.command(.kick(player: "Ana"))
        try room.command(.block(player: "Ben"))
        let archive = room.archive()
        #expect(archive.blocked == [PlayerID(ben.id)])
        #expect(archive.kicked.count == 2)

        let (restored, directives) = RoomState.restore(archive, lookalikes: LookalikeTable(), at: room.now + 60_000)
        var after = RoomDriver(restoring: restored, at: room.now + 60_000, directives: directives)
        let back = after.newConnection()
        after.apply(.hello(back, .rejoin(token: ben.token), at: after.now))
        #expect(after.lastError(to: back)?.code == .blocked)
        #expect(refusedJoin(&after, "Ben")?.code == .blocked)
        _ = try after.child("Ana")
    }

    @Test func blockNeedsAPlayerAndNamesItInTheProtocol() throws {
        #expect(try TeacherCommand.named("block", player: "p2", settings: nil) == .block(player: "p2"))
        #expect(throws: RoomError.self) { try TeacherCommand.named("block", player: nil, settings: nil) }
        let decoded = ClientMessage.decode(Array(#"{"type":"command","command":"block","player":"Ana"}"#.utf8))
        #expect(try decoded.get() == .command(.block(player: "Ana")))
        let encoded = String(decoding: try JSONEncoder().encode(ClientMessage.command(.block(player: "Ana"))), as: UTF8.self)
        #expect(encoded.contains(#""player":"Ana""#))
        var room = RoomDriver()
        #expect(throws: RoomError(.playerNotFound, "No player called \"Zed\" is in this room.", params: ["player": "Zed"])) { try room.command(.block(player: "Zed")) }
    }
}
