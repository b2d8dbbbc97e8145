import StoryCircleCore
import TransportCore

/// The one way the server turns connections away outside a room's core: the error, counted, then a close
/// whose status follows from its code (`closeCode(for:)`), after the error has gone out.
struct Refusals: Sendable {
    let transport: any MessageTransport
    let metrics: ServerMetrics

    func refuse(_ connections: [UInt64], _ error: RoomError) {
        guard !connections.isEmpty else { return }
        metrics.errorSent(error.code)
        transport.send(OutboundFrame(ServerMessage.error(error).encoded(), priority: .reply), to: connections)
        let close = Self.closeCode(for: error.code)
        for connection in connections { transport.close(connection, status: close.rawValue, reason: error.code.rawValue) }
    }

    func refuse(_ connection: UInt64, _ error: RoomError) {
        refuse([connection], error)
    }

    /// The code's own close (`ErrorCode.closeCode`), but for `room_ended`: a room's core sends it to a hello
    /// (`policy`: nothing to come back to), the server only to the connections of a room it takes out of
    /// memory, with `goingAway`, so that their pages reconnect and learn where the room is.
    static func closeCode(for code: ErrorCode) -> CloseCode {
        code == .roomEnded ? .goingAway : code.closeCode
    }
}

extension RoomError {
    /// The room is on another node now, or about to be: the page reconnects and reaches it.
    static let moved = RoomError(.tryAgain, "This room moved to another server. Reconnecting…")
}
