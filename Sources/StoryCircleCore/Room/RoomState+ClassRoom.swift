/// Class rooms (docs/protocol.md, "Class rooms"): children pick their own name and picture instead of
/// typing one. A connection that says `names` becomes a name-picker, kept up to date with which names are
/// taken, until it picks one; the teacher can release a name for a child on a new device, and the next
/// pick of it is the same player, with their points and answers.
extension RoomState {
    /// A resume token names the room it was made for (`<code>.<random>`), so that one of another room is
    /// told apart from one that is simply wrong.
    public static func room(ofResumeToken token: String) -> RoomCode? {
        guard let dot = token.firstIndex(of: "."), dot != token.startIndex else { return nil }
        let room = token[..<dot]
        return room.count <= 12 && room.allSatisfy(\.isASCII) && room.allSatisfy(\.isNumber) ? RoomCode(String(room)) : nil
    }

    /// Whether the connection is a name-picker (its `join` is its hello).
    public func isPicker(_ connection: ConnectionID) -> Bool { picking.isPicking(connection) }

    mutating func greetPicker(_ connection: ConnectionID, at: ServerTime) -> [RoomDirective] {
        if picking.isPicking(connection) {
            return reply(connection, RoomError(.invalidCommand, "Pick your name first."))
        }
        // Refused as a join would be: who is in a locked room (or one closed to late joiners) is nobody's
        // business who merely has the code. Only a child who may come back sees names then (below).
        if let refusal = joinRefusal(), classRoster == nil || namesList.children.isEmpty {
            return refuse(connection, refusal)
        }
        picking.add(connection)
        return [.send(.names(namesList), to: [connection])]
    }

    /// Whether the name of member `id` can be picked now that new children are refused for `refusal`: it is
    /// the name of a player of this room who may come back as `pick` lets them (released, or removed when
    /// the room only takes no late joiners), and is not held.
    func mayComeBack(_ id: MemberID, despite refusal: RoomError) -> Bool {
        guard phase != .finished, let index = roster.player(ofMember: id) else { return false }
        let player = roster.players[index]
        if player.blocked { return false }
        if player.kicked { return refusal.code == .joinClosed }
        return player.released
    }

    /// Who may come in changed (locked, unlocked, started, settings): each picker gets the names it may
    /// pick now if they changed from `before` (what pickers were shown; `nil` when there were none), and
    /// pickers that may pick none are refused, as their `names` would be now, and are pickers no more.
    mutating func pickersFollowAdmission(since before: NamesList?) -> [RoomDirective] {
        guard let before, !picking.isEmpty else { return [] }
        let now = namesList
        if let refusal = joinRefusal(), classRoster == nil || now.children.isEmpty {
            return picking.removeAll().flatMap { refuse($0, refusal) }
        }
        return classRoster == nil || now == before ? [] : [.send(.names(now), to: picking.connections)]
    }

