import CLibWebSockets
import Dispatch
import Glibc

/// What the service thread knows about one lws connection (HTTP or WebSocket).
final class Connection {
    let id: UInt64
    let wsi: OpaquePointer
    let isWebSocket: Bool
    let peer: String
    /// This WebSocket's outbound queue (nil for HTTP).
    var queue: OutboundQueues.Queue?

    // WebSocket: the message being reassembled, the rate limit, and whether input is being refused.
    var inbound: [UInt8] = []
    var refusing = false
    /// Our close frame is out; we wait for the client's before the socket closes.
    var closeFrameSent = false
    var tokens: Double
    var refilledAt = DispatchTime.now().uptimeNanoseconds

    // HTTP: the request being read and the response being written.
    var sequence: UInt64 = 0
    var request: HTTPRequest?
    var response: HTTPResponse?
    var headersWritten = false
    var bodyOffset = 0

    init(id: UInt64, wsi: OpaquePointer, isWebSocket: Bool, peer: String, burst: Double) {
        self.id = id
        self.wsi = wsi
        self.isWebSocket = isWebSocket
        self.peer = peer
        self.tokens = burst
    }
}

// Everything here runs on the service thread, inside lws callbacks.
extension WebSocketServer {
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            // Refused with a real HTTP status, so a browser or a proxy log says why.
            guard let refusal = upgradeRefusal(wsi) else { return 0 }
            metrics.rejectedUpgrades.add(1, ordering: .relaxed)
            lws_return_http_status(wsi, refusal.status, refusal.message)
            return 1

        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return upgradeRefusal(wsi) == nil ? 0 : 1

