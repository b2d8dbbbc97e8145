extension RoomState {
    /// A teacher's command the shell refused before the room saw it (it names a voice this node cannot
    /// read, which only the shell knows): the error for that teacher's connection, nothing else changes.
    /// Nil when `connection` is not a teacher's, so the room answers it as it answers anyone else.
    public func refusedCommand(from connection: ConnectionID, _ error: RoomError) -> [RoomDirective]? {
        guard audience[connection] == .teacher else { return nil }
        return reply(connection, error)
    }
}
