import Testing
@testable import StoryCircleCore

/// The roster alone: ids, names, tokens, blocks and releases, and its counts, without a room around it.
@Suite("Player roster")
struct PlayerRosterTests {
    private let t0 = ServerTime(milliseconds: 1_000)

    private func player(_ id: PlayerID, _ nickname: String, token: String? = nil, member: MemberID? = nil, on connection: UInt64? = nil) -> PlayerRoster.Player {
        PlayerRoster.Player(id: id, nickname: nickname, tokenHash: token ?? "hash-\(id)", joinedAt: t0, member: member, connection: connection.map(ConnectionID.init))
    }

    private func expectCountsHold(_ roster: PlayerRoster, sourceLocation: SourceLocation = #_sourceLocation) {
        let counted = roster.recount()
        #expect(roster.active == counted.active && roster.connected == counted.connected, sourceLocation: sourceLocation)
    }

    @Test func idsAreNeverHandedOutTwiceEvenAfterPlayersReadBack() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        let first = roster.nextID()
        roster.add(player("p7", "Ana"))
        let afterReadBack = roster.nextID()
        roster.add(player("p3", "Ben"))
        let afterAnEarlierOne = roster.nextID()
        #expect(first == "p1")
        #expect(afterReadBack == "p8", "a player read back from storage moves the next id past theirs")
        #expect(afterAnEarlierOne == "p9")
    }

    @Test func aNameAndATokenAreTheirHoldersAlone() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana", token: "t-ana", on: 1))
        let keys = Nickname.matchingKeys("ana", using: LookalikeTable())
        #expect(roster.isTaken(nameKeys: keys))
        #expect(roster.owner(ofToken: "t-ana") == "p1")
        #expect(roster.index(of: "p1") == 0)
        expectCountsHold(roster)
        #expect(roster.active == 1 && roster.connected == 1)
    }

    @Test func removingFreesTheNameAndBlockingRefusesItForGood() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana", token: "t-ana", on: 1))
        let keys = roster.players[0].nameKeys

        let kicked = roster.remove(0, block: false)
        #expect(kicked == .init(player: "p1", from: .here, to: .out))
        #expect(!roster.isTaken(nameKeys: keys) && !roster.isBlocked(nameKeys: keys))
        #expect(roster.owner(ofToken: "t-ana") == nil)
        #expect(roster.removedPlayer(withToken: "t-ana") == 0, "a removed player's token may bring them back")
        #expect(roster.players[0].connection == nil)
        expectCountsHold(roster)

        // Blocking one already removed is allowed, and refuses name and token from now on.
        _ = roster.remove(0, block: true)
        #expect(roster.isBlocked(nameKeys: keys) && roster.isBlocked(tokenHash: "t-ana"))
        #expect(roster.removedPlayer(withToken: "t-ana") == nil, "a blocked player is not let back in")
        expectCountsHold(roster)
    }

    @Test func aReadmittedPlayerHoldsTheirNameAgain() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana", token: "t-ana", on: 1))
        _ = roster.remove(0, block: false)
        let back = roster.readmit(0, on: ConnectionID(2))
        #expect(back == .init(player: "p1", from: .out, to: .here))
        #expect(roster.owner(ofToken: "t-ana") == "p1")
        #expect(roster.isTaken(nameKeys: roster.players[0].nameKeys))
        expectCountsHold(roster)
    }

    @Test func aReleasedNameRefusesItsOldTokenAndIsReclaimedWithANewOne() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana", token: "t-old", member: "m1", on: 1))
        #expect(roster.holder(ofMember: "m1")?.id == "p1")

        let released = roster.release(0)
        #expect(released.to == .out)
        #expect(roster.holder(ofMember: "m1") == nil && roster.player(ofMember: "m1") == 0)
        #expect(roster.isReleased(tokenHash: "t-old") && roster.owner(ofToken: "t-old") == nil)
        expectCountsHold(roster)

        let reclaimed = roster.reclaim(0, tokenHash: "t-new", on: ConnectionID(5))
        #expect(reclaimed == .init(player: "p1", from: .out, to: .here))
        #expect(roster.owner(ofToken: "t-new") == "p1" && roster.isReleased(tokenHash: "t-old"))
        #expect(roster.holder(ofMember: "m1")?.connection == ConnectionID(5))
        expectCountsHold(roster)
    }

    @Test func leavingKeepsThePlayerAwayWithAGrace() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana", on: 1))
        let left = roster.leave(0, graceUntil: t0 + 4_000)
        #expect(left == .init(player: "p1", from: .here, to: .away))
        #expect(roster.players[0].graceUntil == t0 + 4_000)
        #expect(roster.active == 1 && roster.connected == 0)
        roster.holdAll(until: t0 + 9_000)
        #expect(roster.players[0].graceUntil == t0 + 9_000)
    }

    @Test func aKickFindsTheLatestByIdNameOrLookalike() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana"))
        roster.add(player("p2", "Ben"))
        #expect(roster.removable("p2", block: false) == 1)
        #expect(roster.removable("  ANA ", block: false) == 0)
        #expect(roster.removable("Zed", block: false) == nil)
        _ = roster.remove(0, block: false)
        #expect(roster.removable("Ana", block: false) == nil, "a removed player is found only to be blocked")
        #expect(roster.removable("Ana", block: true) == 0)
    }

    @Test func concludingScoresThePlayersInTheRoom() {
        var roster = PlayerRoster(lookalikes: LookalikeTable())
        roster.add(player("p1", "Ana"))
        roster.add(player("p2", "Ben"))
        roster.add(player("p3", "Cat"))
        _ = roster.remove(2, block: false)
        let right = AnswerRecord(player: "p1", question: 0, option: 1, receivedAt: t0, elapsedMs: 10, correct: true, points: 900)
        roster.conclude(0, answers: ["p1": right], skipped: false)
        #expect(roster.players.map(\.score) == [900, 0, 0])
        #expect(roster.players.map(\.streak) == [1, 0, 0])
        #expect(roster.players[0].outcomes[0] == .correct && roster.players[1].outcomes[0] == .missed)
        #expect(roster.players[2].outcomes[0] == nil, "a removed player is not scored")
        roster.conclude(1, answers: [:], skipped: true)
        #expect(roster.players[0].outcomes[1] == .skipped && roster.players[0].streak == 1)
    }
}
