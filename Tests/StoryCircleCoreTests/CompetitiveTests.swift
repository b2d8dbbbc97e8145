import Foundation
import Testing
@testable import StoryCircleCore

/// Kind by default: a child is told their own progress, never a named classmate's lead, unless the
/// teacher turns the room's contest (`competitive`) on. And the teacher's page is given the projector link.
@Suite struct CompetitiveTests {
    private let names = ["Ana", "Ben", "Dina"]

    /// Three children through the first question: Dina and Ana right, Ben wrong, then the rest skipped to
    /// the end. Returns the room and the children.
    private func playedRoom(settings: RoomSettings) throws -> (RoomDriver, [RoomDriver.Child]) {
        var room = RoomDriver(settings: settings)
        let kids = try names.map { try room.child($0) }
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(kids[2], question: 0, option: 2)
        room.advance(by: 3_000)
        room.answer(kids[0], question: 0, option: 2)
        room.answer(kids[1], question: 0, option: 1)
        return (room, kids)
    }

    /// Everything sent to a child from the first reveal on, as the bytes on the wire.
    private func textsAfterTheLobby(_ room: RoomDriver, to child: RoomDriver.Child) -> [String] {
        let messages = room.messages(to: child.connection)
        guard let first = messages.firstIndex(where: { if case .reveal = $0 { true } else { false } }) else { return [] }
        return messages[first...].map { String(decoding: $0.encoded(), as: UTF8.self) }
    }

    @Test func aChildIsToldNoClassmatesLeadWhenTheRoomIsNotAContest() throws {
        #expect(RoomSettings().competitive == false, "off by default")
        var (room, kids) = try playedRoom(settings: RoomSettings())
        let dashboard = room.dashboard()
        try room.command(.end)
        // A refreshed phone at the end gets its snapshot too.
        let again = room.newConnection()
        room.apply(.hello(again, .rejoin(token: kids[1].token), at: room.now))

        for (index, kid) in kids.enumerated() {
            let texts = textsAfterTheLobby(room, to: kid)
            #expect(texts.count >= 2, "a reveal and the end")
            for text in texts {
                for (other, name) in names.enumerated() where other != index {
                    #expect(!text.contains("\"\(name)\""), "\(names[index]) was sent \(name)'s name: \(text)")
                }
                #expect(!text.contains("\"rank\""), "\(names[index]) was sent a place: \(text)")
                #expect(!text.contains("\"ahead\""), "\(names[index]) was sent who is ahead: \(text)")
            }
        }
        let ben = try #require(room.messages(to: kids[1].connection).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last)
        #expect(ben.podium.isEmpty && ben.podiumMore == nil)
        #expect(ben.you?.score == 0 && ben.you?.results == [.wrong], "their own progress is still there")
        let dina = try #require(room.messages(to: kids[2].connection).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last)
        #expect(dina.you?.score ?? 0 > 0, "their own points are still there")
        let welcome = try #require(room.messages(to: again).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first)
        let snapshot = String(decoding: ServerMessage.welcome(welcome).encoded(), as: UTF8.self)
        #expect(!snapshot.contains("\"Dina\"") && !snapshot.contains("\"rank\""), "\(snapshot)")
        // The projector still celebrates the class: its podium names the winners.
        let screens = try #require(room.messages(to: dashboard).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last)
        #expect(screens.podium.map(\.nickname) == ["Dina", "Ana"])
    }

    @Test func aContestGivesEachChildTheirPlaceAndWhoIsAhead() throws {
        var (room, kids) = try playedRoom(settings: RoomSettings(competitive: true))
        let reveal = try #require(room.messages(to: kids[0].connection).compactMap { if case .reveal(let r) = $0 { r } else { nil } }.last)
        #expect(reveal.you?.standing.rank == 2)
        #expect(reveal.you?.standing.ahead?.nickname == "Dina")
        #expect(reveal.top.map(\.nickname) == ["Dina", "Ana", "Ben"])
        try room.command(.end)
        let ben = try #require(room.messages(to: kids[1].connection).compactMap { if case .finished(let f) = $0 { f } else { nil } }.last)
        #expect(ben.you?.rank == 3)
        #expect(ben.podium.map(\.nickname) == ["Dina", "Ana"])
    }

