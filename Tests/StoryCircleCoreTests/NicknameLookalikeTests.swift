import Testing
@testable import StoryCircleCore

/// Look-alike names in a room, over a pure table of look-alikes (`LookalikeTable`): the room's rules. The
/// folding with ICU's real data is ConfusablesTests'.
@Suite("Look-alike nicknames")
struct NicknameLookalikeTests {
    let table = LookalikeTable()

    @Test func keysFoldCaseSpacingDashesAccentsAndLookalikes() {
        let poopy = Nickname.matchingKeys("Poopy Pants", using: table)
        #expect(poopy == ["poopypants"])
        for name in ["P00py Pants", "poopy pants", "POOPY-PANTS", "Poopy_Pants", "PoopyPants", "Р\u{043E}\u{043E}р\u{0443} Pants"] {
            #expect(!Set(Nickname.matchingKeys(name, using: table)).isDisjoint(with: poopy), "\(name)")
        }
        #expect(Nickname.matchingKeys("Zoé", using: table) == Nickname.matchingKeys("zoe", using: table))
        #expect(Nickname.matchingKeys("Ana", using: table) != Nickname.matchingKeys("Ann", using: table))
    }

    @Test func capitalIMeetsSmallLAndSmallI() {
        let ida = Set(Nickname.matchingKeys("Ida", using: table))
        #expect(ida.count == 2, "one key folds case first, the other takes the skeleton as written")
        #expect(!ida.isDisjoint(with: Nickname.matchingKeys("ida", using: table)))
        #expect(!ida.isDisjoint(with: Nickname.matchingKeys("lda", using: table)))
    }

    @Test func aNameOfOnlyDashesKeepsThem() {
        #expect(Nickname.matchingKeys("-", using: table) == ["-"])
        #expect(Nickname.matchingKeys("- -", using: table) == ["- -"], "nothing left to drop to: kept whole")
    }

    @Test func lookalikesOfABlockedNameAreRefusedAsBlocked() throws {
        var room = RoomDriver()
        _ = try room.child("Poopy Pants")
        try room.command(.block(player: "Poopy Pants"))
        for name in ["P00py Pants", "Poopy  Pants", "poopy pants", "\u{0420}\u{043E}\u{043E}\u{0440}\u{0443} \u{0420}\u{0430}nts"] {
            #expect(room.join(name) == nil, "\(name)")
            let error = room.lastError(to: ConnectionID(room.lastConnection))
            #expect(error?.code == .blocked, "\(name)")
            #expect(error?.params?["nickname"] == (try? Nickname.normalize(name).get()), "the name as the child typed it (collapsed)")
        }
        _ = try room.child("Ana")
    }

    @Test func lookalikesOfAPresentChildAreRefusedAsTaken() throws {
        var room = RoomDriver()
        _ = try room.child("Ada")
        for name in ["\u{0410}da", "ADA", "A da", "A-da"] {
            #expect(room.join(name) == nil, "\(name)")
            #expect(room.lastError(to: ConnectionID(room.lastConnection))?.code == .nicknameTaken, "\(name)")
        }
        _ = try room.child("Ida")
        #expect(room.join("lda") == nil, "Ida's second key")
        #expect(room.join("ida") == nil, "Ida's first key")
        _ = try room.child("Adam")
        _ = try room.child("Zoé")
        #expect(room.join("ZOE") == nil, "accents dropped")
    }

    @Test func aKickedChildsNameIsFreeAgainAndABlockedOnesStaysRefusedAfterARestart() throws {
        var room = RoomDriver()
        _ = try room.child("Ada")
        _ = try room.child("Ben")
        try room.command(.kick(player: "\u{0410}DA"))
        #expect(room.state.playerCount == 1, "the teacher's kick finds Ada by a look-alike too")
        try room.command(.block(player: "Ben"))
        let (restored, _) = RoomState.restore(room.archive(), lookalikes: table, at: room.now)
        var back = RoomDriver(restoring: restored, at: room.now, directives: [])
        #expect(back.join("BEN") == nil)
        #expect(back.lastError(to: ConnectionID(back.lastConnection))?.code == .blocked)
        _ = try back.child("ada")
    }

    @Test func aNameTooLongIsRefusedWithTheLimitNeverCut() {
        var room = RoomDriver()
        let long = "Maximiliana Theodora von Rosenberg-Habsburg"
        #expect(room.join(long) == nil)
        let error = room.lastError(to: ConnectionID(room.lastConnection))
        #expect(error?.code == .nicknameInvalid)
        #expect(error?.params == ["problem": "too_long", "length": String(long.count), "max": "40"])
        #expect(error?.message.contains("at most 40") == true)
        #expect(room.state.playerCount == 0)
    }
}
