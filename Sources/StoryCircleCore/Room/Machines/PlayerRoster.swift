/// Everyone who ever joined a room, and who may use which name and token there: one of the machines
/// `RoomState` is composed of. It decides nothing about phases or messages; it keeps these rules, whatever
/// the room asks of it:
/// - a player's id, once handed out, is never handed out again (`nextID`);
/// - every name key (`Nickname.matchingKeys`) and resume token of a player who is in the room (not removed,
///   not released) is theirs alone, and nobody else's name or token is;
/// - a blocked player's name keys and token stay refused; a released name's token stays refused;
/// - `active` and `connected` count, as they change, the players in the room and the connected ones among
///   them (`recount()` is the definition).
///
/// Players are read by index (`players[index]`, in place); they change only through the methods here.
struct PlayerRoster: Sendable {
    /// Where a player stands for the counts: taken out (removed, or their class name given back), in the
    /// room but not connected, or here.
    enum Presence: Sendable, Equatable {
        case out, away, here
    }

    /// How a player's presence changed: what the answer count (`AnswerBook`) follows.
    struct PresenceChange: Sendable, Equatable {
        var player: PlayerID
        var from: Presence
        var to: Presence
    }

    struct Player: Sendable, Equatable {
        let id: PlayerID
        let nickname: String
        /// Changes only when a released class child picks their name again on a new device.
        fileprivate(set) var tokenHash: String
        let joinedAt: ServerTime
        /// The child of the room's class this player is.
        let member: MemberID?
        fileprivate(set) var connection: ConnectionID?
        fileprivate(set) var score = 0
        fileprivate(set) var streak = 0
        fileprivate(set) var outcomes: [Int: QuestionOutcome] = [:]
        fileprivate(set) var kicked = false
        /// Kicked for good: the name and the resume token stay refused in this room.
        fileprivate(set) var blocked = false
        /// Until when this player, while disconnected and without an answer to the open question, holds up
        /// the automatic reveal: a child whose Wi-Fi dropped, or whose room is moving to another node, may
        /// have a tap kept by the page to send on reconnecting.
        fileprivate(set) var graceUntil: ServerTime?
        /// The nickname's `Nickname.matchingKeys`, worked out once when the player is added.
        fileprivate(set) var nameKeys: [String] = []
        /// The nickname as the scoreboard orders ties (lowercased), worked out once when the player is added:
        /// a reveal ranks the whole class, and lowercasing is the most of a comparison.
        fileprivate(set) var sortName = ""
        /// A class child whose name was given back (the teacher's release, the child's "That's not me"):
        /// nobody holds it until it is picked again, and it counts as nobody here meanwhile.
        fileprivate(set) var released = false

        init(
            id: PlayerID, nickname: String, tokenHash: String, joinedAt: ServerTime, member: MemberID? = nil, connection: ConnectionID? = nil,
            kicked: Bool = false, blocked: Bool = false, released: Bool = false
        ) {
            self.id = id
            self.nickname = nickname
            self.tokenHash = tokenHash
            self.joinedAt = joinedAt
            self.member = member
            self.connection = connection
            self.kicked = kicked
            self.blocked = blocked
            self.released = released
        }

        var presence: Presence {
            if kicked || released { return .out }
            return connection == nil ? .away : .here
        }
    }

    /// How nicknames are told apart (`Nickname.matchingKeys`): ICU's TR39 data in the server.
    let lookalikes: any ConfusableSkeleton
    /// Everyone who ever joined, in join order; kicked players stay (flagged) so their records stay whole.
    private(set) var players: [Player] = []
    private var indexByID: [PlayerID: Int] = [:]
    /// Who holds each name key of the players in the room.
    private var nameOwners: [String: PlayerID] = [:]
    private var tokenOwners: [String: PlayerID] = [:]
    /// What blocked players can no longer use here: their name keys and token hashes.
    private var blockedNames: Set<String> = []
    private var blockedTokens: Set<String> = []
    /// Resume tokens (hashes) of released names.
    private var releasedTokens: Set<String>
    /// The player each member of the class became here.
    private var playerByMember: [MemberID: PlayerID] = [:]
    private var nextNumber = 1
    /// Players in the room (not removed, not released).
    private(set) var active = 0
    /// Of those, the connected ones.
    private(set) var connected = 0

