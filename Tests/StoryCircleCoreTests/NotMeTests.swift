import Foundation
import Testing
@testable import StoryCircleCore

/// A wrong tap undone (docs/protocol.md, "That's not me"): a class child who picked a name that is not
/// theirs gives it back before their first answer, and the teacher frees one for them at any time.
@Suite("That's not me")
struct NotMeTests {
    let classes = ClassRoomTests()

    func givenBack(_ room: RoomDriver, to connection: ConnectionID) -> NamesList? { classes.names(room, to: connection) }

    @Test func aChildGivesBackAWrongNameBeforeAnsweringAndAnotherChildPicksIt() throws {
        var room = classes.classRoom()
        let teacher = room.teacher()
        let watching = classes.picker(&room)
        // Bo taps Ada by mistake.
        let phone = room.newConnection()
        let wrong = try #require(classes.pick(&room, "mem_ada", on: phone, token: "123456.wrong"))
        try room.startAndPrepare()

        let directives = room.apply(.message(phone, .notMe, at: room.now))
        let stored = try #require(directives.firstIndex(of: .persist(.playerReleased(player: PlayerID(wrong.player!.id), at: room.now))))
        let told = try #require(directives.firstIndex { if case .send(.names, let to) = $0 { to.contains(phone) } else { false } })
        #expect(stored < told, "the name is stored as free before the phone hears it")
        #expect(room.closed[phone] == nil, "the phone stays connected, a name-picker again")
        #expect(room.state.isPicker(phone))
        #expect(room.state.role(of: phone) == nil)
        #expect(givenBack(room, to: phone)?.children.map(\.taken) == [false, false])
        #expect(givenBack(room, to: watching)?.children.first?.taken == false, "the other pickers see Ada free at once")
        #expect(room.messages(to: teacher).last { if case .classRoster = $0 { true } else { false } }
            == .classRoster(ClassRosterUpdate(members: room.state.rosterMembers)))
        #expect(room.state.rosterMembers.first?.taken == false)

        // The page's old token is no use any more; Bo taps his own name on the same connection.
        let stale = room.newConnection()
        room.apply(.hello(stale, .rejoin(token: "123456.wrong"), at: room.now))
        #expect(room.lastError(to: stale)?.code == .released)
        let bo = try #require(classes.pick(&room, "mem_bo", on: phone, token: "123456.bo"))
        #expect(bo.player?.nickname == "Bo")
        // Ada, on her own phone, can now tap her name.
        let ada = try #require(classes.pick(&room, "mem_ada", on: watching, token: "123456.ada"))
        #expect(ada.player?.nickname == "Ada")
        #expect(room.state.rosterMembers.map(\.taken) == [true, true])