    /// A child picking their name: a new player linked to the member, or the player they already are
    /// here (after a release, or a removal), on this device.
    mutating func pick(_ connection: ConnectionID, member id: MemberID, resumeToken: String, at: ServerTime) -> [RoomDirective] {
        let wasPicker = picking.isPicking(connection)
        // A mistaken pick leaves a picker picking; a pick as the first message is refused and closed.
        func answer(_ error: RoomError) -> [RoomDirective] { wasPicker ? reply(connection, error) : refuse(connection, error) }
        guard let classRoster else {
            return answer(RoomError(.memberNotFound, "This room has no class: type your nickname.", params: ["id": String(id.rawValue.prefix(64))]))
        }
        guard let member = classRoster.member(id.rawValue) else {
            return answer(RoomError(.memberNotFound, "That name is not in this class.", params: ["id": String(id.rawValue.prefix(64))]))
        }
        let existing = roster.player(ofMember: id)
        if let existing, roster.players[existing].blocked {
            return refuse(connection, RoomError(.blocked, "The name \(member.name) can’t be used in this room.", params: ["nickname": member.name]))
        }
        if let existing, roster.players[existing].presence != .out {
            return answer(RoomError(.nameTaken, "Someone here has already picked \(member.name). Ask your teacher.", params: ["name": member.name]))
        }
        // A child coming back is let in as a join would be: not into a room that has ended or is
        // locked, and (if they were removed) not into a full one.
        if phase == .finished {
            return refuse(connection, RoomError(.roomEnded, "This room has finished. Ask your teacher for a new code."))
        }
        if existing == nil || roster.players[existing!].kicked, let refusal = joinRefusal(), existing == nil || refusal.code != .joinClosed {
            return refuse(connection, refusal)
        }
        picking.remove(connection)
        let tokenHash = RoomCredentials.hash(resumeToken)
        var directives: [RoomDirective]
        let playerID: PlayerID
        if let index = existing {
            let player = roster.players[index]
            playerID = player.id
            directives = player.kicked ? [.persist(.playerReadmitted(player: player.id, at: at))] : []
            book.follow(roster.reclaim(index, tokenHash: tokenHash, on: connection))
            directives.append(.persist(.playerReclaimed(player: player.id, tokenHash: tokenHash, at: at)))
        } else {
            playerID = roster.nextID()
            add(Player(id: playerID, nickname: member.name, tokenHash: tokenHash, joinedAt: at, member: id, connection: connection))
            directives = [.persist(.playerJoined(PlayerRecord(id: playerID, nickname: member.name, tokenHash: tokenHash, joinedAt: at, member: id)))]
        }
        audience.admit(connection, as: .child(playerID: playerID))
        // A child coming back keeps the name the room knows them by (the scoreboard's, the projector's),
        // even if the class has renamed them since they joined.
        let nickname = roster.index(of: playerID).map { roster.players[$0].nickname } ?? member.name
        let welcome = Welcome(role: .child, player: PlayerInfo(id: playerID.rawValue, nickname: nickname), token: resumeToken, serverTime: at, room: snapshot(for: .child(playerID: playerID)))
        // The welcome carries the resume token: the player (or their new token) is durable before it goes.
        return directives + [.send(.welcome(welcome), to: [connection])] + markScreensDirty(at: at) + namesChanged()
    }

    /// The teacher frees a child's name (a child who tapped the wrong one, or one on a new device): the
    /// device holding it goes back to the name-picker and its token is refused from now on; the next pick
    /// of the name is the same player.
    mutating func release(_ id: MemberID, at: ServerTime) throws(RoomError) -> [RoomDirective] {
        guard let classRoster, let member = classRoster.member(id.rawValue) else {
            throw RoomError(.memberNotFound, "That name is not in this room's class.", params: ["id": String(id.rawValue.prefix(64))])
        }
        guard let index = roster.player(ofMember: id), roster.players[index].presence != .out else {
            throw CommandRefusal.notTaken.error("release", "Nobody holds the name \(member.name) now.")
        }
        let connection = roster.players[index].connection
        var directives = free(index, at: at)
        if let connection {
            // Said kindly (the page words `released`): a mix-up is nobody's fault.
            directives += [
                .send(.kicked(Notice(code: .released, message: "Your teacher gave this name back. Tap your own name.")), to: [connection]),
                .close(connection, CloseReason(ErrorCode.released)),
            ]
        }
        return directives + markScreensDirty(at: at) + revealIfEveryoneAnswered(at: at) + namesChanged()
    }