    init(lookalikes: any ConfusableSkeleton, releasedTokens: Set<String> = []) {
        self.lookalikes = lookalikes
        self.releasedTokens = releasedTokens
    }

    // MARK: - Reading

    var count: Int { players.count }

    func index(of id: PlayerID) -> Int? { indexByID[id] }

    /// The player id the next new player gets.
    mutating func nextID() -> PlayerID {
        defer { nextNumber += 1 }
        return PlayerID("p\(nextNumber)")
    }

    /// Whether a name with these keys is blocked here.
    func isBlocked(nameKeys keys: [String]) -> Bool { keys.contains(where: blockedNames.contains) }

    /// Whether a player in the room holds a name that looks like one with these keys.
    func isTaken(nameKeys keys: [String]) -> Bool { keys.contains { nameOwners[$0] != nil } }

    func isBlocked(tokenHash: String) -> Bool { blockedTokens.contains(tokenHash) }

    func isReleased(tokenHash: String) -> Bool { releasedTokens.contains(tokenHash) }

    /// The player in the room whose resume token this is.
    func owner(ofToken tokenHash: String) -> PlayerID? { tokenOwners[tokenHash] }

    /// The latest player removed (not blocked) whose resume token this is: one the token may bring back.
    func removedPlayer(withToken tokenHash: String) -> Int? {
        players.lastIndex { $0.kicked && !$0.blocked && $0.tokenHash == tokenHash }
    }

    /// The player member `id` of the class became here, if they joined.
    func player(ofMember id: MemberID) -> Int? { playerByMember[id].flatMap { indexByID[$0] } }

    /// The player in the room holding member `id`'s name (connected or not, not removed, not released).
    func holder(ofMember id: MemberID) -> Player? {
        guard let index = player(ofMember: id) else { return nil }
        return players[index].presence == .out ? nil : players[index]
    }

    /// The player a teacher's kick names, by id or by nickname: the one written so (ignoring case and
    /// spacing) or else one it looks like (a teacher typing "Ada" for the Cyrillic "Аda"); the latest
    /// joined first. Players already kicked are found only to be blocked.
    func removable(_ who: String, block: Bool) -> Int? {
        let typed = SentenceSplitter.collapsingWhitespace(who).lowercased()
        let keys = Set(Nickname.matchingKeys(typed, using: lookalikes))
        let candidates: [(Player) -> Bool] = [{ !$0.kicked }] + (block ? [{ !$0.blocked }] : [])
        for candidate in candidates {
            if let index = players.lastIndex(where: { candidate($0) && ($0.id.rawValue == who || $0.nickname.lowercased() == typed) }) { return index }
            if let index = players.lastIndex(where: { candidate($0) && !keys.isDisjoint(with: $0.nameKeys) }) { return index }
        }
        return nil
    }

    /// The counts by their definition: O(players), for tests.
    func recount() -> (active: Int, connected: Int) {
        var counts = (active: 0, connected: 0)
        for player in players where player.presence != .out {
            counts.active += 1
            if player.presence == .here { counts.connected += 1 }
        }
        return counts
    }

    // MARK: - Changing who is here

    /// Adds a player (one who joined, or one read back from storage).
    @discardableResult
    mutating func add(_ player: Player) -> PresenceChange {
        var player = player
        player.nameKeys = Nickname.matchingKeys(player.nickname, using: lookalikes)
        player.sortName = Scoreboard.sortName(player.nickname)
        indexByID[player.id] = players.count
        if let member = player.member { playerByMember[member] = player.id }
        if let number = Int(player.id.rawValue.dropFirst()) { nextNumber = max(nextNumber, number + 1) }
        players.append(player)
        count(player.presence, sign: 1)
        if player.presence != .out { register(player) }
        if player.blocked { remember(blocked: player) }
        return PresenceChange(player: player.id, from: .out, to: player.presence)
    }

