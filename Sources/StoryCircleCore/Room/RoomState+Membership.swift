extension RoomState {
    mutating func greet(_ connection: ConnectionID, _ hello: Hello, at: ServerTime) -> [RoomDirective] {
        if audience[connection] != nil {
            return reply(connection, RoomError(.alreadyIdentified, "This connection has already said who it is."))
        }
        switch hello {
        case .join(let nickname, let resumeToken):
            if let classRoster {
                let refusal = RoomError(.classRoom, "Children of \(classRoster.name) tap their own name to join this room.", params: ["class": classRoster.name])
                return picking.isPicking(connection) ? reply(connection, refusal) : refuse(connection, refusal)
            }
            picking.remove(connection)
            return join(connection, nickname: nickname, resumeToken: resumeToken, at: at)
        case .names:
            return greetPicker(connection, at: at)
        case .pick(let member, let resumeToken):
            return pick(connection, member: MemberID(member), resumeToken: resumeToken, at: at)
        case .rejoin(let token):
            if picking.isPicking(connection) { return reply(connection, RoomError(.invalidCommand, "Pick your name first.")) }
            return rejoin(connection, token: token, at: at)
        case .watch(let token):
            if picking.isPicking(connection) { return reply(connection, RoomError(.invalidCommand, "Pick your name first.")) }
            guard let role = credentials.watchRole(for: token) else {
                return refuseToken(connection, "That dashboard link is not valid for this room.")
            }
            return admitScreen(connection, role: role, at: at)
        case .control(let token):
            if picking.isPicking(connection) { return reply(connection, RoomError(.invalidCommand, "Pick your name first.")) }
            if credentials.isTeacher(token) {
                return admitScreen(connection, role: .teacher, at: at, dashboardToken: credentials.dashboardToken(forTeacherToken: token))
            }
            if credentials.watchRole(for: token) == .dashboard {
                return refuse(connection, RoomError(.wrongRole, "A dashboard link can watch the room but not control it."))
            }
            return refuseToken(connection, "That teacher link is not valid for this room.")
        }
    }

    /// Why a new child cannot come in now, if they cannot.
    func joinRefusal() -> RoomError? {
        if phase == .finished {
            return RoomError(.roomEnded, "This room has finished. Ask your teacher for a new code.")
        }
        if isLocked {
            return RoomError(.roomLocked, "This room is locked. Ask your teacher to unlock it.")
        }
        if phase != .lobby, !settings.lateJoin {
            return RoomError(.joinClosed, "The story has already started, and this room does not take late joiners.")
        }
        if playerCount >= settings.maxPlayers {
            return RoomError(.roomFull, "This room is full.")
        }
        return nil
    }

    private mutating func join(_ connection: ConnectionID, nickname raw: String, resumeToken: String, at: ServerTime) -> [RoomDirective] {
        if let refusal = joinRefusal() { return refuse(connection, refusal) }
        let nickname: String
        switch Nickname.normalize(raw) {
        case .success(let normalized): nickname = normalized
        case .failure(let problem): return refuse(connection, RoomError(.nicknameInvalid, problem.message, params: problem.params))
        }
        // Look-alikes count as the same name (`Nickname.matchingKeys`): "P00py Pants" after "Poopy Pants"
        // was blocked is blocked too, and a Cyrillic "Аda" beside "Ada" is taken.
        let keys = Nickname.matchingKeys(nickname, using: lookalikes)
        if roster.isBlocked(nameKeys: keys) {
            // Said without blame: another child may have picked the same name innocently.
            return refuse(connection, RoomError(.blocked, "The name \(nickname) can’t be used in this room. Please pick another nickname.", params: ["nickname": nickname]))
        }
        if roster.isTaken(nameKeys: keys) {
            return refuse(connection, RoomError(.nicknameTaken, "Someone in this room is already called \(nickname). Please pick another nickname.", params: ["nickname": nickname]))
        }

        let id = roster.nextID()
        let tokenHash = RoomCredentials.hash(resumeToken)
        add(Player(id: id, nickname: nickname, tokenHash: tokenHash, joinedAt: at, connection: connection))
        audience.admit(connection, as: .child(playerID: id))

        let welcome = Welcome(role: .child, player: PlayerInfo(id: id.rawValue, nickname: nickname), token: resumeToken, serverTime: at, room: snapshot(for: .child(playerID: id)))
        // The welcome carries the resume token, so the player must be durable before it goes out.
        return [.persist(.playerJoined(PlayerRecord(id: id, nickname: nickname, tokenHash: tokenHash, joinedAt: at))), .send(.welcome(welcome), to: [connection])]
            + markScreensDirty(at: at)
    }

    /// Whether `token` is the resume token of a child who may come back to this room (not removed for good,
    /// not given back): such a rejoin is let past the limits on guessing, which are for strangers.
    public func recognizes(resumeToken token: String) -> Bool {
        let tokenHash = RoomCredentials.hash(token)
        guard !roster.isBlocked(tokenHash: tokenHash), !roster.isReleased(tokenHash: tokenHash) else { return false }
        return roster.owner(ofToken: tokenHash) != nil || roster.removedPlayer(withToken: tokenHash) != nil
    }

    private mutating func rejoin(_ connection: ConnectionID, token: String, at: ServerTime) -> [RoomDirective] {
        let tokenHash = RoomCredentials.hash(token)
        if roster.isBlocked(tokenHash: tokenHash) {
            return refuse(connection, RoomError(.blocked, Self.removedMessage))
        }
        if roster.isReleased(tokenHash: tokenHash) {
            return refuse(connection, RoomError(.released, "This name was given back. Please tap your own name."))
        }
        if roster.owner(ofToken: tokenHash) == nil, let room = Self.room(ofResumeToken: token), room != code {
            return [.failedToken(connection)] + refuse(connection, RoomError(.tokenNotForRoom, "This page remembers another room. Please pick your name again."))
        }
        if roster.owner(ofToken: tokenHash) == nil, let index = roster.removedPlayer(withToken: tokenHash) {
            return readmit(index, connection, at: at)
        }
        guard let id = roster.owner(ofToken: tokenHash), let index = roster.index(of: id), !roster.players[index].kicked else {
            return refuseToken(connection, "We could not find you in this room. Please join again with your nickname.")
        }
        var directives: [RoomDirective] = []
        if let previous = roster.players[index].connection, previous != connection {
            audience.remove(previous)
            let replaced = RoomError(.sessionReplaced, "You opened this room somewhere else, so this page has stopped.")
            directives += [.send(.error(replaced), to: [previous]), .close(previous, .refused(replaced))]
        }
        connect(index, to: connection)
        audience.admit(connection, as: .child(playerID: id))
        let welcome = Welcome(role: .child, player: PlayerInfo(id: id.rawValue, nickname: roster.players[index].nickname), token: nil, serverTime: at, room: snapshot(for: .child(playerID: id)))
        return directives + [.send(.welcome(welcome), to: [connection])] + markScreensDirty(at: at) + rosterChanged()
    }

    /// A child removed (not blocked) coming back with the resume token of this browser: the teacher's
    /// "remove" may have been a mistake, and a child let back in is the same child, with their answers and
    /// points, not a second one at 0. Only the token brings a child back (a name alone could be anyone's),
    /// and only as a join would be let in: not into a room that has ended, is locked or is full, nor while
    /// another child holds a name that looks like theirs.
    private mutating func readmit(_ index: Int, _ connection: ConnectionID, at: ServerTime) -> [RoomDirective] {
        let player = roster.players[index]
        if phase == .finished {
            return refuse(connection, RoomError(.roomEnded, "This room has finished. Ask your teacher for a new code."))
        }
        if isLocked {
            return refuse(connection, RoomError(.roomLocked, "This room is locked. Ask your teacher to unlock it."))
        }
        if playerCount >= settings.maxPlayers {
            return refuse(connection, RoomError(.roomFull, "This room is full."))
        }
        if roster.isTaken(nameKeys: player.nameKeys) {
            return refuse(connection, RoomError(.nicknameTaken, "Someone in this room is already called \(player.nickname). Please pick another nickname.", params: ["nickname": player.nickname]))
        }
        book.follow(roster.readmit(index, on: connection))
        audience.admit(connection, as: .child(playerID: player.id))
        let welcome = Welcome(role: .child, player: PlayerInfo(id: player.id.rawValue, nickname: player.nickname), token: nil, serverTime: at, room: snapshot(for: .child(playerID: player.id)))
        // Let back in for good only once stored: a restart must not find them removed after the welcome.
        return [.persist(.playerReadmitted(player: player.id, at: at)), .send(.welcome(welcome), to: [connection])] + markScreensDirty(at: at) + namesChanged()
    }

    /// `dashboardToken`: the projector's token, for a teacher's control connection only.
    mutating func admitScreen(_ connection: ConnectionID, role: Role, at: ServerTime, dashboardToken: String? = nil) -> [RoomDirective] {
        let member: Member = role == .teacher ? .teacher : .dashboard
        audience.admit(connection, as: member)
        let welcome = Welcome(role: role, player: nil, token: nil, serverTime: at, room: snapshot(for: member),
                              dashboardToken: role == .teacher ? dashboardToken : nil)
        // A teacher who arrives while storage is failing is told at once, not at the next change.
        let storage: [RoomDirective] = role == .teacher && storeProblem != nil ? [.send(.storage(storeHealthStatus), to: [connection])] : []
        return [.send(.welcome(welcome), to: [connection])] + storage
    }

    mutating func disconnect(_ connection: ConnectionID, at: ServerTime) -> [RoomDirective] {
        book.forget(connection)
        picking.remove(connection)
        guard let member = audience.remove(connection) else { return [] }
        guard case .child(let id) = member, let index = roster.index(of: id), roster.players[index].connection == connection else { return [] }
        book.follow(roster.leave(index, graceUntil: at + Self.reconnectGraceMs))
        // A child who leaves no longer holds up "everyone has answered", once their grace has run out.
        return [.persist(.playerLeft(player: id, at: at))] + markScreensDirty(at: at) + revealIfEveryoneAnswered(at: at) + rosterChanged()
    }

    static let removedMessage = "Your teacher removed you from this room."

    /// Removes a player. `block` also refuses, from now on and after a restart, their resume token (so the
    /// same browser cannot rejoin) and their nickname (so they cannot join again under it). A kicked,
    /// unblocked player may join again; blocking one who was already kicked is allowed.
    mutating func kick(_ who: String, block: Bool, at: ServerTime) throws(RoomError) -> [RoomDirective] {
        guard let index = roster.removable(who, block: block) else {
            throw RoomError(.playerNotFound, "No player called \"\(who)\" is in this room.", params: ["player": who])
        }
        let player = roster.players[index]
        book.follow(roster.remove(index, block: block))
        var directives: [RoomDirective] = [.persist(block ? .playerBlocked(player: player.id, at: at) : .playerKicked(player: player.id, at: at))]
        if let connection = player.connection {
            audience.remove(connection)
            directives += [
                .send(.kicked(Notice(code: block ? .blocked : .kicked, message: Self.removedMessage, blocked: block ? true : nil)), to: [connection]),
                .close(connection, CloseReason(ErrorCode.kicked)),
            ]
        }
        return directives + markScreensDirty(at: at) + revealIfEveryoneAnswered(at: at) + namesChanged()
    }
}
