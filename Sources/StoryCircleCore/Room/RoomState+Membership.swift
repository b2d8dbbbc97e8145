extension RoomState {
    mutating func greet(_ connection: ConnectionID, _ hello: Hello, at: ServerTime) -> [RoomDirective] {
        if members[connection] != nil {
            return reply(connection, RoomError(.alreadyIdentified, "This connection has already said who it is."))
        }
        switch hello {
        case .join(let nickname, let resumeToken):
            return join(connection, nickname: nickname, resumeToken: resumeToken, at: at)
        case .rejoin(let token):
            return rejoin(connection, token: token, at: at)
        case .watch(let token):
            guard let role = credentials.watchRole(for: token) else {
                return refuseToken(connection, "That dashboard link is not valid for this room.")
            }
            return admitScreen(connection, role: role, at: at)
        case .control(let token):
            if credentials.isTeacher(token) {
                return admitScreen(connection, role: .teacher, at: at)
            }
            if credentials.watchRole(for: token) == .dashboard {
                return refuse(connection, RoomError(.wrongRole, "A dashboard link can watch the room but not control it."))
            }
            return refuseToken(connection, "That teacher link is not valid for this room.")
        }
    }

    private mutating func join(_ connection: ConnectionID, nickname raw: String, resumeToken: String, at: ServerTime) -> [RoomDirective] {
        if phase == .finished {
            return refuse(connection, RoomError(.roomEnded, "This room has finished. Ask your teacher for a new code."))
        }
        if isLocked {
            return refuse(connection, RoomError(.roomLocked, "This room is locked. Ask your teacher to unlock it."))
        }
        if phase != .lobby, !settings.lateJoin {
            return refuse(connection, RoomError(.joinClosed, "The story has already started, and this room does not take late joiners."))
        }
        if playerCount >= settings.maxPlayers {
            return refuse(connection, RoomError(.roomFull, "This room is full."))
        }
        let nickname: String
        switch Nickname.normalize(raw) {
        case .success(let normalized): nickname = normalized
        case .failure(let problem): return refuse(connection, RoomError(.nicknameInvalid, problem.message, params: problem.params))
        }
        let key = Nickname.uniquenessKey(nickname)
        if blockedNicknames.contains(key) {
            // Said without blame: another child may have picked the same name innocently.
            return refuse(connection, RoomError(.blocked, "The name \(nickname) can’t be used in this room. Please pick another nickname.", params: ["nickname": nickname]))
        }
        if nicknameOwners[key] != nil {
            return refuse(connection, RoomError(.nicknameTaken, "Someone in this room is already called \(nickname). Please pick another nickname.", params: ["nickname": nickname]))
        }

        let id = "p\(nextPlayerNumber)"
        nextPlayerNumber += 1
        let tokenHash = RoomCredentials.hash(resumeToken)
        add(Player(id: id, nickname: nickname, tokenHash: tokenHash, joinedAt: at, connection: connection))
        members[connection] = .child(playerID: id)

        let welcome = Welcome(role: .child, player: PlayerInfo(id: id, nickname: nickname), token: resumeToken, serverTime: at, room: snapshot(for: .child(playerID: id)))
        // The welcome carries the resume token, so the player must be durable before it goes out.
        return [.persist(.playerJoined(PlayerRecord(id: id, nickname: nickname, tokenHash: tokenHash, joinedAt: at))), .send(.welcome(welcome), to: [connection])]
            + markScreensDirty(at: at)
    }

    private mutating func rejoin(_ connection: ConnectionID, token: String, at: ServerTime) -> [RoomDirective] {
        if blockedTokens.contains(RoomCredentials.hash(token)) {
            return refuse(connection, RoomError(.blocked, Self.removedMessage))
        }
        guard let id = tokenOwners[RoomCredentials.hash(token)], let index = playerIndex[id], !players[index].kicked else {
            return refuseToken(connection, "We could not find you in this room. Please join again with your nickname.")
        }
        var directives: [RoomDirective] = []
        if let previous = players[index].connection, previous != connection {
            members[previous] = nil
            let replaced = RoomError(.sessionReplaced, "You opened this room somewhere else, so this page has stopped.")
            directives += [.send(.error(replaced), to: [previous]), .close(previous, CloseReason(status: 4002, reason: replaced.code.rawValue))]
        }
        connect(index, to: connection)
        members[connection] = .child(playerID: id)
        let welcome = Welcome(role: .child, player: PlayerInfo(id: id, nickname: players[index].nickname), token: nil, serverTime: at, room: snapshot(for: .child(playerID: id)))
        return directives + [.send(.welcome(welcome), to: [connection])] + markScreensDirty(at: at)
    }

    mutating func admitScreen(_ connection: ConnectionID, role: Role, at: ServerTime) -> [RoomDirective] {
        let member: Member = role == .teacher ? .teacher : .dashboard
        members[connection] = member
        let welcome = Welcome(role: role, player: nil, token: nil, serverTime: at, room: snapshot(for: member))
        // A teacher who arrives while storage is failing is told at once, not at the next change.
        let storage: [RoomDirective] = role == .teacher && storeProblem != nil ? [.send(.storage(storeHealthStatus), to: [connection])] : []
        return [.send(.welcome(welcome), to: [connection])] + storage
    }

    mutating func disconnect(_ connection: ConnectionID, at: ServerTime) -> [RoomDirective] {
        roundTrips[connection] = nil
        guard let member = members.removeValue(forKey: connection) else { return [] }
        guard case .child(let id) = member, let index = playerIndex[id], players[index].connection == connection else { return [] }
        connect(index, to: nil)
        players[index].graceUntil = at + Self.reconnectGraceMs
        // A child who leaves no longer holds up "everyone has answered", once their grace has run out.
        return [.persist(.playerLeft(player: id, at: at))] + markScreensDirty(at: at) + revealIfEveryoneAnswered(at: at)
    }

    static let removedMessage = "Your teacher removed you from this room."

    /// Removes a player. `block` also refuses, from now on and after a restart, their resume token (so the
    /// same browser cannot rejoin) and their nickname (so they cannot join again under it). A kicked,
    /// unblocked player may join again; blocking one who was already kicked is allowed.
    mutating func kick(_ who: String, block: Bool, at: ServerTime) throws(RoomError) -> [RoomDirective] {
        let wanted = Nickname.uniquenessKey(SentenceSplitter.collapsingWhitespace(who))
        let found = players.lastIndex(where: { !$0.kicked && ($0.id == who || Nickname.uniquenessKey($0.nickname) == wanted) })
            ?? (block ? players.lastIndex(where: { !$0.blocked && ($0.id == who || Nickname.uniquenessKey($0.nickname) == wanted) }) : nil)
        guard let index = found else {
            throw RoomError(.playerNotFound, "No player called \"\(who)\" is in this room.", params: ["player": who])
        }
        let player = players[index]
        let wasKicked = player.kicked
        markKicked(index)
        if !wasKicked {
            nicknameOwners[Nickname.uniquenessKey(player.nickname)] = nil
            tokenOwners[player.tokenHash] = nil
        }
        var directives: [RoomDirective] = []
        if block {
            players[index].blocked = true
            remember(blocked: player)
            directives.append(.persist(.playerBlocked(player: player.id, at: at)))
        } else {
            directives.append(.persist(.playerKicked(player: player.id, at: at)))
        }
        if let connection = player.connection {
            members[connection] = nil
            connect(index, to: nil)
            directives += [
                .send(.kicked(Notice(code: block ? .blocked : .kicked, message: Self.removedMessage, blocked: block ? true : nil)), to: [connection]),
                .close(connection, CloseReason(status: 4001, reason: ErrorCode.kicked.rawValue)),
            ]
        }
        return directives + markScreensDirty(at: at) + revealIfEveryoneAnswered(at: at)
    }
}
