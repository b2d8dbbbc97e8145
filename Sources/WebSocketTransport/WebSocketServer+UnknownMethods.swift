import CLibWebSockets
import Glibc
import TransportCore

// Requests with a method lws does not know (`FOO`, `TRACE`, `CONNECT`). Its parser answers them with an HTML
// 403 of its own, unless the vhost asks it to fall back to another role
// (`LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG`, see `CResources`): then the socket is handed
// over as a raw socket, with the bytes read so far, and answered here with the documented JSON 405.
extension WebSocketServer {
    /// `LWS_CALLBACK_RAW_ADOPT`.
    func adoptUnknownMethod(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer) -> Int32 {
        // No headers survive the fallback (lws drops them), so no X-Forwarded-For: the address is not used.
        _ = register(wsi, user: user, kind: .refusedRequest, peer: "")
        // Whatever the client does, the socket goes within this bound.
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, Self.refusalGraceSeconds)
        return 0
    }

    /// `LWS_CALLBACK_RAW_RX`: first the request as far as lws read it, then whatever else comes (ignored).
    func receiveUnknownMethod(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard connection.response == nil, !connection.answered else { return 0 }
        metrics.httpRequests.add(1, ordering: .relaxed)
        // "FOO /api/rooms HTTP/1.1": the path says which methods the resource would take.
        let requestLine = bytes.prefix { $0 != 0x0D && $0 != 0x0A }.split(separator: 0x20)
        let path = requestLine.count > 1 ? String(decoding: requestLine[1], as: UTF8.self) : "/"
        if configuration.tls != nil, lws_is_ssl(connection.wsi) == 0 {
            connection.response = plainRequestOnTLSPort(bytes, path: path)
            lws_callback_on_writable(connection.wsi)
            return 0
        }
        let allowed = isDynamic(path.split(separator: "?").first.map(String.init) ?? path) ? [.get, .head, .post] : Self.staticMethods
        connection.response = refusals.httpRefusal(.methodNotAllowed(allowed: allowed))
        lws_callback_on_writable(connection.wsi)
        return 0
    }

    /// Plain HTTP on the TLS port (a child typing "192.0.2.2:8080"): lws lets it in only as a raw socket, and
    /// its answer is a redirect to the same host and path over HTTPS, for a host the certificate names
    /// (`HTTPSRedirect`), or a 400; nothing is served in the clear. The query is left behind (its bytes are
    /// still encoded here).
    private func plainRequestOnTLSPort(_ bytes: UnsafeRawBufferPointer, path: String) -> HTTPResponse {
        let lines = bytes.prefix(8_192).split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
        let host = lines.dropFirst().first { $0.lowercased().hasPrefix("host:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
        let served = tls.served
        let plainPath = String(path.prefix { $0 != "?" })
        guard let target = HTTPSRedirect.location(host: host, path: plainPath, query: [], httpsPort: resources?.port ?? configuration.port, covers: { served?.covers(host: $0) ?? false }) else {
            return HTTPResponse(status: .badRequest, body: Array("This address is not served here.\n".utf8))
        }
        return HTTPResponse(status: .permanentRedirect, headers: [("Location", target)], body: Array("Moved to \(target)\n".utf8))
    }

    /// `LWS_CALLBACK_RAW_WRITEABLE`: the answer (written raw: no HTTP role is left to frame it), then a
    /// half-close, so the client reads it all before the socket goes.
    func answerUnknownMethod(_ connection: Connection) -> Int32 {
        let wsi = connection.wsi
        if !connection.answered, let response = connection.response {
            let headroom = Int(sc_lws_pre())
            var buffer = [UInt8](repeating: 0, count: headroom) + rawBytes(of: response)
            let length = buffer.count - headroom
            let written = buffer.withUnsafeMutableBufferPointer { lws_write(wsi, $0.baseAddress! + headroom, length, LWS_WRITE_HTTP) }
            guard written >= length else { return -1 }
            connection.answered = true
        }
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return 0
        }
        if connection.answered { shutdown(lws_get_socket_fd(wsi), Int32(SHUT_WR)) }
        return 0
    }
}
