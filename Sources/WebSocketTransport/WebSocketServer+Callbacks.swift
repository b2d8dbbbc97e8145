import CLibWebSockets

// The lws protocol callback, dispatched by concern: the upgrade checks (`+Upgrade`), WebSocket traffic
// (`+WebSocket`), closes (`+Closing`), HTTP requests and responses (`+HTTP`), and requests lws cannot parse
// (`+UnknownMethods`). Everything here runs on the service thread, inside lws callbacks.
extension WebSocketServer {
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        // MARK: The upgrade
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi)

        // MARK: WebSocket
        case LWS_CALLBACK_ESTABLISHED:
            guard let user else { return -1 }
            webSocketOpened(wsi, user: user)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let connection = connection(user), let input else { return 0 }
            receive(connection, UnsafeRawBufferPointer(start: input, count: length))
            return 0

        case LWS_CALLBACK_RECEIVE_PONG:
            if let connection = connection(user) { connection.state.pongReceived(at: Self.monotonicMilliseconds()) }
            return 0

        case LWS_CALLBACK_TIMER:
            if let connection = connection(user) { helloTimerFired(connection) }
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return writeNextFrame(connection)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            return peerClosed(wsi, connection(user), payloadLength: length)

        case LWS_CALLBACK_CLOSED:
            if let connection = connection(user) {
                unregister(connection, user: user)
                onEvent(.closed(connection: connection.id))
            }
            return 0

        // MARK: Both
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            serviceWakeups()
            return 0

        // MARK: HTTP
        case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
            // Plain HTTP on the TLS port is let in only to be sent to https:// (nothing is served in the clear).
            if configuration.tls != nil, lws_is_ssl(wsi) == 0 { return answerWithRedirect(wsi, thenClose: true) }
            return admitHTTPConnection(wsi)

        case LWS_CALLBACK_WSI_DESTROY:
            httpConnectionGone(wsi)
            return 0

        case LWS_CALLBACK_HTTP:
            guard let user else { return -1 }
            return beginRequest(wsi, user: user)

        case LWS_CALLBACK_HTTP_BODY:
            guard let connection = connection(user), let input else { return 0 }
            return receiveBody(connection, UnsafeRawBufferPointer(start: input, count: length))

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let connection = connection(user), let request = connection.request else { return 0 }
            connection.request = nil
            onEvent(.request(request))
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return writeResponse(connection)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            if let connection = connection(user), connection.kind == .http { unregister(connection, user: user) }
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        // MARK: Requests lws could not parse as HTTP
        case LWS_CALLBACK_RAW_ADOPT:
            guard let user else { return -1 }
            return adoptUnknownMethod(wsi, user: user)

        case LWS_CALLBACK_RAW_RX:
            guard let connection = connection(user), let input else { return 0 }
            return receiveUnknownMethod(connection, UnsafeRawBufferPointer(start: input, count: length))

        case LWS_CALLBACK_RAW_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return answerUnknownMethod(connection)

        case LWS_CALLBACK_RAW_CLOSE:
            if let connection = connection(user) { unregister(connection, user: user) }
            return 0

        // MARK: TLS (while the vhost is made; `user` is its SSL_CTX)
        case LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS:
            guard let user else { return -1 }
            return configureTLS(OpaquePointer(user))

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    // MARK: The connection table

    // The per-session slot lws gives each connection holds the `Connection` object itself (unretained: the
    // `connections` table keeps it alive), so callbacks find it without a lookup. `unregister` zeroes the
    // slot before the object can go, so every later callback on that connection sees none.

    func connection(_ user: UnsafeMutableRawPointer?) -> Connection? {
        guard let user, let pointer = UnsafeRawPointer(bitPattern: user.load(as: UInt.self)) else { return nil }
        return Unmanaged<Connection>.fromOpaque(pointer).takeUnretainedValue()
    }

    func register(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer, kind: Connection.Kind, peer: String, state: ConnectionState = .inert) -> Connection {
        let connection = connections.insert { Connection(id: $0, wsi: wsi, kind: kind, peer: peer, state: state) }
        user.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(connection).toOpaque()), as: UInt.self)
        if kind == .webSocket {
            let queue = queues.open(connection.id)
            queue.connection = connection
            connection.queue = queue
            metrics.openConnections.add(1, ordering: .relaxed)
            metrics.connectionsTotal.add(1, ordering: .relaxed)
        }
        return connection
    }

    func unregister(_ connection: Connection, user: UnsafeMutableRawPointer?) {
        user?.storeBytes(of: 0, as: UInt.self)
        guard connections.remove(connection.id) != nil else { return }
        queues.remove(connection.id)
        // The queue may outlive the connection in a lane the service thread has yet to take (skipped there).
        connection.queue?.connection = nil
        if connection.isWebSocket { metrics.openConnections.subtract(1, ordering: .relaxed) }
        if let address = connection.countedAddress { webSocketsPerAddress.remove(address) }
    }

    // MARK: Woken by another thread

    /// At most this many connections with news (not replies) are written to (or asked for writable
    /// callbacks) per turn of the loop: a turn then writes for about a millisecond, and a reply noted
    /// meanwhile goes out in the next.
    package static let connectionsArmedPerTurn = 128

    /// Woken by `lws_cancel_service()`: write what waits for WebSockets (`writeAtWakeup`), ask for writable
    /// callbacks where responses wait (replies first), and kill connections that fell too far behind.
    func serviceWakeups() {
        let wakeups = queues.takeWakeups(limit: Self.connectionsArmedPerTurn)
        // Left for the next turn: the loop must come back for them even if no one sends again.
        if wakeups.more { wake() }
        let taken = wakeups.taken
        for index in taken.indices {
            let entry = taken[index]
            // With thousands of connections, each one's queue, `Connection` and lws structures are cache misses
            // by the time it is written (the frames' sends between evict them), and each miss stalled the thread
            // (most of its user time per frame in a broadcast; docs/performance.md, "Prefetching"). So memory is
            // asked for ahead: the queue two connections ahead, and what it leads to one connection ahead (its
            // addresses, read from the queue fetched the turn before). A prefetch never faults, whatever it is
            // given, so a queue unregistered meanwhile costs nothing.
            if index + 2 < taken.count, let queue = taken[index + 2].queue {
                sc_prefetch(Unmanaged.passUnretained(queue).toOpaque(), 2)
            }
            if index + 1 < taken.count, let memory = taken[index + 1].queue?.memory {
                sc_prefetch(memory.connection, Int32(Connection.linesReadByWrites))
                sc_prefetch_wsi(OpaquePointer(memory.wsi))
            }
            // A WebSocket's queue leads to its connection (nil once it is unregistered); an HTTP connection is
            // looked up.
            let found = if let queue = entry.queue { queue.connection } else { connections[entry.connection] }
            guard let connection = found else { continue }
            let id = entry.connection
            switch entry.wakeup {
            case .kill:
                lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            case .writable where connection.isWebSocket:
                writeAtWakeup(connection)
            case .writable:
                if connection.kind == .http, let (sequence, response) = queues.takeResponse(id) {
                    guard sequence == connection.sequence else { continue }
                    connection.response = response
                }
                lws_callback_on_writable(connection.wsi)
            }
        }
    }

    // MARK: Request details

    /// The client's address: the socket's peer, or behind a trusted proxy the last `X-Forwarded-For` entry
    /// (the address the proxy saw; entries before it come from the client and prove nothing).
    func peerAddress(_ wsi: OpaquePointer) -> String {
        if configuration.trustForwardedFor, let forwarded = header(wsi, WSI_TOKEN_X_FORWARDED_FOR),
           let last = forwarded.split(separator: ",").last.map({ String($0).trimmingSpaces() }), !last.isEmpty {
            return last
        }
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The request's query parameters, as libwebsockets splits them (on `&`); a name without `=` has the
    /// value "". A name given twice keeps its last value, or with `firstWins` its first (what nginx's
    /// `$arg_…` reads, so that an upgrade's `room` is the one a proxy routed it by).
    func query(_ wsi: OpaquePointer, firstWins: Bool = false) -> [String: String] {
        var query: [String: String] = [:]
        var fragment = [CChar](repeating: 0, count: 512)
        var index: Int32 = 0
        while lws_hdr_copy_fragment(wsi, &fragment, Int32(fragment.count), WSI_TOKEN_HTTP_URI_ARGS, index) >= 0 {
            let text = String(decoding: fragment.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if let key = parts.first.map(String.init), !firstWins || query[key] == nil {
                query[key] = parts.count > 1 ? String(parts[1]) : ""
            }
            index += 1
        }
        return query
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