        // A restart keeps the give-back: the old token stays refused.
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), classRoster: ClassRoomTests.roster, at: room.now)
        var after = RoomDriver(restoring: restored, at: room.now, directives: [])
        let again = after.newConnection()
        after.apply(.hello(again, .rejoin(token: "123456.wrong"), at: after.now))
        #expect(after.lastError(to: again)?.code == .released)
        let back = after.newConnection()
        after.apply(.hello(back, .rejoin(token: "123456.ada"), at: after.now))
        #expect(after.state.playerID(of: back)?.rawValue == ada.player?.id)
    }

    /// Bo taps Ada's name (Ada is away today), gives it back and taps his own: the room has one child, not
    /// two — in its counts, its answer progress, its scoreboard and its results.
    @Test func aNameGivenBackAndNotPickedAgainIsNobody() throws {
        var room = classes.classRoom()
        let phone = room.newConnection()
        _ = try #require(classes.pick(&room, "mem_ada", on: phone, token: "123456.wrong"))
        room.apply(.message(phone, .notMe, at: room.now))
        let bo = try #require(classes.pick(&room, "mem_bo", on: phone, token: "123456.bo"))
        #expect(room.state.playerCount == 1)
        #expect(room.state.lobby().players.map(\.nickname) == ["Bo"])
        #expect(room.state.tally == room.state.recount(question: room.state.tally.question))
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        #expect(room.state.answerProgress()?.total == 1)
        room.apply(.message(phone, .answer(question: 0, option: 0), at: room.now))
        #expect(room.state.phase.name == .reveal, "Bo was the only child here")
        #expect(room.state.results().players.map(\.id) == [bo.player!.id])
        // A restart counts the same.
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), classRoster: ClassRoomTests.roster, at: room.now)
        #expect(restored.playerCount == 1)
        #expect(restored.results().players.map(\.nickname) == ["Bo"])
    }

    @Test func aChildWhoHasAnsweredKeepsTheName() throws {
        var room = classes.classRoom()
        let phone = room.newConnection()
        let ada = try #require(classes.pick(&room, "mem_ada", on: phone, token: "123456.a"))
        _ = try #require(classes.pick(&room, "mem_bo", token: "123456.b"))
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.apply(.message(phone, .answer(question: 0, option: 0), at: room.now))
        let directives = room.apply(.message(phone, .notMe, at: room.now))
        #expect(room.lastError(to: phone)?.code == .notMeAfterAnswer)
        #expect(!directives.contains { if case .persist = $0 { true } else { false } })
        #expect(room.closed[phone] == nil)
        #expect(room.state.playerID(of: phone)?.rawValue == ada.player?.id, "still Ada")
        #expect(room.state.rosterMembers.first?.taken == true)
    }

    @Test func onlyAClassChildGivesANameBack() throws {
        var plain = RoomDriver()
        let kim = try plain.child("Kim")
        plain.apply(.message(kim.connection, .notMe, at: plain.now))
        #expect(plain.lastError(to: kim.connection)?.code == .invalidCommand)
        #expect(plain.state.playerID(of: kim.connection)?.rawValue == kim.id)

        var room = classes.classRoom()
        let teacher = room.teacher()
        room.apply(.message(teacher, .notMe, at: room.now))
        #expect(room.lastError(to: teacher)?.code == .wrongRole)
    }

    @Test func notMeIsReadFromTheWireAndWrittenBack() throws {
        #expect(try ClientMessage.decode(Array(#"{"type":"notMe"}"#.utf8)).get() == .notMe)
        #expect(ClientMessage.decodeWithFoundation(Array(#"{"type":"notMe"}"#.utf8)) == .success(.notMe))
        #expect(ClientMessage.typeNames.contains("notMe"))
        let written = try JSONEncoder().encode(ClientMessage.notMe)
        #expect(String(decoding: written, as: UTF8.self) == #"{"type":"notMe"}"#)
    }

    /// The teacher's one "fix a name": the wrong phone is sent back to tap its own name, kindly, and a
    /// question waiting only for the child who was not there is revealed.
    @Test func theTeachersFixANameSendsTheWrongPhoneBackAndDoesNotHoldUpTheQuestion() throws {
        var room = classes.classRoom()
        let phone = room.newConnection()
        _ = try #require(classes.pick(&room, "mem_ada", on: phone, token: "123456.wrong"))
        let bo = room.newConnection()
        _ = try #require(classes.pick(&room, "mem_bo", on: bo, token: "123456.b"))
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.apply(.message(bo, .answer(question: 0, option: 0), at: room.now))
        #expect(room.state.phase.name == .question, "the phone on Ada's name has not answered")

        try room.command(.release(member: "mem_ada"))
        let notice = room.messages(to: phone).lazy.compactMap { if case .kicked(let notice) = $0 { notice } else { nil } }.last
        #expect(notice?.code == .released)
        #expect(notice?.message == "Your teacher gave this name back. Tap your own name.")
        #expect(room.closed[phone] == CloseReason(status: 1008, reason: "released"))
        #expect(room.state.phase.name == .reveal, "nobody left to wait for")
    }
}
