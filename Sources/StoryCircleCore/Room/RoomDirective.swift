/// Why the server closes a connection: a WebSocket status code and a short reason.
public struct CloseReason: Sendable, Equatable {
    public var status: UInt16
    public var reason: String

    public init(status: UInt16, reason: String) {
        self.status = status
        self.reason = reason
    }

    public init(_ code: CloseCode, reason: String) {
        self.init(status: code.rawValue, reason: reason)
    }

    /// The close after a refusal with this code: its `closeCode`, the code as the reason.
    public init(_ code: ErrorCode) {
        self.init(code.closeCode, reason: code.rawValue)
    }

    public static func refused(_ error: RoomError) -> CloseReason {
        CloseReason(error.code)
    }

    public static let normal = CloseReason(.normal, reason: "bye")
}

/// What the core asks its shell to do, in order. A `send` that follows a `persist` must wait until that
/// record is durable: that is how an answer is written before it is acknowledged.
public enum RoomDirective: Sendable, Equatable {
    case send(ServerMessage, to: [ConnectionID])
    /// A message that carries no room state (a pong, the storage banner, an unreadable message's error):
    /// it goes out at once, ahead of sends still waiting for records, which it must not wait behind.
    case sendAtOnce(ServerMessage, to: [ConnectionID])
    /// Close after everything already sent to the connection has gone out.
    case close(ConnectionID, CloseReason)
    case persist(RoomRecord)
    case schedule(RoomTimer, at: ServerTime)
    case prepareNarration(NarrationRequest)
    /// The room is in its lobby (it has just been launched on this node, or its voice changed): the shell
    /// may read the story with its voice into the cache meanwhile, so that `start` finds the opening ready.
    /// Nothing in the room waits for it or hears of it.
    case readAhead(NarrationRequest)
    /// The connection's hello carried a token that opens nothing in this room. Wrong tokens are what
    /// guessing looks like: the shell charges the connection's address for a failed join.
    case failedToken(ConnectionID)
    /// The room has just finished: narration still being prepared is no longer wanted.
    case stopNarration
}
