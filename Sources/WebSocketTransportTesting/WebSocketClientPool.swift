import CLibWebSockets
import Foundation
import Synchronization
import Locking
import WebSocketTransport
import TransportCore

/// Many WebSocket client connections on one libwebsockets service thread: the load generator's engine,
/// and the client the Swift transport tests use. Same threading rules as `WebSocketServer`: other threads
/// queue work and wake the loop with `lws_cancel_service()`; the same libev (epoll) loop (`EventLoop`).
///
/// `@unchecked Sendable`: `connections` and the lws pointers are touched only on the service thread;
/// shared state is behind `OutboundQueues` and `pending`'s lock.
public final class WebSocketClientPool: @unchecked Sendable {
    public enum Event: Sendable {
        case connected(UInt64)
        case message(UInt64, [UInt8])
        /// The connection ended; `status` is the close code the server sent, if it sent one.
        case closed(UInt64, status: UInt16?, reason: String?)
        case failed(UInt64, String)
    }

    public struct Target: Sendable {
        public var host: String
        public var port: Int
        public var path: String
        public var origin: String?
        /// The local address the socket is bound to (lws's `iface`), nil for the kernel's choice: a load
        /// generator spreads its connections over 127.0.0.2, 127.0.0.3, … so that one source address's
        /// ephemeral ports (about 28,000) do not cap how many it opens.
        public var sourceAddress: String?
        /// wss: TLS, the server's certificate checked against the pool's certificate authority.
        public var secure: Bool

        public init(host: String = "127.0.0.1", port: Int, path: String = "/ws", origin: String? = nil, sourceAddress: String? = nil, secure: Bool = false) {
            self.host = host
            self.port = port
            self.path = path
            self.origin = origin
            self.sourceAddress = sourceAddress
            self.secure = secure
        }
    }

    private final class ClientConnection {
        let id: UInt64
        var wsi: OpaquePointer?
        var inbound: [UInt8] = []
        var closeStatus: UInt16?
        var closeReason: String?

        init(id: UInt64) { self.id = id }
    }

    private let onEvent: @Sendable (Event) -> Void
    private let maxConnections: Int
    /// The PEM file of the authority that `secure` targets' certificates must chain to (a test's or the
    /// bench's own CA); nil: no TLS in this pool (a `secure` target fails to connect).
    private let certificateAuthority: String?
    let queues = OutboundQueues(maxBytes: 64 << 20, maxFrames: 1 << 16)
    private let pending = Locked<[(UInt64, Target)]>([])
    private let nextID = Atomic<UInt64>(1)
    private let serviceThread = LWSServiceThread()
    /// The running context, for `openPending` (on the service thread).
    private var context: OpaquePointer?

    // Service thread only.
    private var connections: [UInt64: ClientConnection] = [:]
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var protocols: UnsafeMutablePointer<lws_protocols>?

    public init(maxConnections: Int = 20_000, certificateAuthority: String? = nil, onEvent: @escaping @Sendable (Event) -> Void) {
        self.maxConnections = maxConnections
        self.certificateAuthority = certificateAuthority
        self.onEvent = onEvent
        // lws writes a client frame's header and mask key in front of the payload, in place: every frame
        // this pool makes needs LWS_PRE bytes there. A process may have no server to reserve them (the
        // bench's generator), so the client reserves them itself.
        OutboundFrame.reserveHeadroom(Int(sc_lws_pre()))
    }

    public func start() throws(LWSError) {
        try serviceThread.start(name: "lws-client") { [self] () throws(LWSError) in try self.serviceThreadMain() }
    }

    /// Opens a connection; its events carry the returned id.
    @discardableResult
    public func connect(_ target: Target) -> UInt64 {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        pending.withLock { $0.append((id, target)) }
        wake()
        return id
    }

    /// Sends a text message. Each connection gets its own copy: lws masks client frames in place.
    public func send(_ text: some Collection<UInt8>, to connection: UInt64) {
        let (woken, _) = queues.enqueue(OutboundFrame(text), to: [connection])
        if woken { wake() }
    }

    public func close(_ connection: UInt64, status: UInt16, reason: String) {
        if queues.close(connection, status: status, reason: reason) { wake() }
    }

    public func stop() {
        guard serviceThread.requestStop() else { return }
        serviceThread.waitUntilFinished()
    }

