import CLibEV
import CLibWebSockets
import Foundation
import Synchronization
import Locking
import TransportCore

/// The one libwebsockets event loop: static files, dynamic HTTP routes, and WebSocket connections, on one
/// port and one dedicated service thread, which runs lws on a libev (epoll) loop (see `EventLoop`).
///
/// Threading, which libwebsockets dictates: only the service thread touches lws and the `connections`
/// table. Other threads talk to it through `OutboundQueues` (locked) and `lws_cancel_service()`, the one
/// lws call that is safe from anywhere. Inbound traffic is reported through `onEvent`, on the service
/// thread, which must hand it on without blocking. The loop also runs the jobs of `loopExecutor` (the
/// application's rooms) after each turn, and their timers: what a turn brought is handled and answered
/// before the loop sleeps again.
///
/// `@unchecked Sendable`: the mutable properties below are confined to the service thread (they are set
/// before it starts or only touched from lws callbacks and the loop), and everything shared is either
/// immutable, atomic, or behind a lock (`OutboundQueues`', the origin policy's).
public final class WebSocketServer: MessageTransport, @unchecked Sendable {
    public let configuration: WebSocketServerConfiguration
    public let metrics = TransportMetrics()
    let onEvent: @Sendable (TransportEvent) -> Void
    /// The keepalive ping's payload: the protocol's name. Not empty: a pong echoes its ping's payload
    /// (RFC 6455, 5.5.3), and lws 4.1 does not report an empty pong to the protocol at all (`ops-ws.c`:
    /// "PONG && !len → already_done"), so an empty ping's answer would never count as life.
    let pingPayload: [UInt8]
    let refusals: any RefusalEncoder
    let queues: OutboundQueues
    /// The configuration's rules for every WebSocket, in `ConnectionState`'s units.
    let connectionPolicy: ConnectionPolicy
    /// Read on the service thread at each upgrade; the application adds its public address after `start`.
    let originPolicy: Locked<OriginPolicy>
    /// The vhost's OpenSSL context and the certificate it serves (service thread; see `+TLS`).
    let tls = TLSState()

    /// Where rooms run: on the service thread, between turns of its loop (`LoopExecutor`).
    public let loopExecutor: LoopExecutor

    // Shared with other threads.
    private let serviceThread: LWSServiceThread
    /// The service thread (a `pthread_t`) while its loop runs, else 0.
    private let serviceThreadID = Atomic<UInt>(0)
    /// The port listened on, set on the service thread before `start` returns.
    private let listeningPort = Atomic<Int>(0)
    private let drainDeadline = Locked<ContinuousClock.Instant?>(nil)

