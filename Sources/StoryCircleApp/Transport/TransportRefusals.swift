import StoryCircleCore
import StoryCircleServer
import TransportCore
import WebSocketTransport

/// The words for the refusals the transport makes by itself: the same `ErrorCode`s, sentences and shapes
/// (`ServerMessage.error` on a WebSocket, `HTTPResponse.error` over HTTP) as every other refusal.
struct TransportRefusals: RefusalEncoder {
    func error(for refusal: TransportRefusal) -> RoomError {
        switch refusal {
        case .messageTooBig(let limit):
            RoomError(.messageTooBig, "Messages can be at most \(limit) bytes.")
        case .binaryNotSupported:
            RoomError(.binaryNotSupported, "This server only understands text messages (JSON).")
        case .tooManyMessages:
            RoomError(.tooManyMessages, "Too many messages too quickly; please slow down.")
        case .helloTimeout(let seconds):
            RoomError(.helloTimeout, "Say who you are within \(Self.seconds(seconds)): join, rejoin, watch or control.")
        case .wrongWebSocketPath(let expected):
            RoomError(.notFound, "WebSockets are at \(expected).")
        case .originNotAllowed:
            RoomError(.originNotAllowed, "This page's origin may not connect here.")
        case .serverFull:
            RoomError(.serverFull, "The server is full. Please try again in a moment.")
        case .tooManyConnectionsFromAddress(let limit):
            RoomError(.tooManyConnections, "This device (or network) has \(limit) connections open already. Close some, then try again.")
        case .payloadTooLarge(let limit):
            RoomError(.payloadTooLarge, "The request body is larger than \(limit) bytes.")
        case .methodNotAllowed(let allowed):
            RoomError(.methodNotAllowed, "Use \(allowed.map(\.rawValue).joined(separator: ", ")) here.")
        }
    }

    func webSocketRefusal(_ refusal: TransportRefusal) -> (close: WebSocketClose, frame: [UInt8]) {
        let error = error(for: refusal)
        return (WebSocketClose(error.code), ServerMessage.error(error).encoded())
    }

    var stopping: WebSocketClose { WebSocketClose(.serverShuttingDown) }

    func httpRefusal(_ refusal: TransportRefusal) -> HTTPResponse {
        var response = HTTPResponse.error(error(for: refusal))
        switch refusal {
        case .methodNotAllowed(let allowed):
            response.headers.append(("allow", allowed.map(\.rawValue).joined(separator: ", ")))
        case .tooManyConnectionsFromAddress, .serverFull:
            // The pages wait at least this long before they try again.
            response.headers.append(("retry-after", "5"))
        default:
            break
        }
        return response
    }

    private static func seconds(_ value: Double) -> String {
        if value == 1 { return "1 second" }
        if value == value.rounded() { return "\(Int(value)) seconds" }
        return "\(value) seconds"
    }
}

extension WebSocketClose {
    /// The close after a refusal with this code, from the core's table (`ErrorCode.closeCode`).
    init(_ code: ErrorCode) {
        self.init(status: code.closeCode.rawValue, reason: code.rawValue)
    }
}