    private func wake() {
        serviceThread.wake()
    }

    // MARK: - Service thread

    private func serviceThreadMain() throws(LWSError) {
        sc_lws_set_log_level(LLL_ERR | LLL_WARN)
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        let name = strdup("storycircle-client")!
        strings.append(name)
        protocols[0].name = UnsafePointer(name)
        protocols[0].callback = webSocketClientCallback
        protocols[0].rx_buffer_size = 16_384
        self.protocols = protocols

        var info = lws_context_creation_info()
        info.port = -1  // CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.fd_limit_per_thread = UInt32(maxConnections + 64)
        info.count_threads = 1
        info.options = UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        if let certificateAuthority {
            // Whether a connection uses TLS is its target's choice (`secure`).
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            let path = strdup(certificateAuthority)!
            strings.append(path)
            info.client_ssl_ca_filepath = UnsafePointer(path)
        }
        defer {
            strings.forEach { free($0) }
            protocols.deallocate()
        }
        let loop = try EventLoop()
        guard let context = loop.creatingContext(&info, { lws_create_context(&$0) }) else {
            loop.destroy(nil)
            throw LWSError(operation: "lws_create_context (client; is libwebsockets-evlib-ev installed?)", code: -1)
        }
        self.context = context
        serviceThread.running(context)
        while !serviceThread.isStopRequested {
            loop.runOnce()
        }
        serviceThread.contextEnding()
        self.context = nil
        loop.destroy(context)
    }

    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        let id = UInt64(UInt(bitPattern: lws_get_opaque_user_data(wsi)))
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            openPending()
            for entry in queues.takeWakeups().taken {
                guard let wsi = connections[entry.connection]?.wsi else { continue }
                if entry.wakeup == .kill {
                    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                } else {
                    lws_callback_on_writable(wsi)
                }
            }
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            connections[id]?.wsi = wsi
            queues.open(id)
            onEvent(.connected(id))
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let connection = connections[id], let input else { return 0 }
            connection.inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            if lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 {
                let message = connection.inbound
                connection.inbound = []
                onEvent(.message(id, message))
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            switch queues.next(for: id) {
            case .frame(let frame, let more):
                precondition(frame.headroom >= Int(sc_lws_pre()), "a client frame without room for its header")
                if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_TEXT) < frame.count { return -1 }
                if more { lws_callback_on_writable(wsi) }
            case .close(let status, _):
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(status)), nil, 0)
                return -1
            case .nothing:
                break
            }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2, let connection = connections[id] {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                connection.closeStatus = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                connection.closeReason = String(decoding: bytes.dropFirst(2), as: UTF8.self)
            }
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let detail = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            if connections.removeValue(forKey: id) != nil {
                queues.remove(id)
                onEvent(.failed(id, detail))
            }
        case LWS_CALLBACK_CLIENT_CLOSED:
            if let connection = connections.removeValue(forKey: id) {
                queues.remove(id)
                onEvent(.closed(id, status: connection.closeStatus, reason: connection.closeReason))
            }
        default:
            break
        }
        return 0
    }

    private func openPending() {
        // Before taking them: what is pending while there is no context waits for the next wake-up.
        guard let context else { return }
        let targets = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        for (id, target) in targets {
            connections[id] = ClientConnection(id: id)
            var info = lws_client_connect_info()
            let failed: Bool = target.host.withCString { host in
                target.path.withCString { path in
                    withOptionalCString(target.origin) { origin in withOptionalCString(target.sourceAddress) { source in
                        info.context = context
                        info.iface = source
                        info.address = host
                        info.host = host
                        info.port = Int32(target.port)
                        info.path = path
                        info.origin = origin
                        info.protocol = nil
                        info.ssl_connection = target.secure ? Int32(LCCSCF_USE_SSL.rawValue) : 0
                        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(id))
                        return lws_client_connect_via_info(&info) == nil
                    } }
                }
            }
            if failed, connections.removeValue(forKey: id) != nil {
                onEvent(.failed(id, "lws_client_connect_via_info refused"))
            }
        }
    }
}

private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}

/// The client protocol callback; finds its pool through the context's user pointer.
func webSocketClientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    return Unmanaged<WebSocketClientPool>.fromOpaque(raw).takeUnretainedValue().handle(wsi, reason, input, length)
}