    /// Connects the player at `index` to `connection`, or disconnects them (`nil`).
    mutating func connect(_ index: Int, to connection: ConnectionID?) -> PresenceChange {
        change(index) { $0.connection = connection }
    }

    /// The player's connection closed: disconnected, holding up the automatic reveal until `graceUntil`.
    mutating func leave(_ index: Int, graceUntil: ServerTime) -> PresenceChange {
        change(index) {
            $0.connection = nil
            $0.graceUntil = graceUntil
        }
    }

    /// Every player holds up the automatic reveal until `until` (they are all reconnecting to a room
    /// brought back from storage).
    mutating func holdAll(until: ServerTime) {
        for index in players.indices { players[index].graceUntil = until }
    }

    /// A removed (not blocked) player let back in on `connection`, their names and token theirs again.
    mutating func readmit(_ index: Int, on connection: ConnectionID) -> PresenceChange {
        let change = change(index) {
            $0.kicked = false
            $0.connection = connection
        }
        register(players[index])
        return change
    }

    /// Removes the player at `index` (and disconnects them). `block` also refuses their name keys and token
    /// from now on; a player already removed may be blocked.
    mutating func remove(_ index: Int, block: Bool) -> PresenceChange {
        let wasKicked = players[index].kicked
        let change = change(index) {
            $0.kicked = true
            $0.connection = nil
            if block { $0.blocked = true }
        }
        if !wasKicked { unregister(players[index]) }
        if block { remember(blocked: players[index]) }
        return change
    }

    /// Frees the name the player at `index` holds: released, their token refused from now on, disconnected.
    mutating func release(_ index: Int) -> PresenceChange {
        unregister(players[index])
        releasedTokens.insert(players[index].tokenHash)
        return change(index) {
            $0.released = true
            $0.connection = nil
        }
    }

    /// A class child picking again the name their player holds (after a release or a removal), on
    /// `connection` with a new resume token.
    mutating func reclaim(_ index: Int, tokenHash: String, on connection: ConnectionID) -> PresenceChange {
        unregister(players[index])
        let change = change(index) {
            $0.kicked = false
            $0.released = false
            $0.tokenHash = tokenHash
            $0.connection = connection
        }
        register(players[index])
        return change
    }

    // MARK: - Scores

    /// Applies the outcome of question `question` to every player in the room (`answers` by player id).
    mutating func conclude(_ question: Int, answers: [PlayerID: AnswerRecord], skipped: Bool) {
        for i in players.indices where !players[i].kicked {
            if skipped {
                players[i].outcomes[question] = .skipped
            } else if let answer = answers[players[i].id] {
                players[i].outcomes[question] = answer.correct ? .correct : .wrong
                players[i].score += answer.points
                players[i].streak = answer.correct ? players[i].streak + 1 : 0
            } else {
                players[i].outcomes[question] = .missed
                players[i].streak = 0
            }
        }
    }

    // MARK: - Keeping the rules

    /// Changes the player at `index`, keeping the counts in step.
    private mutating func change(_ index: Int, _ body: (inout Player) -> Void) -> PresenceChange {
        let before = players[index].presence
        body(&players[index])
        let after = players[index].presence
        if before != after {
            count(before, sign: -1)
            count(after, sign: 1)
        }
        return PresenceChange(player: players[index].id, from: before, to: after)
    }

    private mutating func count(_ presence: Presence, sign: Int) {
        switch presence {
        case .out: break
        case .away: active += sign
        case .here:
            active += sign
            connected += sign
        }
    }

    /// Makes the player's names and token theirs.
    private mutating func register(_ player: Player) {
        for key in player.nameKeys { nameOwners[key] = player.id }
        tokenOwners[player.tokenHash] = player.id
    }

    /// Frees the player's names and token.
    private mutating func unregister(_ player: Player) {
        for key in player.nameKeys where nameOwners[key] == player.id { nameOwners[key] = nil }
        if tokenOwners[player.tokenHash] == player.id { tokenOwners[player.tokenHash] = nil }
    }

    private mutating func remember(blocked player: Player) {
        blockedNames.formUnion(player.nameKeys)
        blockedTokens.insert(player.tokenHash)
    }
}
