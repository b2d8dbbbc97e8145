import CLibWebSockets
import TransportCore

/// What the service thread knows about one lws connection: a WebSocket, an HTTP connection (one request at a
/// time), or a socket whose request libwebsockets could not parse as HTTP and that only gets a refusal.
final class Connection {
    enum Kind {
        case webSocket
        case http
        /// An unknown HTTP method: libwebsockets hands such a socket over raw (see `+UnknownMethods`).
        case refusedRequest
    }

    /// The cache lines at the object's start that hold what a write reads (`writeAtSend`, `writeAtWakeup`,
    /// `canWriteAtOnce`), which both ask for ahead.
    static let linesReadByWrites = 2

    // What a write reads of each child comes first, in those lines: stored properties are laid out in the
    // order they are declared, and a field further down was a cache miss per child per frame.
    let id: UInt64
    let wsi: OpaquePointer
    /// This WebSocket's outbound queue (nil for HTTP).
    var queue: OutboundQueues.Queue?
    /// The turn of the loop in which a frame was last written to it where a room sent it (`writeAtSend`).
    var writtenAtSendInTurn: UInt64 = 0
    let kind: Kind
    /// The keepalive ping the state asked for is still to be written (`+Keepalive`).
    var pingDue = false
    /// Our close frame is out; we wait for the client's before the socket closes.
    var closeFrameSent = false
    /// The client's close frame came; lws answers it and closes (nothing more is written outside its
    /// WRITEABLE path).
    var peerSentClose = false
    // WebSocket: the rules of its life (keepalive, hello timeout, flood limit; `ConnectionState`), fed on
    // each callback, and the message being reassembled.
    var state: ConnectionState
    var inbound: [UInt8] = []
    let peer: String
    /// The address this WebSocket counts against in the per-address limit.
    var countedAddress: String?

    // HTTP: the request being read and the response being written.
    var sequence: UInt64 = 0
    var request: HTTPRequest?
    /// The method of the request being answered: a `HEAD` gets the headers of its answer, never the body.
    var method = HTTPMethod.get
    var response: HTTPResponse?
    var headersWritten = false
    var bodyOffset = 0
    /// The largest body this request may send (decided from its head).
    var bodyLimit = 0
    /// Answered without reading its body: closed once the answer is out.
    var closeAfterResponse = false

    // A refused request (`kind == .refusedRequest`): its answer is out.
    var answered = false

    init(id: UInt64, wsi: OpaquePointer, kind: Kind, peer: String, state: ConnectionState) {
        self.id = id
        self.wsi = wsi
        self.kind = kind
        self.peer = peer
        self.state = state
    }

    var isWebSocket: Bool { kind == .webSocket }
}
