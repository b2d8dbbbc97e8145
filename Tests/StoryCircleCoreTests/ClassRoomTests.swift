import Testing
@testable import StoryCircleCore

/// Rooms of a class (docs/protocol.md, "Class rooms"): name-pickers, joining by member, typed names
/// refused, releasing a name for a new device, the teacher's roster, tokens of other rooms.
@Suite("Class rooms")
struct ClassRoomTests {
    static let roster = ClassRoster(id: "cls_1b", name: "Class 1B", members: [
        ClassMember(id: "mem_ada", name: "Ada", avatar: "owl"),
        ClassMember(id: "mem_bo", name: "Bo", avatar: "emoji:🦊"),
    ])

    func classRoom() -> RoomDriver { RoomDriver(classRoster: Self.roster) }

    func names(_ room: RoomDriver, to connection: ConnectionID) -> NamesList? {
        room.messages(to: connection).reversed().lazy.compactMap { if case .names(let list) = $0 { list } else { nil } }.first
    }

    func picker(_ room: inout RoomDriver) -> ConnectionID {
        let connection = room.newConnection()
        room.apply(.hello(connection, .names, at: room.now))
        return connection
    }

    /// Picks `member` on `connection` (a picker, or a new connection); the welcome, if any.
    @discardableResult
    func pick(_ room: inout RoomDriver, _ member: String, on connection: ConnectionID? = nil, token: String) -> Welcome? {
        let connection = connection ?? room.newConnection()
        for case .send(.welcome(let welcome), _) in room.apply(.hello(connection, .pick(member: member, resumeToken: token), at: room.now)) {
            return welcome
        }
        return nil
    }