    // Service thread only.
    let connections = ConnectionTable()
    var webSocketsPerAddress = AddressCounts()
    var httpConnections = HTTPConnectionCounts()
    var resources: CResources?
    var keepaliveTimer: UnsafeMutablePointer<sc_lws_timer_t>?
    /// The lws timer that fires `loopExecutor`'s timers, and the deadline it is armed for.
    var executorTimer: UnsafeMutablePointer<sc_ev_timer_t>?
    var executorTimerDeadline: UInt64?
    /// Something on the service thread queued frames: it writes them after the turn instead of waking itself.
    var wakeupsNoted = false
    /// How many more frames rooms on the service thread may write where they send in this turn
    /// (`writeAtSend`); past it, frames wait in the queues' lanes like any other thread's, and once it is
    /// nearly spent no more of the loop executor's work (rooms, the store's completions) runs in the turn.
    /// 0 outside the turn's `runPending`.
    var writesAtSendLeft = 0
    /// Counts the loop's turns (from 1), for `Connection.writtenAtSendInTurn`.
    var turn: UInt64 = 0
    /// `LWS_PRE` bytes of headroom and room for a control frame's payload (the keepalive ping's).
    let controlFrame = UnsafeMutableRawBufferPointer.allocate(byteCount: WebSocketServer.headroom + 128, alignment: 16)
    /// Headroom and room for one coalesced write (`writeFrames`), and the frames being written.
    let writeBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: WebSocketServer.headroom + WebSocketServer.coalescedWriteBytes, alignment: 16)
    var writeBatch: [OutboundFrame] = []
    /// The connections `writeAtSend` could not write to at once, queued together after the others.
    var deferredSends: [UInt64] = []
    /// The connections `writeAtSend` is writing to, found before the first is written.
    var sendTargets: [Unmanaged<Connection>] = []
    /// How many of the batch `writeAtSend` is writing are for each of its connections.
    var framesPerConnection: [UInt64: Int] = [:]
    /// At most this many frames are written where rooms send in one turn of the loop (`writeAtSend`), about
    /// 10 ms of sends: the rest of the turn's work (the rooms and anything else on the loop executor) waits
    /// for the next turn, so that sockets are read again soon.
    static let writesAtSendPerTurn = 4_096

    /// `refusals` words the refusals the transport makes by itself (see `TransportRefusal`).
    public init(configuration: WebSocketServerConfiguration, refusals: any RefusalEncoder, onEvent: @escaping @Sendable (TransportEvent) -> Void) {
        var configuration = configuration
        // Browsers that once reached the server over HTTPS never try plain HTTP on its name again.
        if configuration.tls != nil { configuration.responseHeaders.append(("strict-transport-security", "max-age=31536000")) }
        self.configuration = configuration
        self.refusals = refusals
        self.onEvent = onEvent
        self.connectionPolicy = ConnectionPolicy(configuration)
        self.queues = OutboundQueues(maxBytes: configuration.maxQueuedBytesPerConnection, maxFrames: configuration.maxQueuedFramesPerConnection)
        self.originPolicy = Locked(OriginPolicy(allowed: configuration.allowedOrigins))
        self.pingPayload = Array((configuration.protocolName.isEmpty ? "ping" : configuration.protocolName).utf8.prefix(125))
        // Every frame the rooms make from now on has room for lws's frame header before its payload, so
        // `writeFrame` writes it where it lies.
        OutboundFrame.reserveHeadroom(Self.headroom)
        let serviceThread = LWSServiceThread()
        self.serviceThread = serviceThread
        self.loopExecutor = LoopExecutor(wakingLoopWith: { serviceThread.wake() })
    }

    deinit {
        controlFrame.deallocate()
        writeBuffer.deallocate()
    }

    /// Starts listening on the service thread; returns the port in use once it is listening.
    public func start() throws(LWSError) -> Int {
        try serviceThread.start(name: "lws-service", stackSize: 1 << 20) { [self] () throws(LWSError) in
            try self.serviceThreadMain()
        }
        return listeningPort.load(ordering: .acquiring)
    }

    /// Stops the loop: frames already queued (goodbyes) go out, every connection is closed as the
    /// application says (`RefusalEncoder.stopping`), and after at most `drainTimeout` the context is destroyed. Returns when the service
    /// thread has finished. Never call it from the service thread.
    public func stop(drainTimeout: Duration = .milliseconds(700)) {
        guard serviceThread.requestStop() else { return }
        let close = refusals.stopping
        queues.closeAll(status: close.status, reason: close.reason)
        drainDeadline.withLock { $0 = ContinuousClock.now + drainTimeout }
        serviceThread.waitUntilFinished(deadline: ContinuousClock.now + drainTimeout + .seconds(2))
    }

    /// `stop`, for async callers: the wait (up to `drainTimeout` and a margin) happens on a thread of its
    /// own, never on Swift's cooperative pool.
    public func shutDown(drainTimeout: Duration = .milliseconds(700)) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = Thread { [self] in
                stop(drainTimeout: drainTimeout)
                continuation.resume()
            }
            waiting.name = "lws-stop"
            waiting.start()
        }
    }

    // MARK: - Sending (any thread)

    /// Queues `frame` for `connections`, each to be written at the service thread's next wake-up; from a
    /// room on the service thread, written at once where nothing is queued (`writeAtSend`).
    public func send(_ frame: OutboundFrame, to connections: [UInt64]) {
        if writesWhereSent(connections.count) {
            writeAtSend(frame, to: connections)
            return
        }
        let (woken, dropped) = queues.enqueue(frame, to: connections)
        if dropped > 0 { metrics.slowClientsDropped.add(dropped, ordering: .relaxed) }
        if woken { wake() }
    }

    /// Queues several frames, each for its connections, in this order: what `send` does for each pair, under
    /// one lock and with at most one wake-up (a reveal's or a podium's one message per child).
    public func send(_ batch: [(OutboundFrame, [UInt64])]) {
        if writesWhereSent(batch.reduce(0) { $0 + $1.1.count }) {
            writeAtSend(batch)
            return
        }
        let (woken, dropped) = queues.enqueue(batch)
        if dropped > 0 { metrics.slowClientsDropped.add(dropped, ordering: .relaxed) }
        if woken { wake() }
    }

    /// Closes `connection` with a WebSocket status and reason, after its queued frames.
    public func close(_ connection: UInt64, status: UInt16, reason: String) {
        if queues.close(connection, status: status, reason: reason) { wake() }
    }

    /// Lets pages from these origins (URLs; only scheme, host and port count) open WebSockets, besides
    /// `allowedOrigins` and this server's own loopback addresses: the application calls it with the address
    /// it prints, which it knows only once the port is.
    public func allowOrigins(_ origins: [String]) {
        originPolicy.withLock { $0.allow(origins) }
    }

    /// The origins allowed now.
    public var currentOriginPolicy: OriginPolicy { originPolicy.withLock { $0 } }

    public func respond(to request: HTTPRequest.ID, with response: HTTPResponse) {
        if queues.respond(request.connection, sequence: request.sequence, with: response) { wake() }
    }

    /// Whether a send of `frames` frames (one per connection) is written where it is made (`writeAtSend`):
    /// on the service thread (a room on `loopExecutor`), for at most `connectionsArmedPerTurn` connections
    /// and within the turn's `writesAtSendLeft`. A bigger send (a big room's broadcast or reveal) goes
    /// through the lanes, which prefetch its connections and let replies overtake it a turn at a time.
    private func writesWhereSent(_ frames: Int) -> Bool {
        frames <= Self.connectionsArmedPerTurn && isServiceThread && frames <= writesAtSendLeft
    }

    /// Whether the caller is the service thread while its loop runs.
    var isServiceThread: Bool {
        serviceThreadID.load(ordering: .relaxed) == UInt(pthread_self())
    }

    /// Has the service thread look at the outbound queues: from another thread by interrupting its loop; on
    /// the service thread itself by noting it, for after the turn (`serviceThreadMain`).
    func wake() {
        if isServiceThread {
            wakeupsNoted = true
        } else {
            serviceThread.wake()
        }
    }

    // MARK: - The service thread

    /// The service thread's life: the context, the loop until stopped and drained, the context's end.
    private func serviceThreadMain() throws(LWSError) {
        // Whatever rooms still submit once the loop is gone (or if it never ran) runs on a thread of the
        // executor's own.
        defer { loopExecutor.loopEnded() }
        let loop = try EventLoop()
        let resources: CResources
        do {
            resources = try CResources(configuration: configuration, server: self, loop: loop)
        } catch {
            loop.destroy(nil)
            throw error
        }
        self.resources = resources
        originPolicy.withLock { $0.setLoopbackPort(resources.port) }
        listeningPort.store(resources.port, ordering: .releasing)
        startKeepalive(resources.context)
        serviceThreadID.store(UInt(pthread_self()), ordering: .relaxed)
        loopExecutor.loopStarted()
        serviceThread.running(resources.context)

        while true {
            if serviceThread.isStopRequested {
                let deadline = drainDeadline.withLock { $0 } ?? ContinuousClock.now
                if !queues.hasOpenConnections || ContinuousClock.now >= deadline { break }
            }
            // What the turn brought (a frame for a room, a timer that fired) runs now, and what it sent is
            // written before the loop sleeps again.
            // Only rooms' sends are written where they are made: not what the transport's own callbacks send
            // (a refusal from inside a connection's RECEIVE).
            turn += 1
            writesAtSendLeft = Self.writesAtSendPerTurn
            // Rooms stop running for this turn once another send of theirs might not fit in what is left
            // of the turn's writes: what they would send then waits with them for the next turn (after the
            // sockets are read) instead of going the lanes' longer way.
            _ = loopExecutor.runPending { self.writesAtSendLeft < Self.connectionsArmedPerTurn }
            writesAtSendLeft = 0
            if wakeupsNoted {
                wakeupsNoted = false
                serviceWakeups()
            }
            armExecutorTimer(loop)
            loop.runOnce(waiting: !wakeupsNoted && !loopExecutor.hasPending)
        }
        serviceThreadID.store(0, ordering: .relaxed)
        serviceThread.contextEnding()
        stopExecutorTimer(loop)
        stopKeepalive()
        loop.destroy(resources.context)
        self.resources = nil
    }
}

