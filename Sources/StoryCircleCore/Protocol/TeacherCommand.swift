/// What a teacher can ask of a room, over the WebSocket (`{"type":"command","command":"next"}`) or the
/// HTTP API (`POST /api/rooms/{code}/commands` with `{"command":"next"}`).
public enum TeacherCommand: Sendable, Equatable {
    case start, pause, resume, replay, retry, reveal, next, skip, lock, unlock, end
    /// Removes a player, named by id (`p3`) or nickname; they may join again (under any name).
    case kick(player: String)
    /// Removes a player for good: neither their device (their resume token) nor their name gets back in.
    case block(player: String)
    /// Changes room settings; only in the lobby.
    case settings(RoomSettingsPatch)
    /// Frees a class child's name for a new device (a class room): the device holding it is let go, its
    /// resume token refused, and the next pick of the name is the same player.
    case release(member: String)

    public static let simpleCommands: [String: TeacherCommand] = [
        "start": .start, "pause": .pause, "resume": .resume, "replay": .replay, "retry": .retry,
        "reveal": .reveal, "next": .next, "skip": .skip, "lock": .lock, "unlock": .unlock, "end": .end,
    ]

    /// One of each command, in `names` order, for listing which are allowed now (`RoomState.allowedCommands`).
    /// Whom a `kick` or `block` names matters only when it is carried out; `settings` stands for a change
    /// of the room's rules (one of the answer grid alone is a display change, allowed in any phase).
    static let representatives: [TeacherCommand] = [
        .start, .pause, .resume, .replay, .retry, .reveal, .next, .skip, .kick(player: "?"), .block(player: "?"),
        .lock, .unlock, .end, .settings(RoomSettingsPatch(speedPoints: true)),
    ]

    /// Every command name, for help text and error messages.
    public static let names = CommandName.allCases.map(\.rawValue)

    public var name: String { commandName.rawValue }

    public var commandName: CommandName {
        switch self {
        case .start: .start
        case .pause: .pause
        case .resume: .resume
        case .replay: .replay
        case .retry: .retry
        case .reveal: .reveal
        case .next: .next
        case .skip: .skip
        case .lock: .lock
        case .unlock: .unlock
        case .end: .end
        case .kick: .kick
        case .block: .block
        case .settings: .settings
        case .release: .release
        }
    }

    /// The member a `release` names.
    public var member: String? {
        if case .release(let member) = self { return member }
        return nil
    }

    /// The player a `kick` or `block` names.
    public var player: String? {
        switch self {
        case .kick(let player), .block(let player): player
        default: nil
        }
    }

    /// The command named `name`, with its argument when it takes one.
    public static func named(_ name: String, player: String?, settings: RoomSettingsPatch?, member: String? = nil) throws(RoomError) -> TeacherCommand {
        if let command = simpleCommands[name] { return command }
        switch name {
        case "release":
            guard let member, !member.isEmpty else {
                throw RoomError(.invalidMessage, "The release command needs \"member\": the id of the child of the class.")
            }
            return .release(member: member)
        case "kick", "block":
            guard let player, !player.isEmpty else {
                throw RoomError(.invalidMessage, "The \(name) command needs \"player\": a player id or nickname.")
            }
            return name == "kick" ? .kick(player: player) : .block(player: player)
        case "settings":
            guard let settings else {
                throw RoomError(.invalidMessage, "The settings command needs \"settings\": the settings to change.")
            }
            return .settings(settings)
        default:
            throw CommandRefusal.unknownCommand.error(name, "\"\(name)\" is not a command. Commands: \(names.joined(separator: ", ")).")
        }
    }
}
