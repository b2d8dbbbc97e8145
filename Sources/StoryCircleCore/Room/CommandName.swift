/// The name of a teacher's command, as the wire spells it (`{"command":"next"}`), in the order teachers'
/// screens and help list them. What a teacher may send now is a list of these (`RoomState.allowedCommands`).
public enum CommandName: String, CaseIterable, Sendable, Codable, CustomStringConvertible {
    case start, pause, resume, replay, retry, reveal, next, skip, kick, block, release, lock, unlock, end, settings

    public var description: String { rawValue }
}