/// The C memory a context points into for its whole life: protocol table, mounts, strings. Freed only after
/// `lws_context_destroy`.
final class CResources {
    let context: OpaquePointer
    let port: Int
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var allocations: [UnsafeMutableRawPointer] = []

    init(configuration: WebSocketServerConfiguration, server: WebSocketServer, loop: EventLoop) throws(LWSError) {
        sc_lws_set_log_level(LLL_ERR | LLL_WARN)
        var strings: [UnsafeMutablePointer<CChar>] = []
        var allocations: [UnsafeMutableRawPointer] = []
        func cString(_ text: String) -> UnsafePointer<CChar> {
            let pointer = strdup(text)!
            strings.append(pointer)
            return UnsafePointer(pointer)
        }
        func allocate<T>(_ value: T) -> UnsafeMutablePointer<T> {
            let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
            pointer.initialize(to: value)
            allocations.append(UnsafeMutableRawPointer(pointer))
            return pointer
        }

        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        allocations.append(UnsafeMutableRawPointer(protocols))
        protocols[0].name = cString(configuration.protocolName)
        protocols[0].callback = webSocketServerCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        // lws allocates this for every WebSocket, for the connection's life: at 4 KiB it was half of an
        // idle child's memory on the server (9.8 → 4.9 KiB per child with 1 KiB). A child's messages are
        // a few hundred bytes; a longer one arrives in several RECEIVE callbacks, reassembled in `receive`
        // up to `maxMessageBytes`. (Sends are bounded by `tx_packet_size`, not by this.)
        protocols[0].rx_buffer_size = 1_024
        // What one send() may carry; the rest of a write waits, copied, for the next writable event. By
        // default it is rx_buffer_size: a 13 KB podium went out in four sends, three of them copies.
        protocols[0].tx_packet_size = 64 * 1_024
        // No extensions (`info.extensions` stays nil: no permessage-deflate): `writeFrames` frames messages
        // itself.

        // Mounts: the dynamic prefixes go to our callback, pages and everything else to the static folder.
        var mount: UnsafeMutablePointer<lws_http_mount>?
        func addMount(_ path: String, origin: String?, defaultFile: String?, kind: lws_mount_protocols) {
            var entry = lws_http_mount()
            entry.mount_next = UnsafePointer(mount)
            entry.mountpoint = cString(path)
            entry.mountpoint_len = UInt8(path.utf8.count)
            entry.origin = origin.map(cString)
            entry.def = defaultFile.map(cString)
            entry.origin_protocol = UInt8(kind.rawValue)
            if kind == LWSMPRO_CALLBACK { entry.protocol = cString(configuration.protocolName) }
            if kind == LWSMPRO_FILE {
                // Pages change with each release; let browsers revalidate instead of keeping stale copies.
                entry.cache_max_age = 60
                entry.cache_reusable = 1
                entry.cache_revalidate = 1
            }
            mount = allocate(entry)
        }
        addMount("/", origin: configuration.staticRoot, defaultFile: "index.html", kind: LWSMPRO_FILE)
        for (path, file) in configuration.pages.sorted(by: { $0.key < $1.key }) {
            addMount(path, origin: configuration.staticRoot, defaultFile: file, kind: LWSMPRO_FILE)
        }
        for prefix in configuration.dynamicPrefixes {
            addMount(prefix, origin: nil, defaultFile: nil, kind: LWSMPRO_CALLBACK)
        }

        // Headers for every response, and mime types lws does not know by itself.
        var headers: UnsafeMutablePointer<lws_protocol_vhost_options>?
        for (name, value) in configuration.responseHeaders.reversed() {
            headers = allocate(lws_protocol_vhost_options(next: UnsafePointer(headers), options: nil, name: cString(name.lowercased() + ":"), value: cString(value)))
        }
        var mimeTypes: UnsafeMutablePointer<lws_protocol_vhost_options>?
        for (suffix, type) in [(".mp3", "audio/mpeg"), (".wav", "audio/wav"), (".webmanifest", "application/manifest+json"), (".json", "application/json"), (".svg", "image/svg+xml"), (".woff2", "font/woff2")] {
            mimeTypes = allocate(lws_protocol_vhost_options(next: UnsafePointer(mimeTypes), options: nil, name: cString(suffix), value: cString(type)))
        }
        var link = mount
        while let current = link {
            if current.pointee.origin_protocol == UInt8(LWSMPRO_FILE.rawValue) {
                current.pointee.extra_mimetypes = UnsafePointer(mimeTypes)
            }
            link = UnsafeMutablePointer(mutating: current.pointee.mount_next)
        }

        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) | UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        info.user = Unmanaged.passUnretained(server).toOpaque()
        info.count_threads = 1
        info.fd_limit_per_thread = UInt32(configuration.maxConnections + 256)
        info.pt_serv_buf_size = 16 * 1_024
        info.max_http_header_data = UInt16(clamping: configuration.maxHeaderBytes)
        if configuration.tls != nil { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        let created = loop.creatingContext(&info) { lws_create_context(&$0) }
        guard let context = created else {
            strings.forEach { free($0) }
            allocations.forEach { $0.deallocate() }
            throw LWSError(operation: "lws_create_context (is libwebsockets-evlib-ev installed?)", code: -1)
        }

        info.port = Int32(configuration.port)
        info.iface = configuration.bindAddress.map(cString)
        info.protocols = UnsafePointer(protocols)
        info.mounts = UnsafePointer(mount)
        info.headers = UnsafePointer(headers)
        info.vhost_name = cString(configuration.protocolName)
        // Keepalive is the transport's own (`+Keepalive`). lws's validity timers are off only with a policy
        // whose hang-up time is 0: without any policy a vhost gets lws's default (ping at 300 s, hang up at
        // 310 s), whose timers walk the sorted list at every connection and every pong.
        var noValidity = lws_retry_bo_t()
        noValidity.secs_since_valid_ping = 0
        noValidity.secs_since_valid_hangup = 0
        info.retry_and_idle_policy = UnsafePointer(allocate(noValidity))
        info.timeout_secs = 20
        // A request whose method lws does not know becomes a raw socket on our protocol, which answers it
        // with a JSON 405 (`+UnknownMethods`) instead of lws's HTML 403.
        info.options |= UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        info.listen_accept_role = cString("raw-skt")
        info.listen_accept_protocol = cString(configuration.protocolName)
        if configuration.tls != nil {
            // The context is ours to set up (`configureTLS`, called from inside lws_create_vhost); HTTP/1.1
            // only, as WebSockets over HTTP/2 are another protocol.
            info.options |= UInt64(LWS_SERVER_OPTION_CREATE_VHOST_SSL_CTX)
            // A child typing the projector's "192.0.2.2:8080" sends http://: on this port it is answered with
            // a redirect to https:// (`answerWithRedirect`; no page, API or WebSocket in the clear), not a reset.
            info.options |= sc_lws_option_allow_plain_on_tls_port()
            info.alpn = cString("http/1.1")
        }
        let vhost = lws_create_vhost(context, &info)
        var redirect: OpaquePointer? = vhost
        if vhost != nil, let redirectPort = configuration.tls?.redirectPort {
            redirect = Self.createRedirectVhost(context, port: redirectPort, bindAddress: info.iface, name: cString("https-redirect"), allocations: &allocations)
        }
        guard let vhost, redirect != nil else {
            loop.destroy(context)
            strings.forEach { free($0) }
            allocations.forEach { $0.deallocate() }
            if let problem = server.tls.startProblem { throw LWSError(operation: "TLS (\(problem.description))", code: -1) }
            let port = vhost == nil ? configuration.port : configuration.tls?.redirectPort ?? 0
            throw LWSError(operation: "lws_create_vhost (is port \(port) already in use?)", code: -1)
        }
        self.context = context
        self.port = Int(lws_get_vhost_listen_port(vhost))
        self.strings = strings
        self.allocations = allocations
    }

    deinit {
        strings.forEach { free($0) }
        allocations.forEach { $0.deallocate() }
    }
}

extension WebSocketServer {
    /// What libwebsockets writes before a payload it is given (`LWS_PRE`, a macro the shim re-exposes):
    /// reserved in every `OutboundFrame`, and in the server's own buffers.
    static let headroom = Int(sc_lws_pre())
}

/// The lws protocol callback: a top-level function, as C needs. It finds its `WebSocketServer` through the
/// context's user pointer.
func webSocketServerCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let server = Unmanaged<WebSocketServer>.fromOpaque(raw).takeUnretainedValue()
    return server.handle(wsi, reason, user, input, length)
}

