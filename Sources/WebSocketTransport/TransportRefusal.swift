import TransportCore

/// A refusal the transport makes on its own, before any message reaches the application: what kind it is,
/// so that the application can say it in its own words (`RefusalEncoder`). The transport decides the
/// mechanics (whether the connection closes); the application decides the error code, the sentence and the
/// close status, from the same table as every other refusal.
public enum TransportRefusal: Sendable, Equatable {
    // On an open WebSocket: an error message, then a close.
    case messageTooBig(limit: Int)
    case binaryNotSupported
    case tooManyMessages
    /// No first message within the hello timeout.
    case helloTimeout(seconds: Double)

    // A WebSocket upgrade refused with an HTTP status (and a JSON body).
    case wrongWebSocketPath(expected: String)
    case originNotAllowed
    case serverFull
    case tooManyConnectionsFromAddress(limit: Int)

    // Plain HTTP.
    case payloadTooLarge(limit: Int)
    case methodNotAllowed(allowed: [HTTPMethod])
}

/// How the transport ends a WebSocket: the close status (RFC 6455, section 7.4.1) and its reason.
public struct WebSocketClose: Sendable, Equatable {
    public var status: UInt16
    public var reason: String

    public init(status: UInt16, reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// Turns a transport refusal into bytes on the wire. The application provides it so that every refusal,
/// the transport's included, has the one shape (`{"type":"error","code":…}` on a WebSocket,
/// `{"error":{"code":…}}` over HTTP) and comes from one table of codes.
///
/// Called on the service thread: it must be quick and must not block.
public protocol RefusalEncoder: Sendable {
    /// The text frame sent before the close, and the close (its status and reason, the error code).
    func webSocketRefusal(_ refusal: TransportRefusal) -> (close: WebSocketClose, frame: [UInt8])
    /// How every open WebSocket is closed when the server stops.
    var stopping: WebSocketClose { get }
    /// The whole HTTP response: status, headers, body.
    func httpRefusal(_ refusal: TransportRefusal) -> HTTPResponse
}