        case LWS_CALLBACK_ESTABLISHED:
            guard let user else { return -1 }
            let connection = register(wsi, user: user, isWebSocket: true)
            if configuration.socketSendBufferBytes > 0 {
                var size = Int32(configuration.socketSendBufferBytes)
                setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            onEvent(.opened(connection: connection.id, peer: connection.peer))
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let connection = connection(user), let input else { return 0 }
            receive(connection, UnsafeRawBufferPointer(start: input, count: length))
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return writeNextFrame(connection)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // The answer to our close: nothing to echo (our side is shut), just close.
            return connection(user)?.closeFrameSent == true ? 1 : 0

        case LWS_CALLBACK_CLOSED:
            if let connection = connection(user) {
                unregister(connection, user: user)
                onEvent(.closed(connection: connection.id))
            }
            return 0

        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            serviceWakeups()
            return 0

        case LWS_CALLBACK_HTTP:
            guard let user else { return -1 }
            return beginRequest(wsi, user: user)

        case LWS_CALLBACK_HTTP_BODY:
            guard let connection = connection(user), connection.request != nil, let input else { return 0 }
            if (connection.request?.body.count ?? 0) + length > configuration.maxRequestBodyBytes {
                connection.request = nil
                return answerNow(connection, Self.refusal(413, code: "payload_too_large", message: "The request body is larger than \(configuration.maxRequestBodyBytes) bytes."))
            }
            connection.request?.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            return 0

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let connection = connection(user), let request = connection.request else { return 0 }
            connection.request = nil
            onEvent(.request(request))
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let connection = connection(user) else { return 0 }
            return writeResponse(connection)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            if let connection = connection(user), !connection.isWebSocket { unregister(connection, user: user) }
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    // MARK: Connections

    // The per-session slot lws gives each connection holds the `Connection` object itself (unretained: the
    // `connections` table keeps it alive), so callbacks find it without a lookup. `unregister` zeroes the
    // slot before the object can go, so every later callback on that connection sees none.

    private func connection(_ user: UnsafeMutableRawPointer?) -> Connection? {
        guard let user, let pointer = UnsafeRawPointer(bitPattern: user.load(as: UInt.self)) else { return nil }
        return Unmanaged<Connection>.fromOpaque(pointer).takeUnretainedValue()
    }

    private func register(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer, isWebSocket: Bool) -> Connection {
        let id = nextConnectionID
        nextConnectionID += 1
        let connection = Connection(id: id, wsi: wsi, isWebSocket: isWebSocket, peer: peerAddress(wsi), burst: configuration.messageBurst)
        connections[id] = connection
        user.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(connection).toOpaque()), as: UInt.self)
        if isWebSocket {
            connection.queue = queues.open(id)
            metrics.openConnections.add(1, ordering: .relaxed)
            metrics.connectionsTotal.add(1, ordering: .relaxed)
        }
        return connection
    }

    private func unregister(_ connection: Connection, user: UnsafeMutableRawPointer?) {
        user?.storeBytes(of: 0, as: UInt.self)
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        queues.remove(connection.id)
        if connection.isWebSocket { metrics.openConnections.subtract(1, ordering: .relaxed) }
    }

    private func peerAddress(_ wsi: OpaquePointer) -> String {
        if configuration.trustForwardedFor, let forwarded = header(wsi, WSI_TOKEN_X_FORWARDED_FOR) {
            return forwarded.split(separator: ",").first.map { String($0).trimmingSpaces() } ?? forwarded
        }
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: WebSocket upgrade

    /// Only `/ws`, only from our own pages (or allowed origins, or clients that are not browsers), and only
    /// while there is room for another connection. `nil` accepts.
    private func upgradeRefusal(_ wsi: OpaquePointer) -> (status: UInt32, message: String)? {
        if header(wsi, WSI_TOKEN_GET_URI) != configuration.webSocketPath {
            return (404, "WebSockets are at \(configuration.webSocketPath).")
        }
        if !originAllowed(wsi) {
            return (403, "This page's origin may not connect here.")
        }
        if metrics.openConnections.load(ordering: .relaxed) >= configuration.maxConnections {
            return (503, "The server is full. Please try again in a moment.")
        }
        return nil
    }

    private func originAllowed(_ wsi: OpaquePointer) -> Bool {
        guard let origin = header(wsi, WSI_TOKEN_ORIGIN), !origin.isEmpty else { return true }
        if configuration.allowedOrigins.contains("*") || configuration.allowedOrigins.contains(origin) { return true }
        guard let host = header(wsi, WSI_TOKEN_HOST), let separator = origin.range(of: "://") else { return false }
        return origin[separator.upperBound...].lowercased() == host.lowercased()
    }

    // MARK: WebSocket messages

    private func receive(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        guard !connection.refusing else { return }
        let wsi = connection.wsi
        if lws_frame_is_binary(wsi) != 0 {
            refuse(connection, status: 1003, code: "binary_not_supported", message: "This server only understands text messages (JSON).")
            return
        }
        let remaining = Int(lws_remaining_packet_payload(wsi))
        if connection.inbound.count + bytes.count + remaining > configuration.maxMessageBytes {
            refuse(connection, status: 1009, code: "message_too_big", message: "Messages can be at most \(configuration.maxMessageBytes) bytes.")
            return
        }
        connection.inbound.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0, remaining == 0 else { return }
        guard takeToken(connection) else {
            refuse(connection, status: 1008, code: "too_many_messages", message: "Too many messages too quickly; please slow down.")
            return
        }
        let message = connection.inbound
        connection.inbound = []
        metrics.messagesReceived.add(1, ordering: .relaxed)
        onEvent(.message(connection: connection.id, bytes: message))
    }

    private func takeToken(_ connection: Connection) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        let elapsed = Double(now - connection.refilledAt) / 1e9
        connection.refilledAt = now
        connection.tokens = min(configuration.messageBurst, connection.tokens + elapsed * configuration.messagesPerSecond)
        guard connection.tokens >= 1 else { return false }
        connection.tokens -= 1
        return true
    }

    /// A protocol violation: say why in the usual error shape, then close with `status`. Input from the
    /// connection is ignored from here on.
    private func refuse(_ connection: Connection, status: UInt16, code: String, message: String) {
        connection.refusing = true
        connection.inbound = []
        metrics.protocolErrors.add(1, ordering: .relaxed)
        let json = #"{"type":"error","code":"\#(code)","message":"\#(message)"}"#
        _ = queues.enqueue(OutboundFrame(text: json), to: [connection.id])
        _ = queues.close(connection.id, status: status, reason: code)
        lws_callback_on_writable(connection.wsi)
    }

    private func writeNextFrame(_ connection: Connection) -> Int32 {
        guard let queue = connection.queue else { return 0 }
        switch queues.next(from: queue) {
        case .frame(let frame, let more):
            let written = lws_write(connection.wsi, frame.payload, frame.count, LWS_WRITE_TEXT)
            guard written >= frame.count else { return -1 }
            metrics.messagesSent.add(1, ordering: .relaxed)
            metrics.bytesSent.add(frame.count, ordering: .relaxed)
            if more { lws_callback_on_writable(connection.wsi) }
            return 0
        case .close(let status, let reason):
            return lingeringClose(connection, status: status, reason: reason)
        case .nothing:
            return 0
        }
    }

    /// Closes politely: the close frame, then half-close, then read (and discard) until the client answers
    /// or `PENDING_TIMEOUT_CLOSE_ACK` expires. lws's own close (`lws_close_reason` and return -1) closes the
    /// socket at once, and a client that is still sending then gets a reset, which makes its kernel drop
    /// our error and close frame unread: a flooding or refused client would never learn why.
    private func lingeringClose(_ connection: Connection, status: UInt16, reason: String) -> Int32 {
        let wsi = connection.wsi
        // Whatever lws still buffers from earlier frames goes first.
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return 0
        }
        if !connection.closeFrameSent {
            let reasonBytes = Array(reason.utf8.prefix(120))
            let payload = [UInt8(status >> 8), UInt8(status & 0xFF)] + reasonBytes
            let headroom = Int(sc_lws_pre())
            var frame = [UInt8](repeating: 0, count: headroom) + [0x88, UInt8(payload.count)] + payload
            let length = frame.count - headroom
            // LWS_WRITE_HTTP is LWS_WRITE_RAW (a macro Swift cannot see): the bytes go out unframed.
            let written = frame.withUnsafeMutableBufferPointer { lws_write(wsi, $0.baseAddress! + headroom, length, LWS_WRITE_HTTP) }
            guard written >= length else { return -1 }
            connection.closeFrameSent = true
            connection.refusing = true
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, 3)
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        shutdown(lws_get_socket_fd(wsi), Int32(SHUT_WR))
        return 0
    }

    /// Woken by `lws_cancel_service()`: ask for writable callbacks where frames or responses wait, and
    /// kill connections that fell too far behind.
    private func serviceWakeups() {
        for (id, wakeup) in queues.takeWakeups() {
            guard let connection = connections[id] else { continue }
            switch wakeup {
            case .kill:
                lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            case .writable:
                if !connection.isWebSocket, let (sequence, response) = queues.takeResponse(id) {
                    guard sequence == connection.sequence else { continue }
                    connection.response = response
                }
                lws_callback_on_writable(connection.wsi)
            }
        }
    }

    // MARK: HTTP

    private func beginRequest(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer) -> Int32 {
        let connection = self.connection(user) ?? register(wsi, user: user, isWebSocket: false)
        metrics.httpRequests.add(1, ordering: .relaxed)
        let methods: [(lws_token_indexes, String)] = [
            (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_PUT_URI, "PUT"),
            (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_HEAD_URI, "HEAD"),
            (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        ]
        guard let (token, method) = methods.first(where: { lws_hdr_total_length(wsi, $0.0) > 0 }), let path = header(wsi, token) else {
            return -1
        }
        var query: [String: String] = [:]
        var fragment = [CChar](repeating: 0, count: 512)
        var index: Int32 = 0
        while lws_hdr_copy_fragment(wsi, &fragment, Int32(fragment.count), WSI_TOKEN_HTTP_URI_ARGS, index) >= 0 {
            let text = String(decoding: fragment.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if let key = parts.first { query[String(key)] = parts.count > 1 ? String(parts[1]) : "" }
            index += 1
        }
        var headers: [String: String] = [:]
        let wanted: [(lws_token_indexes, String)] = [
            (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_HTTP_IF_NONE_MATCH, "if-none-match"),
            (WSI_TOKEN_HOST, "host"), (WSI_TOKEN_ORIGIN, "origin"), (WSI_TOKEN_HTTP_CONTENT_TYPE, "content-type"),
            (WSI_TOKEN_HTTP_ACCEPT, "accept"), (WSI_TOKEN_HTTP_CONTENT_LENGTH, "content-length"),
        ]
        for (token, name) in wanted {
            if let value = header(wsi, token) { headers[name] = value }
        }

        connection.sequence += 1
        connection.response = nil
        connection.headersWritten = false
        connection.bodyOffset = 0
        let request = HTTPRequest(id: HTTPRequest.ID(connection: connection.id, sequence: connection.sequence), method: method, path: path, query: query, headers: headers, body: [], peer: connection.peer)
        let declaredLength = Int(headers["content-length"] ?? "") ?? 0
        if declaredLength > configuration.maxRequestBodyBytes {
            return answerNow(connection, Self.refusal(413, code: "payload_too_large", message: "The request body is larger than \(configuration.maxRequestBodyBytes) bytes."))
        }
        if declaredLength > 0, ["POST", "PUT", "PATCH"].contains(method) {
            connection.request = request
        } else {
            onEvent(.request(request))
        }
        return 0
    }

    private func answerNow(_ connection: Connection, _ response: HTTPResponse) -> Int32 {
        connection.response = response
        lws_callback_on_writable(connection.wsi)
        return 0
    }

    static func refusal(_ status: Int, code: String, message: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(#"{"error":{"code":"\#(code)","message":"\#(message)"}}"#.utf8))
    }

    /// Headers in one WRITEABLE callback, then the body in chunks, one write per callback.
    private func writeResponse(_ connection: Connection) -> Int32 {
        guard let response = connection.response else { return 0 }
        let wsi = connection.wsi
        let headroom = Int(sc_lws_pre())
        if !connection.headersWritten {
            var buffer = [UInt8](repeating: 0, count: headroom + 8_192)
            let failed = buffer.withUnsafeMutableBufferPointer { raw -> Bool in
                let start = raw.baseAddress! + headroom
                let end = raw.baseAddress! + raw.count - 1
                var cursor: UnsafeMutablePointer<UInt8>? = start
                if lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType, lws_filepos_t(response.body.count), &cursor, end) != 0 {
                    return true
                }
                for (name, value) in response.headers {
                    let headerName = name.lowercased() + ":"
                    if lws_add_http_header_by_name(wsi, headerName, value, Int32(value.utf8.count), &cursor, end) != 0 { return true }
                }
                return lws_finalize_write_http_header(wsi, start, &cursor, end) != 0
            }
            if failed { return -1 }
            connection.headersWritten = true
            if response.body.isEmpty || connection.request?.method == "HEAD" {
                connection.response = nil
                return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
            }
            lws_callback_on_writable(wsi)
            return 0
        }
        let chunk = min(response.body.count - connection.bodyOffset, 16 * 1_024)
        let isFinal = connection.bodyOffset + chunk == response.body.count
        var buffer = [UInt8](repeating: 0, count: headroom + chunk)
        buffer.replaceSubrange(headroom..., with: response.body[connection.bodyOffset..<(connection.bodyOffset + chunk)])
        let written = buffer.withUnsafeMutableBufferPointer { raw in
            lws_write(wsi, raw.baseAddress! + headroom, chunk, isFinal ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
        }
        guard written >= chunk else { return -1 }
        connection.bodyOffset += chunk
        if isFinal {
            connection.response = nil
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
        lws_callback_on_writable(wsi)
        return 0
    }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
