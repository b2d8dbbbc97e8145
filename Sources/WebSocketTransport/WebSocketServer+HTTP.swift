import CLibWebSockets
import TransportCore

// HTTP requests to the dynamic routes (and anything else lws hands to the callback): read them, hand them
// to the application, write its answers. A `HEAD` gets the headers of the answer, never its body.
extension WebSocketServer {
    static let methods: [(lws_token_indexes, HTTPMethod)] = [
        (WSI_TOKEN_GET_URI, .get), (WSI_TOKEN_POST_URI, .post), (WSI_TOKEN_PUT_URI, .put),
        (WSI_TOKEN_PATCH_URI, .patch), (WSI_TOKEN_DELETE_URI, .delete), (WSI_TOKEN_HEAD_URI, .head),
        (WSI_TOKEN_OPTIONS_URI, .options),
    ]

    /// The methods static pages answer to (lws serves them; other methods end up here).
    static let staticMethods: [HTTPMethod] = [.get, .head]

    func beginRequest(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer) -> Int32 {
        let connection = self.connection(user) ?? register(wsi, user: user, kind: .http, peer: peerAddress(wsi))
        metrics.httpRequests.add(1, ordering: .relaxed)
        guard let (token, method) = Self.methods.first(where: { lws_hdr_total_length(wsi, $0.0) > 0 }), let path = header(wsi, token) else {
            return -1
        }
        let query = query(wsi)
        var headers: [String: String] = [:]
        let wanted: [(lws_token_indexes, String)] = [
            (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_HTTP_IF_NONE_MATCH, "if-none-match"),
            (WSI_TOKEN_HOST, "host"), (WSI_TOKEN_ORIGIN, "origin"), (WSI_TOKEN_HTTP_CONTENT_TYPE, "content-type"),
            (WSI_TOKEN_HTTP_ACCEPT, "accept"), (WSI_TOKEN_HTTP_CONTENT_LENGTH, "content-length"), (WSI_TOKEN_HTTP_COOKIE, "cookie"),
        ]
        for (token, name) in wanted {
            if let value = header(wsi, token) { headers[name] = value }
        }
        // Headers lws has no index for (it keeps their names in lower case, with the colon).
        for name in Self.customHeaders {
            if let value = customHeader(wsi, name) { headers[name] = value }
        }

        connection.sequence += 1
        connection.method = method
        connection.request = nil
        connection.response = nil
        connection.headersWritten = false
        connection.bodyOffset = 0
        connection.closeAfterResponse = false
        if !isDynamic(path), !Self.staticMethods.contains(method) {
            return answerNow(connection, refusals.httpRefusal(.methodNotAllowed(allowed: Self.staticMethods)))
        }
        let request = HTTPRequest(id: HTTPRequest.ID(connection: connection.id, sequence: connection.sequence), method: method, path: path, query: query, headers: headers, body: [], peer: connection.peer)
        let declaredLength = Int(headers["content-length"] ?? "") ?? 0
        // The application's word from the head first (the route's authority, from the headers alone): a
        // request it refuses is answered before a byte of its body is read.
        let bodyLimit: Int
        switch configuration.admitHead?(request) ?? .read(bodyLimit: configuration.maxRequestBodyBytes(for: path, headers: headers)) {
        case .answer(let response):
            metrics.httpAnsweredAtHead.add(1, ordering: .relaxed)
            return answerAtHead(connection, response, bodyFollows: declaredLength > 0 || method.hasBody)
        case .read(let limit):
            bodyLimit = limit
        }
        connection.bodyLimit = bodyLimit
        if declaredLength > bodyLimit {
            metrics.httpAnsweredAtHead.add(1, ordering: .relaxed)
            return answerAtHead(connection, refusals.httpRefusal(.payloadTooLarge(limit: bodyLimit)), bodyFollows: true)
        }
        if declaredLength > 0, method.hasBody {
            connection.request = request
        } else {
            onEvent(.request(request))
        }
        return 0
    }

    /// A session's CSRF token, which pages send with everything they change, and the browser's word on
    /// which site's page sent the request (`SessionCookies.comesFromThisServer`).
    static let customHeaders = ["x-csrf-token", "sec-fetch-site"]

