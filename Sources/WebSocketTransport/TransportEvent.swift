import TransportCore

/// Something the transport reports to the application, on the service thread. Handlers must not block:
/// they hand the event on (to an actor's inbox) and return.
public enum TransportEvent: Sendable {
    /// `room`: the `room` query parameter of the upgrade URL (`/ws?room=482913`), which a proxy routes by.
    case opened(connection: UInt64, peer: String, room: String? = nil)
    /// One complete text message (reassembled, size-checked, valid UTF-8).
    case message(connection: UInt64, bytes: [UInt8])
    case closed(connection: UInt64)
    case request(HTTPRequest)
}
