import StoryCircleCore
import TransportCore

/// The one way the server turns connections away outside a room's core: the error, counted, then a close
/// whose status follows from its code (`ErrorCode.closeStatus`), after the error has gone out.
struct Refusals: Sendable {
    let transport: any MessageTransport
    let metrics: ServerMetrics

    func refuse(_ connections: [UInt64], _ error: RoomError) {
        guard !connections.isEmpty else { return }
        metrics.errorSent(error.code)
        transport.send(OutboundFrame(ServerMessage.error(error).encoded(), priority: .reply), to: connections)
        for connection in connections { transport.close(connection, status: error.code.closeStatus, reason: error.code.rawValue) }
    }

    func refuse(_ connection: UInt64, _ error: RoomError) {
        refuse([connection], error)
    }
}

extension RoomError {
    /// The room is on another node now, or about to be: the page reconnects and reaches it.
    static let moved = RoomError(.tryAgain, "This room moved to another server. Reconnecting…")
}

extension ErrorCode {
    /// How a connection refused with this code is closed: 1012 ("service restart": reconnect shortly, the
    /// room is moving), 1013 ("try again later": storage), 1001 (the room is gone), 1008 for the rest
    /// (policy: the hello was wrong).
    var closeStatus: UInt16 {
        switch self {
        case .tryAgain: 1012
        case .storageUnavailable: 1013
        case .roomEnded, .serverShuttingDown: 1001
        default: 1008
        }
    }
}