    @Test func aPickerGetsTheNamesAndSeesThemTakenAsChildrenPick() throws {
        var room = classRoom()
        let first = picker(&room)
        let second = picker(&room)
        #expect(names(room, to: first) == NamesList(room: "123456", schoolClass: ClassRef(name: "Class 1B"), children: [
            NameChoice(id: "mem_ada", name: "Ada", avatar: "owl", taken: false), NameChoice(id: "mem_bo", name: "Bo", avatar: "emoji:🦊", taken: false),
        ]))
        let welcome = try #require(pick(&room, "mem_ada", on: first, token: "123456.ada"))
        #expect(welcome.token == "123456.ada")
        #expect(welcome.player?.nickname == "Ada")
        #expect(room.state.role(of: first) == .child)
        // Stored (with the member) before the welcome goes.
        let joined = try #require(room.log.firstIndex { if case .persist(.playerJoined(let player)) = $0 { player.member == "mem_ada" } else { false } })
        let welcomed = try #require(room.log.firstIndex { if case .send(.welcome, let to) = $0 { to == [first] } else { false } })
        #expect(joined < welcomed)
        #expect(names(room, to: second)?.children.map(\.taken) == [true, false], "the other picker sees Ada taken")

        // A taken name: the connection stays a picker, and may pick another.
        #expect(pick(&room, "mem_ada", on: second, token: "123456.x") == nil)
        #expect(room.lastError(to: second) == RoomError(.nameTaken, "Someone here has already picked Ada. Ask your teacher.", params: ["name": "Ada"]))
        #expect(room.closed[second] == nil)
        room.apply(.message(second, .answer(question: 0, option: 0), at: room.now))
        #expect(room.lastError(to: second)?.code == .invalidCommand, "a picker sends nothing but its pick")
        #expect(pick(&room, "mem_nobody", on: second, token: "123456.y") == nil)
        #expect(room.lastError(to: second)?.code == .memberNotFound)
        #expect(pick(&room, "mem_bo", on: second, token: "123456.bo")?.player?.nickname == "Bo")
    }

    @Test func aTypedNicknameIsRefusedInAClassRoomAndWelcomeInAnyOther() {
        var room = classRoom()
        #expect(room.join("Ada") == nil)
        #expect(room.lastError(to: ConnectionID(room.lastConnection)) == RoomError(.classRoom, "Children of Class 1B tap their own name to join this room.", params: ["class": "Class 1B"]))
        #expect(room.closed[ConnectionID(room.lastConnection)] != nil)

        var plain = RoomDriver()
        let connection = picker(&plain)
        #expect(names(plain, to: connection) == NamesList(room: "123456", schoolClass: nil, children: []))
        plain.apply(.hello(connection, .join(nickname: "Kim", resumeToken: "123456.kim"), at: plain.now))
        #expect(plain.state.role(of: connection) == .child, "a picker of a room without a class joins by typing")
    }

    @Test func aReleaseFreesTheNameAndTheNextPickIsTheSamePlayerWithTheirPoints() throws {
        var room = classRoom()
        let tablet = room.newConnection()
        let ada = try #require(pick(&room, "mem_ada", on: tablet, token: "123456.old"))
        let teacher = room.teacher()
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        room.apply(.message(tablet, .answer(question: 0, option: Fixtures.story.quiz.questions[0].answer), at: room.now))
        // Everyone has answered: the question is revealed by itself.
        #expect(room.state.phase.name == .reveal)
        let points = try #require(room.state.results().players.first { $0.id == ada.player?.id }?.score)
        #expect(points > 0)
        #expect(room.state.allowedCommands.contains(.release))

        let waiting = picker(&room)
        #expect(names(room, to: waiting)?.children.first?.taken == true)
        let released = try room.command(.release(member: "mem_ada"))
        #expect(released.first == .persist(.playerReleased(player: PlayerID(ada.player!.id), at: room.now)), "stored before anything is said")
        #expect(room.closed[tablet] == CloseReason(status: 1008, reason: "released"))
        #expect(room.messages(to: tablet).contains { if case .kicked(let notice) = $0 { notice.code == .released } else { false } })
        #expect(names(room, to: waiting)?.children.first?.taken == false)
        #expect(room.messages(to: teacher).contains { if case .classRoster(let update) = $0 { update.members.first?.taken == false } else { false } })

        // The old device's token is refused as released; the new device is Ada, with her points.
        let old = room.newConnection()
        room.apply(.hello(old, .rejoin(token: "123456.old"), at: room.now))
        #expect(room.lastError(to: old)?.code == .released)
        let again = try #require(pick(&room, "mem_ada", on: waiting, token: "123456.new"))
        #expect(again.player?.id == ada.player?.id)
        #expect(again.room.you?.score == points)
        #expect(room.persisted.last { if case .playerReclaimed = $0 { true } else { false } } == .playerReclaimed(player: PlayerID(ada.player!.id), tokenHash: RoomCredentials.hash("123456.new"), at: room.now))
        #expect(throws: RoomError.self) { try room.command(.release(member: "mem_bo")) }

        // A restart keeps all of it: the release, the new token, the member, the points.
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), classRoster: Self.roster, at: room.now)
        var after = RoomDriver(restoring: restored, at: room.now, directives: [])
        let back = after.newConnection()
        after.apply(.hello(back, .rejoin(token: "123456.new"), at: after.now))
        #expect(after.state.playerID(of: back)?.rawValue == ada.player?.id)
        let stale = after.newConnection()
        after.apply(.hello(stale, .rejoin(token: "123456.old"), at: after.now))
        #expect(after.lastError(to: stale)?.code == .released)
        #expect(after.state.results().players.first { $0.id == ada.player?.id }?.member == "mem_ada")
    }

    /// `names` tells whoever has the code who is in the class and who is present: where a join would be
    /// refused, so is `names`, except for the names of children who may come back.
    @Test func namesIsRefusedWhereAJoinWouldBeButAReleasedNameCanStillBePicked() throws {
        var room = classRoom()
        let tablet = room.newConnection()
        let ada = try #require(pick(&room, "mem_ada", on: tablet, token: "123456.old"))
        let waiting = picker(&room)
        _ = try room.command(.lock)
        #expect(room.closed[waiting] == .refused(RoomError(.roomLocked, "This room is locked. Ask your teacher to unlock it.")), "a picker is let go when the room locks")
        #expect(room.lastError(to: waiting)?.code == .roomLocked)
        #expect(!room.state.isPicker(waiting))
        _ = try room.command(.settings(RoomSettingsPatch(speedPoints: false)))
        #expect(room.messages(to: waiting).filter { if case .error = $0 { true } else { false } }.count == 1, "refused once")

        let late = room.newConnection()
        room.apply(.hello(late, .names, at: room.now))
        #expect(room.lastError(to: late)?.code == .roomLocked)
        #expect(names(room, to: late) == nil, "no names to anyone with the code")
        #expect(room.closed[late] != nil)

        // Ada's tablet went flat: once her name is released, her new device sees only her name, and picks it.
        _ = try room.command(.release(member: "mem_ada"))
        let newDevice = picker(&room)
        #expect(names(room, to: newDevice)?.children == [NameChoice(id: "mem_ada", name: "Ada", avatar: "owl", taken: false)])
        #expect(pick(&room, "mem_bo", on: newDevice, token: "123456.bo") == nil)
        #expect(room.closed[newDevice] != nil, "a new child is refused in a locked room")
        let again = picker(&room)
        #expect(pick(&room, "mem_ada", on: again, token: "123456.new")?.player?.id == ada.player?.id)

        // Unlocked: every name again.
        _ = try room.command(.unlock)
        let open = picker(&room)
        #expect(names(room, to: open)?.children.map(\.id) == ["mem_ada", "mem_bo"])
        #expect(names(room, to: open)?.schoolClass == ClassRef(name: "Class 1B"))
    }

    @Test func namesIsRefusedInARoomClosedToLateJoinersButARemovedChildMayComeBack() throws {
        var room = RoomDriver(settings: RoomSettings(lateJoin: false), classRoster: Self.roster)
        let tablet = room.newConnection()
        let ada = try #require(pick(&room, "mem_ada", on: tablet, token: "123456.ada"))
        let before = picker(&room)
        _ = room.teacher()
        try room.startAndPrepare()
        #expect(room.lastError(to: before)?.code == .joinClosed, "a picker is let go when the story starts")
        #expect(room.closed[before] != nil)
        let stranger = room.newConnection()
        room.apply(.hello(stranger, .names, at: room.now))
        #expect(room.lastError(to: stranger)?.code == .joinClosed)
        #expect(names(room, to: stranger) == nil)

        try room.command(.kick(player: ada.player!.id))
        let back = picker(&room)
        #expect(names(room, to: back)?.children.map(\.id) == ["mem_ada"], "only the removed child's name")
        #expect(pick(&room, "mem_ada", on: back, token: "123456.back")?.player?.id == ada.player?.id)
    }

    @Test func namesInARoomWithoutAClassIsRefusedAsAJoinWouldBe() throws {
        var plain = RoomDriver()
        let typing = picker(&plain)
        #expect(names(plain, to: typing)?.schoolClass == nil)
        _ = plain.teacher()
        _ = try plain.command(.lock)
        #expect(plain.lastError(to: typing)?.code == .roomLocked, "a page about to send its typed join is told at once")
        let late = plain.newConnection()
        plain.apply(.hello(late, .names, at: plain.now))
        #expect(plain.lastError(to: late)?.code == .roomLocked)
        #expect(names(plain, to: late) == nil)
    }

    @Test func aLiveRoomFollowsItsClassAndKeepsAChildWhoJoinedAfterTheyLeftIt() throws {
        var room = classRoom()
        let ada = room.newConnection()
        _ = try #require(pick(&room, "mem_ada", on: ada, token: "123456.ada"))
        let teacher = room.teacher()
        let waiting = picker(&room)
        // Ada left the class and Cy joined it, after the room was created.
        let saved = ClassRoster(id: "cls_1b", name: "Class 1B", members: [
            ClassMember(id: "mem_bo", name: "Bo", avatar: "emoji:🦊"), ClassMember(id: "mem_cy", name: "Cy", avatar: "owl"),
        ])
        room.apply(.classChanged(saved, at: room.now))
        #expect(names(room, to: waiting)?.children.map(\.id) == ["mem_bo", "mem_cy", "mem_ada"], "Ada has joined here: still shown, taken")
        #expect(names(room, to: waiting)?.children.last?.taken == true)
        #expect(room.messages(to: teacher).last.map { if case .classRoster(let update) = $0 { update.members.map(\.member) } else { [] } } == ["mem_bo", "mem_cy", "mem_ada"])
        #expect(pick(&room, "mem_cy", on: waiting, token: "123456.cy")?.player?.nickname == "Cy", "a child added since can pick their name")

        // Bo leaves before joining: no longer offered.
        room.apply(.classChanged(ClassRoster(id: "cls_1b", name: "Class 1B", members: [ClassMember(id: "mem_cy", name: "Cy", avatar: "owl")]), at: room.now))
        let late = picker(&room)
        #expect(names(room, to: late)?.children.map(\.id) == ["mem_cy", "mem_ada"])
        #expect(pick(&room, "mem_bo", on: late, token: "123456.bo") == nil)
        #expect(room.lastError(to: late)?.code == .memberNotFound)
        // Another class's change is not this room's.
        room.apply(.classChanged(ClassRoster(id: "cls_2a", name: "2A", members: []), at: room.now))
        #expect(room.state.classRoster?.members.map(\.id) == ["mem_cy", "mem_ada"])
    }

    /// However the quiz ends (`end`, or `next` or `skip` after the last question), a child still on the
    /// name-picker is told the room has finished, and picks no more.
    @Test(arguments: ["end", "next", "skip"])
    func aPickerIsToldWhenTheRoomFinishesHoweverItEnds(_ ending: String) throws {
        var room = classRoom()
        _ = try #require(pick(&room, "mem_ada", on: room.newConnection(), token: "123456.ada"))
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        try room.command(.skip)
        try room.command(.skip)
        let waiting = picker(&room)
        #expect(names(room, to: waiting)?.children.map(\.id) == ["mem_ada", "mem_bo"])
        switch ending {
        case "end": try room.command(.end)
        case "next":
            try room.command(.reveal)
            try room.command(.next)
        default: try room.command(.skip)
        }
        #expect(room.state.phase == .finished)
        #expect(room.lastError(to: waiting)?.code == .roomEnded)
        #expect(room.closed[waiting] != nil)
        #expect(!room.state.isPicker(waiting))
    }

    /// A renewal's read of the class can race a save made on this node: the older version never undoes
    /// the newer one.
    @Test func anOlderReadOfTheClassNeverUndoesANewerOne() throws {
        var room = RoomDriver(classRoster: ClassRoster(id: "cls_1b", name: "Class 1B", members: Self.roster.members, version: 2))
        let waiting = picker(&room)
        let withCy = ClassRoster(id: "cls_1b", name: "Class 1B", members: Self.roster.members + [ClassMember(id: "mem_cy", name: "Cy", avatar: "owl")], version: 3)
        room.apply(.classChanged(withCy, at: room.now))
        #expect(names(room, to: waiting)?.children.map(\.id) == ["mem_ada", "mem_bo", "mem_cy"])
        room.apply(.classChanged(ClassRoster(id: "cls_1b", name: "Class 1B", members: Self.roster.members, version: 2), at: room.now))
        #expect(room.state.classRoster?.version == 3)
        #expect(names(room, to: waiting)?.children.map(\.id) == ["mem_ada", "mem_bo", "mem_cy"])
    }

    /// A child renamed in the class after joining, coming back on a new device, is welcomed by the name
    /// the scoreboard and the projector know them by.
    @Test func aRenamedChildComingBackKeepsTheNameTheRoomKnowsThemBy() throws {
        var room = classRoom()
        let ada = try #require(pick(&room, "mem_ada", on: room.newConnection(), token: "123456.ada"))
        _ = room.teacher()
        try room.command(.release(member: "mem_ada"))
        let renamed = ClassRoster(id: "cls_1b", name: "Class 1B", members: [
            ClassMember(id: "mem_ada", name: "Adeline", avatar: "owl"), ClassMember(id: "mem_bo", name: "Bo", avatar: "emoji:🦊"),
        ])
        room.apply(.classChanged(renamed, at: room.now))
        let back = try #require(pick(&room, "mem_ada", on: room.newConnection(), token: "123456.new"))
        #expect(back.player == PlayerInfo(id: try #require(ada.player?.id), nickname: "Ada"))
        #expect(room.state.results().players.map(\.nickname) == ["Ada"])
    }

    @Test func theTeachersWelcomeListsEveryMemberPresentOrNot() throws {
        var room = classRoom()
        let ada = room.newConnection()
        _ = try #require(pick(&room, "mem_ada", on: ada, token: "123456.ada"))
        let teacher = room.teacher()
        let welcome = try #require(room.messages(to: teacher).lazy.compactMap { if case .welcome(let welcome) = $0 { welcome } else { nil } }.first)
        #expect(welcome.room.schoolClass == ClassRosterView(id: "cls_1b", name: "Class 1B", members: [
            RosterMember(member: "mem_ada", name: "Ada", avatar: "owl", player: "p1", taken: true, connected: true),
            RosterMember(member: "mem_bo", name: "Bo", avatar: "emoji:🦊", player: nil, taken: false, connected: false),
        ]))
        room.apply(.disconnected(ada, at: room.now))
        #expect(room.messages(to: teacher).last == .classRoster(ClassRosterUpdate(members: [
            RosterMember(member: "mem_ada", name: "Ada", avatar: "owl", player: "p1", taken: true, connected: false),
            RosterMember(member: "mem_bo", name: "Bo", avatar: "emoji:🦊", player: nil, taken: false, connected: false),
        ])), "a name still taken while its child is away")
        let dashboard = room.dashboard()
        let board = try #require(room.messages(to: dashboard).lazy.compactMap { if case .welcome(let welcome) = $0 { welcome } else { nil } }.first)
        #expect(board.room.schoolClass == nil, "dashboards do not get the roster")
    }

    @Test func aPickerGoesOnPickingWhenTheRoomIsRebuiltFromStorage() throws {
        var room = classRoom()
        let waiting = picker(&room)
        _ = try #require(pick(&room, "mem_ada", token: "123456.a"))
        let (rebuilt, _) = RoomState.restore(room.archive(), lookalikes: LookalikeTable(), classRoster: Self.roster, at: room.now)
        var after = rebuilt
        let told = after.reattach([waiting], from: room.state, at: room.now)
        #expect(told == [.send(.names(after.namesList), to: [waiting])])
        #expect(after.namesList.children.map(\.taken) == [true, false])
        #expect(after.isPicker(waiting))
    }

    @Test func aResumeTokenOfAnotherRoomIsToldApart() {
        var room = classRoom()
        let connection = room.newConnection()
        let directives = room.apply(.hello(connection, .rejoin(token: "654321.abc"), at: room.now))
        #expect(room.lastError(to: connection)?.code == .tokenNotForRoom)
        #expect(directives.contains(.failedToken(connection)), "still counted as a failed try")
        let other = room.newConnection()
        room.apply(.hello(other, .rejoin(token: "no-room-in-it"), at: room.now))
        #expect(room.lastError(to: other)?.code == .badToken)
        #expect(RoomState.room(ofResumeToken: "482913.q3X") == "482913")
        #expect(RoomState.room(ofResumeToken: "q3X.482913") == nil)
    }

    @Test func aKickedChildPickingTheirNameAgainIsTheSamePlayerAndABlockedOneIsNot() throws {
        var room = classRoom()
        let first = try #require(pick(&room, "mem_ada", token: "123456.a"))
        _ = try #require(pick(&room, "mem_bo", token: "123456.b"))
        try room.command(.kick(player: "Ada"))
        let back = try #require(pick(&room, "mem_ada", token: "123456.a2"))
        #expect(back.player?.id == first.player?.id)
        try room.command(.block(player: "Bo"))
        #expect(pick(&room, "mem_bo", token: "123456.b2") == nil)
        #expect(room.lastError(to: ConnectionID(room.lastConnection))?.code == .blocked)
    }
}