    func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let key = name + ":"
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
        guard length > 0, length <= 4_096 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.utf8.count)) >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func isDynamic(_ path: String) -> Bool {
        configuration.dynamicPrefixes.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    func receiveBody(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard connection.request != nil else { return 0 }
        metrics.httpBodyBytes.add(bytes.count, ordering: .relaxed)
        let bodyLimit = connection.bodyLimit
        if (connection.request?.body.count ?? 0) + bytes.count > bodyLimit {
            connection.request = nil
            return answerAtHead(connection, refusals.httpRefusal(.payloadTooLarge(limit: bodyLimit)), bodyFollows: true)
        }
        connection.request?.body.append(contentsOf: bytes)
        return 0
    }

    private func answerNow(_ connection: Connection, _ response: HTTPResponse) -> Int32 {
        connection.response = response
        lws_callback_on_writable(connection.wsi)
        return 0
    }

    /// Answers without reading the request's body. When a body follows, the connection closes once the
    /// answer is out (`Connection: close`): lws would otherwise read the rest of it to find the next request.
    private func answerAtHead(_ connection: Connection, _ response: HTTPResponse, bodyFollows: Bool) -> Int32 {
        var response = response
        if bodyFollows {
            connection.closeAfterResponse = true
            response.headers.append(("connection", "close"))
        }
        return answerNow(connection, response)
    }

    // MARK: HTTP connections per address

    /// `LWS_CALLBACK_FILTER_HTTP_CONNECTION`, at every HTTP request's head (static or dynamic; never an
    /// upgrade): a connection is counted against its address at its first request, and one past the
    /// address's limit is answered 429 and closed (non-zero). `httpConnectionGone` uncounts it.
    func admitHTTPConnection(_ wsi: OpaquePointer) -> Int32 {
        let limit = configuration.maxHTTPConnectionsPerAddress
        guard limit > 0, httpConnections.address(of: wsi) == nil else { return 0 }
        let address = peerAddress(wsi)
        if httpConnections.count(address) >= limit {
            metrics.httpRejectedPerAddress.add(1, ordering: .relaxed)
            _ = writeClosingResponse(wsi, refusals.httpRefusal(.tooManyConnectionsFromAddress(limit: limit)))
            return -1
        }
        httpConnections.add(wsi, address: address)
        return 0
    }

    /// `LWS_CALLBACK_WSI_DESTROY`: every connection ends here once.
    func httpConnectionGone(_ wsi: OpaquePointer) {
        httpConnections.remove(wsi)
    }

    /// Headers in one WRITEABLE callback, then the body in chunks, one write per callback.
    func writeResponse(_ connection: Connection) -> Int32 {
        guard let response = connection.response else { return 0 }
        let wsi = connection.wsi
        let headroom = Int(sc_lws_pre())
        if !connection.headersWritten {
            var buffer = [UInt8](repeating: 0, count: headroom + 8_192)
            let failed = buffer.withUnsafeMutableBufferPointer { raw -> Bool in
                let start = raw.baseAddress! + headroom
                let end = raw.baseAddress! + raw.count - 1
                var cursor: UnsafeMutablePointer<UInt8>? = start
                if lws_add_http_common_headers(wsi, UInt32(response.status.code), response.contentType, lws_filepos_t(response.body.count), &cursor, end) != 0 {
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
            // `Content-Length` above is the length a GET would get; a HEAD stops here.
            if response.body.isEmpty || connection.method == .head {
                connection.response = nil
                return completeTransaction(connection)
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
            return completeTransaction(connection)
        }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// The answer is out: the connection waits for its next request, or closes (-1) after an answer given
    /// without reading the body.
    private func completeTransaction(_ connection: Connection) -> Int32 {
        if connection.closeAfterResponse { return -1 }
        return lws_http_transaction_completed(connection.wsi) != 0 ? -1 : 0
    }

    /// A whole small response in one write, ending the connection (`Connection: close`; the caller then
    /// returns -1 and lws closes once it is written). For the one place lws expects an answer inside the
    /// callback, a refused upgrade: this is what `lws_return_http_status` does, with our JSON body instead
    /// of its HTML, and an HTTP/1.1 status line (lws writes 1.0 there, which WebSocket clients reject as
    /// no answer at all instead of reading the status).
    func writeClosingResponse(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Bool {
        let headroom = Int(sc_lws_pre())
        var buffer = [UInt8](repeating: 0, count: headroom) + rawBytes(of: response)
        let length = buffer.count - headroom
        return buffer.withUnsafeMutableBufferPointer { lws_write(wsi, $0.baseAddress! + headroom, length, LWS_WRITE_HTTP) } == length
    }

    /// A response as HTTP/1.1 bytes, with the headers every response carries, ending the connection.
    func rawBytes(of response: HTTPResponse) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status.code) \(response.status.reasonPhrase)\r\n"
        var headers = [("content-type", response.contentType), ("content-length", String(response.body.count)), ("connection", "close")]
        headers += response.headers.map { ($0.name.lowercased(), $0.value) }
        headers += configuration.responseHeaders.map { ($0.name.lowercased(), $0.value) }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + response.body
    }
}
