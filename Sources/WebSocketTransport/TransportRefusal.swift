import TransportCore

/// A refusal the transport makes on its own, before any message reaches the application: what kind it is,
/// so that the application can say it in its own words (`RefusalEncoder`). The transport decides the
/// mechanics (which close status, whether the connection closes); the application decides the error code
/// and the sentence, from the same table as every other refusal.
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

    /// The WebSocket close status that follows the error message (RFC 6455, section 7.4.1).
    public var closeStatus: UInt16 {
        switch self {
        case .messageTooBig: 1009
        case .binaryNotSupported: 1003
        default: 1008
        }
    }
}

/// Turns a transport refusal into bytes on the wire. The application provides it so that every refusal,
/// the transport's included, has the one shape (`{"type":"error","code":…}` on a WebSocket,
/// `{"error":{"code":…}}` over HTTP) and comes from one table of codes.
///
/// Called on the service thread: it must be quick and must not block.
public protocol RefusalEncoder: Sendable {
    /// The text frame sent before the close, and the close reason (the error code).
    func webSocketRefusal(_ refusal: TransportRefusal) -> (reason: String, frame: [UInt8])
    /// The whole HTTP response: status, headers, body.
    func httpRefusal(_ refusal: TransportRefusal) -> HTTPResponse
}
