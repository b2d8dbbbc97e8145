/// Something the transport reports to the application, on its service thread. Handlers must not block:
/// they hand the event on (to an actor's inbox) and return.
public enum TransportEvent: Sendable {
    /// A WebSocket is open. `query`: the parameters of its upgrade URL, as sent (`/ws?room=482913` gives
    /// `["room": "482913"]`), for the application to read what it put there (a proxy routes by the room).
    case opened(connection: ConnectionHandle, peer: String, query: [String: String] = [:])
    /// One complete text message (reassembled, size-checked, valid UTF-8).
    case message(connection: ConnectionHandle, bytes: [UInt8])
    case closed(connection: ConnectionHandle)
    case request(HTTPRequest)
}
