import Testing
@testable import StoryCircleCore

/// Reports count every child who was there (docs/protocol.md, "Results" and "Classes"): a question answered
/// right by 2 of the 4 children in the room, one silent, is "2 of 4 right · 1 did not answer" in the room's
/// results, the class report and both CSVs, and the silent child is among those who need help. A child who
/// joined after the question was asked was not there for it. The CSVs put names and questions first and ids
/// last, and are named after the story or class and the day.
@Suite("Report counts")
struct ReportCountsTests {
    static let roster = ClassRoster(id: "cls_1b", name: "Class 1B", members: [
        ClassMember(id: "mem_ada", name: "Ada", avatar: "owl"),
        ClassMember(id: "mem_bo", name: "Bo", avatar: "fox"),
        ClassMember(id: "mem_cy", name: "Cy", avatar: "bee"),
        ClassMember(id: "mem_di", name: "Di", avatar: "cat"),
        ClassMember(id: "mem_eli", name: "Eli", avatar: "dog"),
    ])

    func pick(_ room: inout RoomDriver, _ member: String) -> RoomDriver.Child {
        let connection = room.newConnection()
        let token = "123456.\(member)"
        for case .send(.welcome(let welcome), _) in room.apply(.hello(connection, .pick(member: member, resumeToken: token), at: room.now)) {
            return RoomDriver.Child(connection: connection, token: token, id: welcome.player!.id)
        }
        Issue.record("\(member) could not pick their name")
        return RoomDriver.Child(connection: connection, token: token, id: "")
    }

    /// Ada and Bo right, Cy wrong ("Red"), Di silent on question 1; Eli joins after it was asked; the
    /// teacher reveals it and ends the room (questions 2 and 3 never asked).
    func playedRoom() throws -> RoomDriver {
        var room = RoomDriver(classRoster: Self.roster)
        let ada = pick(&room, "mem_ada"), bo = pick(&room, "mem_bo"), cy = pick(&room, "mem_cy")
        _ = pick(&room, "mem_di")
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.answer(ada, question: 0, option: 2)
        room.answer(bo, question: 0, option: 2)
        room.answer(cy, question: 0, option: 0)
        room.advance(by: 1_000)
        _ = pick(&room, "mem_eli")
        _ = try room.command(.reveal)
        _ = try room.command(.end)
        return room
    }

    @Test func aQuestionCountsTheChildrenPresentAndTheSilentOneDidNotAnswer() throws {
        let results = try playedRoom().state.results()
        let first = results.questions[0]
        #expect((first.present, first.answered, first.right, first.unanswered, first.shareRight) == (4, 3, 2, 1, 0.5))
        #expect(first.mostChosenWrong == RoomResults.WrongChoice(option: 0, text: "Red", count: 1))
        let di = try #require(results.players.first { $0.nickname == "Di" })
        #expect(di.answers[0].present && di.answers[0].unanswered)
        let eli = try #require(results.players.first { $0.nickname == "Eli" })
        #expect(!eli.answers[0].present && !eli.answers[0].unanswered, "Eli joined after the question was asked")
        // Never asked: nobody was there for it, nobody "did not answer" it.
        #expect((results.questions[1].present, results.questions[1].unanswered, results.questions[1].shareRight) == (0, 0, 0))
    }