    /// A child who tapped a name that is not theirs gives it back before their first answer: the name is
    /// free at once and this connection is a name-picker again, sent the names (after the release is
    /// stored) to tap their own. Once they have answered, the answers are someone's: only the teacher frees
    /// the name then.
    mutating func giveBack(_ playerID: PlayerID, from connection: ConnectionID, at: ServerTime) -> [RoomDirective] {
        guard classRoster != nil, let index = roster.index(of: playerID), roster.players[index].member != nil else {
            return reply(connection, RoomError(.invalidCommand, "Only a child who tapped a name in a class room can give it back."))
        }
        if phase == .finished {
            return reply(connection, RoomError(.roomEnded, "This room has finished."))
        }
        if hasAnswered(playerID) {
            return reply(connection, RoomError(.notMeAfterAnswer, "You have answered with this name, so it stays yours. If it is not your name, ask your teacher."))
        }
        var directives = free(index, at: at)
        picking.add(connection)
        directives += markScreensDirty(at: at) + revealIfEveryoneAnswered(at: at)
        // The room may take no new children now (locked, started without late joiners): this picker is
        // then shown only the names that may come back, the one just given back among them.
        return directives + namesChanged()
    }

    /// Whether the player has an accepted answer to any question.
    func hasAnswered(_ playerID: PlayerID) -> Bool {
        book.hasAnswered(playerID)
    }

    /// Frees the name the player at `index` holds: stored as released, their token refused from now on,
    /// their connection (if any) no longer theirs.
    private mutating func free(_ index: Int, at: ServerTime) -> [RoomDirective] {
        let player = roster.players[index]
        if let connection = player.connection { audience.remove(connection) }
        book.follow(roster.release(index))
        return [.persist(.playerReleased(player: player.id, at: at))]
    }

    /// The class was saved while the room is live: a child added since appears on the pickers, a renamed
    /// one or a new picture shows; a child left out of the class is no longer offered, unless they have
    /// joined this room (their player keeps its name here, and the teacher's roster keeps them, as they were).
    mutating func followClass(_ roster: ClassRoster) -> [RoomDirective] {
        // An older read of the class (a renewal's, racing a save made here) never undoes a newer one.
        let players = self.roster
        guard phase != .finished, picking.follow(roster, joined: { players.player(ofMember: MemberID($0.id)) != nil }) else { return [] }
        return namesChanged()
    }

    /// Whether a player of the room holds member `id`'s name (connected or not, not removed, not released).
    func holdsName(_ id: MemberID) -> Player? {
        roster.holder(ofMember: id)
    }

    /// The names a picker is shown: every child of the class while new children may join; when they may
    /// not (`joinRefusal`), only the names of children who may come back.
    var namesList: NamesList {
        guard let classRoster else { return NamesList(room: code.rawValue, schoolClass: nil, children: []) }
        let refusal = joinRefusal()
        let shown = refusal.map { refusal in classRoster.members.filter { mayComeBack(MemberID($0.id), despite: refusal) } } ?? classRoster.members
        return NamesList(
            room: code.rawValue, schoolClass: ClassRef(name: classRoster.name),
            children: shown.map { NameChoice(id: $0.id, name: $0.name, avatar: $0.avatar, taken: holdsName(MemberID($0.id)) != nil) }
        )
    }

    var rosterMembers: [RosterMember] {
        (classRoster?.members ?? []).map { member in
            let holder = holdsName(MemberID(member.id))
            return RosterMember(member: member.id, name: member.name, avatar: member.avatar, player: holder?.id.rawValue, taken: holder != nil, connected: holder?.connection != nil)
        }
    }

    var rosterView: ClassRosterView? {
        classRoster.map { ClassRosterView(id: $0.id, name: $0.name, members: rosterMembers) }
    }

    /// A name was taken or freed: pickers get the names again, teachers the roster.
    func namesChanged() -> [RoomDirective] {
        guard classRoster != nil else { return [] }
        let pickers = picking.connections
        return (pickers.isEmpty ? [] : [.send(.names(namesList), to: pickers)]) + rosterChanged()
    }

    /// Who is here changed: teachers of a class room get the roster.
    func rosterChanged() -> [RoomDirective] {
        guard classRoster != nil else { return [] }
        let teachers = audience.teachers
        return teachers.isEmpty ? [] : [.send(.classRoster(ClassRosterUpdate(members: rosterMembers)), to: teachers)]
    }
}