    @Test func theContestIsADisplaySettingChangeableAtAnyTime() throws {
        var (room, kids) = try playedRoom(settings: RoomSettings())
        #expect(room.state.phase.name == .reveal)
        try room.command(.settings(RoomSettingsPatch(competitive: true)))
        #expect(room.state.settings.competitive)
        #expect(throws: RoomError.self) { try room.command(.settings(RoomSettingsPatch(timer: false, competitive: false))) }
        try room.command(.next)
        room.waitForOpening()
        room.answer(kids[0], question: 1, option: 0)
        room.answer(kids[1], question: 1, option: 0)
        room.answer(kids[2], question: 1, option: 1)
        let reveal = try #require(room.messages(to: kids[2].connection).compactMap { if case .reveal(let r) = $0 { r } else { nil } }.last)
        #expect(reveal.question == 1 && reveal.you?.standing.rank != nil, "shown from the next reveal")
        // The settings every screen gets say whether the room is a contest.
        let status = String(decoding: ServerMessage.room(room.state.status(for: .child)).encoded(), as: UTF8.self)
        #expect(status.contains("\"competitive\":true"), "\(status)")
    }

    @Test func settingsStoredBeforeTheContestExistedReadAsNoContest() throws {
        let stored = #"{"speedPoints":true,"streakBonus":true,"timer":true,"questionSeconds":20,"lateJoin":true,"narration":"devices","readQuestions":false,"maxPlayers":3000,"answerGrid":true}"#
        let settings = try JSONDecoder().decode(RoomSettings.self, from: Data(stored.utf8))
        #expect(settings.competitive == false)
        #expect(settings.answerGrid)
        let patch = try JSONDecoder().decode(RoomSettingsPatch.self, from: Data(#"{"competitive":true}"#.utf8))
        #expect(patch.competitive == true && patch.changesOnlyDisplay)
    }

    // MARK: - The projector link on the teacher's page

    @Test func onlyTheTeachersControlConnectionIsGivenTheProjectorToken() throws {
        let teacherToken = "teacher-secret-for-a-derived-room"
        let dashboardToken = RoomCredentials.dashboardToken(forTeacherToken: teacherToken)
        #expect(dashboardToken != teacherToken && !dashboardToken.contains(teacherToken))
        let credentials = RoomCredentials(teacherToken: teacherToken, dashboardToken: dashboardToken)
        var room = RoomDriver()
        room.state = RoomState(code: "123456", story: Fixtures.story, settings: RoomSettings(), credentials: credentials, timing: RoomTiming(), lookalikes: LookalikeTable())
        let child = try room.child("Ana")

        let teacher = room.newConnection()
        room.apply(.hello(teacher, .control(token: teacherToken), at: room.now))
        let welcome = try #require(room.messages(to: teacher).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first)
        #expect(welcome.dashboardToken == dashboardToken)
        #expect(credentials.watchRole(for: dashboardToken) == .dashboard, "the token given opens the projector")
        #expect(String(decoding: ServerMessage.welcome(welcome).encoded(), as: UTF8.self).contains(dashboardToken))

        let projector = room.newConnection()
        room.apply(.hello(projector, .watch(token: dashboardToken), at: room.now))
        let watcher = room.newConnection()
        room.apply(.hello(watcher, .watch(token: teacherToken), at: room.now))
        for connection in [child.connection, projector, watcher] {
            let texts = room.messages(to: connection).map { String(decoding: $0.encoded(), as: UTF8.self) }
            #expect(!texts.isEmpty)
            #expect(texts.allSatisfy { !$0.contains(dashboardToken) && !$0.contains("dashboardToken") }, "\(texts)")
        }
    }

    @Test func aRoomWithARandomProjectorTokenGivesTheTeacherNone() throws {
        // Fixtures.credentials: a projector token not derived from the teacher's (rooms made before).
        var room = RoomDriver()
        let teacher = room.teacher()
        let welcome = try #require(room.messages(to: teacher).compactMap { if case .welcome(let w) = $0 { w } else { nil } }.first)
        #expect(welcome.dashboardToken == nil)
        #expect(Fixtures.credentials.dashboardToken(forTeacherToken: "teacher-secret") == nil)
        #expect(Fixtures.credentials.dashboardToken(forTeacherToken: "wrong") == nil)
    }
}
