import TransportCore

/// How the transport listens and what it accepts. Every limit here protects the server from one client.
public struct WebSocketServerConfiguration: Sendable {
    /// 0 picks a free port (tests); `WebSocketServer.start()` returns the one in use.
    public var port: Int = 8080
    /// The address to listen on; `nil` listens on every interface (children's tablets reach it over Wi-Fi).
    public var bindAddress: String?
    /// The folder of static files served at `/` (`index.html` is the default page).
    public var staticRoot: String = "web-static"
    /// Extra page routes: URL path to a file in `staticRoot`, e.g. `/dashboard` → `dashboard.html`.
    public var pages: [String: String] = [:]
    /// URL prefixes answered by the application through `.request` events.
    public var dynamicPrefixes: [String] = []
    public var webSocketPath = "/ws"
    /// The name of the one WebSocket protocol served: libwebsockets' name for it and for the virtual host,
    /// the `Sec-WebSocket-Protocol` a client may ask for (none is needed), and the keepalive ping's payload.
    /// The application names it; the transport gives it no meaning.
    public var protocolName = "websocket"
    /// The largest client message accepted; larger ones close the connection with 1009.
    public var maxMessageBytes = 4_096
    public var maxRequestBodyBytes = 256 * 1_024
    /// Larger body limits for exact paths (a picture upload), instead of raising the limit for every route.
    public var maxRequestBodyBytesByPath: [String: Int] = [:]

    /// The body limit of a request to `path` with `headers`. A path's larger limit only for a request
    /// carrying a bearer token (its route checks which): an anonymous client cannot make the server hold
    /// megabytes before the route refuses it.
    public func maxRequestBodyBytes(for path: String, headers: [String: String]) -> Int {
        guard let limit = maxRequestBodyBytesByPath[path] else { return maxRequestBodyBytes }
        let bearer = headers["authorization"]?.lowercased().hasPrefix("bearer ") == true
        return bearer ? limit : min(limit, maxRequestBodyBytes)
    }
    /// Decides from a dynamic request's head, before its body is read, how large a body it may send or how
    /// it is answered at once (`HeadAdmission`): the application checks the route's authority here, so a
    /// body larger than `maxRequestBodyBytes` is read only for a request whose credential holds. Called on
    /// the service thread; it must not block. Without it, `maxRequestBodyBytes(for:headers:)` decides.
    public var admitHead: (@Sendable (HTTPRequest) -> HeadAdmission)?
    /// Open HTTP connections (not WebSockets) per client address (0: no limit). One past it is answered
    /// 429 `too_many_connections` and closed, so one device cannot hold the server's sockets with idle or
    /// slow requests.
    public var maxHTTPConnectionsPerAddress = 32
    /// A connection whose unsent messages exceed this is dropped (it can rejoin) instead of growing memory.
    public var maxQueuedBytesPerConnection = 1 << 20
    public var maxQueuedFramesPerConnection = 2_048
    /// The kernel's send buffer per WebSocket: without a cap it grows to megabytes for a client that stops
    /// reading, memory no queue bound sees. 0 leaves the system default.
    public var socketSendBufferBytes = 256 * 1_024
    /// Several frames queued for one connection go out in one write (one `send`). Off, each frame is a
    /// write of its own: for measuring what coalescing buys, never for a classroom.
    public var coalesceWrites = true
    /// Sustained and burst message rates per connection; beyond them the connection is closed.
    public var messagesPerSecond = 10.0
    public var messageBurst = 40.0
    /// Keepalive: ping a connection idle this long, hang up one idle (no pong) this long.
    public var pingAfterIdleSeconds = 20
    public var hangUpAfterIdleSeconds = 60
    /// Origins allowed to open WebSockets (`"*"` allows any), besides pages on a loopback address and this
    /// server's port; the application adds its public address once it knows it
    /// (`WebSocketServer.allowOrigins`). Clients that send no `Origin` (not browsers) are allowed: the check
    /// protects browsers from cross-site use. See `OriginPolicy`.
    public var allowedOrigins: [String] = []
    /// Take the client address from `X-Forwarded-For` (only behind a proxy you run): its last entry, the
    /// address the proxy saw.
    public var trustForwardedFor = false
    /// HTTPS and WSS with this certificate and key (and a redirect from plain HTTP, if it names a port); nil:
    /// plain HTTP and WS.
    public var tls: TLSSettings?
    public var maxConnections = 20_000
    /// Open WebSockets per client address (0: no limit). A flood from one address then cannot take the
    /// places of others; behind NAT or a proxy without `trustForwardedFor` many devices share an address.
    public var maxConnectionsPerAddress = 50
    /// A WebSocket whose first message has not arrived after this long is closed (1008 `hello_timeout`):
    /// a connection that never says who it is holds a place for nothing. 0 disables the timeout.
    public var helloTimeoutSeconds = 10.0
    /// The request line and headers of an HTTP request together (libwebsockets' header buffer). A request
    /// with more is closed without an answer: libwebsockets 4.1 gives the application no chance to say 431.
    public var maxHeaderBytes = 8_192
    /// Added to every HTTP response, static or dynamic.
    public var responseHeaders: [(name: String, value: String)] = [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("content-security-policy", "default-src 'self'; img-src 'self' data: blob:; media-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'"),
    ]

    public init() {}
}