    @Test func aRestoredRoomCountsAsTheLiveOneDid() throws {
        let room = try playedRoom()
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), classRoster: Self.roster, at: room.now)
        #expect(restored.results() == room.state.results())
    }

    @Test func theClassReportCountsTheSilentChildAsNeedingHelp() throws {
        let room = try playedRoom()
        let schoolClass = SchoolClass(id: "cls_1b", name: "Class 1B", version: 1, changedAt: ServerTime(milliseconds: 0), members: Self.roster.members)
        let report = ClassReport(schoolClass, rooms: [room.archive()], lookalikes: LookalikeTable())
        let line = report.rooms[0].questions[0]
        #expect((line.present, line.answered, line.right, line.unanswered, line.shareRight) == (4, 3, 2, 1, 0.5))
        #expect(line.mostChosenWrong?.text == "Red")
        let help = report.needsHelp.map { ($0.name, $0.wrong, $0.unanswered, $0.notYetRight) }
        #expect(help.count == 2)
        #expect(help.contains { $0 == ("Cy", 1, 0, 1) })
        #expect(help.contains { $0 == ("Di", 0, 1, 1) }, "the child who never answered needs help too")
        #expect(!report.needsHelp.contains { $0.name == "Eli" }, "a child who was not there for it is not held to it")
    }

    @Test func bothCSVsPutNamesAndQuestionsFirstAndSayWhoDidNotAnswer() throws {
        let room = try playedRoom()
        let roomRows = room.state.results().csv().components(separatedBy: "\r\n")
        #expect(roomRows[0] == "child,question,question_text,answer,result,points,total_points,rank,time_ms,member,player_id")
        let firstQuestion = roomRows.dropFirst().filter { $0.split(separator: ",").dropFirst().first == "1" }
        #expect(firstQuestion.count == 5)
        #expect(firstQuestion.count { $0.contains(",right,") } == 2)
        #expect(firstQuestion.contains { $0.hasPrefix("Di,1,What colour was the gear?,,did not answer,0,0,") && $0.hasSuffix(",mem_di,p4") })
        #expect(firstQuestion.contains { $0.hasPrefix("Eli,1,What colour was the gear?,,,") }, "not there: no result")

        let schoolClass = SchoolClass(id: "cls_1b", name: "Class 1B", version: 1, changedAt: ServerTime(milliseconds: 0), members: Self.roster.members)
        let classRows = ClassReport(schoolClass, rooms: [room.archive()], lookalikes: LookalikeTable()).csv().components(separatedBy: "\r\n")
        #expect(classRows[0] == "child,story_title,room_started,question,question_text,answer,result,points,room_points,member,room")
        #expect(classRows.contains("Di,Test Story,1970-01-01T00:00:00Z,1,What colour was the gear?,,did not answer,0,0,mem_di,123456"))
    }

    @Test func aCSVIsNamedAfterWhatItIsAboutAndTheDayWithAPlainFallback() {
        let day = ServerTime(milliseconds: 1_796_601_600_000)  // 2026-12-07
        let file = CSVFile(naming: ["Le Lion Ébloui: à l'école?"], day: day, text: "child\r\n")
        #expect(file.name == "Le Lion Ébloui à l'école 2026-12-07.csv")
        #expect(file.contentDisposition == #"attachment; filename="Le Lion Ebloui a l'ecole 2026-12-07.csv"; filename*=UTF-8''Le%20Lion%20%C3%89bloui%20%C3%A0%20l%27%C3%A9cole%202026-12-07.csv"#)
        #expect(Array(file.body.prefix(3)) == [0xEF, 0xBB, 0xBF], "a byte order mark, so a spreadsheet reads UTF-8")
        #expect(CSVFile(naming: ["قصة", "../x"], day: day, text: "").contentDisposition.hasPrefix(#"attachment; filename="___ x 2026-12-07.csv""#))
    }

    @Test func aClassKeepsSpeedPointsOffUnlessTheTeacherTurnsThemOn() throws {
        #expect(SchoolClass(id: "cls_1", name: "1A", version: 1, changedAt: ServerTime(milliseconds: 0), members: []).speedPoints == false)
        let draft = try ClassRules.check(name: "1A", children: [], using: LookalikeTable()).get()
        #expect(draft.speedPoints == nil, "not said: as it was (off for a new class)")
        #expect(try ClassRules.check(name: "1A", children: [], speedPoints: true, using: LookalikeTable()).get().speedPoints == true)
        // A room of the class takes the class's rule unless it is asked for one (the API and `start --class`).
        let quiet = SchoolClass(id: "cls_1", name: "1A", version: 1, changedAt: ServerTime(milliseconds: 0), members: [])
        var racing = quiet
        racing.speedPoints = true
        #expect(quiet.roomSettings(nil).speedPoints == false)
        #expect(racing.roomSettings(RoomSettingsPatch(timer: false)).speedPoints == true)
        #expect(racing.roomSettings(RoomSettingsPatch(timer: false)).timer == false, "the rest as asked")
        #expect(quiet.roomSettings(RoomSettingsPatch(speedPoints: true)).speedPoints == true, "asked for: as asked")
    }
}
