import CLibWebSockets

// The redirect port: plain HTTP on its own vhost and protocol, answering every request with a redirect to the
// same path over HTTPS (`HTTPSRedirect`) and nothing else: no API, no page, no WebSocket. Plain HTTP reaching
// the TLS port itself (a typed "192.0.2.2:8080") gets the same answer, and its connection is closed after it.
extension WebSocketServer {
    func answerWithRedirect(_ wsi: OpaquePointer, thenClose: Bool = false) -> Int32 {
        metrics.httpRequests.add(1, ordering: .relaxed)
        var path: String?
        for (token, _) in Self.methods where lws_hdr_total_length(wsi, token) > 0 {
            path = header(wsi, token)
            break
        }
        var query: [String] = []
        var fragment = [CChar](repeating: 0, count: 512)
        while query.count < 32, lws_hdr_copy_fragment(wsi, &fragment, Int32(fragment.count), WSI_TOKEN_HTTP_URI_ARGS, Int32(query.count)) >= 0 {
            query.append(String(decoding: fragment.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let served = tls.served
        let target = path.flatMap { path in
            HTTPSRedirect.location(host: header(wsi, WSI_TOKEN_HOST), path: path, query: query, httpsPort: resources?.port ?? configuration.port) { served?.covers(host: $0) ?? false }
        }
        guard let target else {
            _ = lws_return_http_status(wsi, UInt32(HTTP_STATUS_BAD_REQUEST.rawValue), "This address is not served here")
            return -1
        }
        let headroom = Int(sc_lws_pre())
        var buffer = [UInt8](repeating: 0, count: headroom + 1_024 + target.utf8.count)
        let written = buffer.withUnsafeMutableBufferPointer { raw -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = raw.baseAddress! + headroom
            let end = raw.baseAddress! + raw.count - 1
            return lws_http_redirect(wsi, 308, target, Int32(target.utf8.count), &cursor, end)
        }
        guard written >= 0, !thenClose else { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}

/// The redirect vhost's protocol callback (see `webSocketServerCallback`).
func redirectCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    switch reason {
    case LWS_CALLBACK_HTTP:
        return Unmanaged<WebSocketServer>.fromOpaque(raw).takeUnretainedValue().answerWithRedirect(wsi)
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE, LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return -1
    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

extension CResources {
    /// The redirect port's vhost: plain HTTP, one protocol (`redirectCallback`), no mounts.
    static func createRedirectVhost(_ context: OpaquePointer, port: Int, bindAddress: UnsafePointer<CChar>?, name: UnsafePointer<CChar>, allocations: inout [UnsafeMutableRawPointer]) -> OpaquePointer? {
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        allocations.append(UnsafeMutableRawPointer(protocols))
        protocols[0].name = name
        protocols[0].callback = redirectCallback
        var info = lws_context_creation_info()
        info.port = Int32(port)
        info.iface = bindAddress
        info.protocols = UnsafePointer(protocols)
        info.vhost_name = name
        info.timeout_secs = 20
        return lws_create_vhost(context, &info)
    }
}
