import CLibWebSockets
import Glibc
import TransportCore

/// Open WebSockets per client address (service thread only).
struct AddressCounts {
    private(set) var counts: [String: Int] = [:]

    func count(_ address: String) -> Int { counts[address] ?? 0 }

    mutating func add(_ address: String) { counts[address, default: 0] += 1 }

    mutating func remove(_ address: String) {
        guard let count = counts[address] else { return }
        counts[address] = count > 1 ? count - 1 : nil
    }
}

/// Open HTTP connections per client address, by connection (service thread only): a keep-alive connection
/// counts once, from its first request until lws destroys it.
struct HTTPConnectionCounts {
    private var addresses: [OpaquePointer: String] = [:]
    private var counts = AddressCounts()

    func address(of wsi: OpaquePointer) -> String? { addresses[wsi] }

    func count(_ address: String) -> Int { counts.count(address) }

    mutating func add(_ wsi: OpaquePointer, address: String) {
        addresses[wsi] = address
        counts.add(address)
    }

    mutating func remove(_ wsi: OpaquePointer) {
        guard let address = addresses.removeValue(forKey: wsi) else { return }
        counts.remove(address)
    }
}

// The WebSocket upgrade: only `/ws`, only from our own pages (or allowed origins, or clients that are not
// browsers), only while this address and the server have room for another connection.
extension WebSocketServer {
    /// `LWS_CALLBACK_HTTP_CONFIRM_UPGRADE`: 0 lets the upgrade go on; a refusal is answered here with a real
    /// HTTP status and the usual JSON error, so a browser, a proxy log or a script can tell why.
    func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        // The TLS port lets plain HTTP in only to redirect it: a WebSocket is never carried in the clear.
        if configuration.tls != nil, lws_is_ssl(wsi) == 0 {
            metrics.rejectedUpgrades.add(1, ordering: .relaxed)
            return -1
        }
        guard let refusal = upgradeRefusal(wsi) else { return 0 }
        metrics.rejectedUpgrades.add(1, ordering: .relaxed)
        if case .tooManyConnectionsFromAddress = refusal { metrics.rejectedPerAddress.add(1, ordering: .relaxed) }
        // lws expects an answer to a refused upgrade inside this callback; -1 then closes the connection
        // once the answer is written.
        _ = writeClosingResponse(wsi, refusals.httpRefusal(refusal))
        return -1
    }

    private func upgradeRefusal(_ wsi: OpaquePointer) -> TransportRefusal? {
        if header(wsi, WSI_TOKEN_GET_URI) != configuration.webSocketPath {
            return .wrongWebSocketPath(expected: configuration.webSocketPath)
        }
        if !originPolicy.withLock({ $0 }).allows(header(wsi, WSI_TOKEN_ORIGIN)) {
            return .originNotAllowed
        }
        // The address's own limit first: a flood is told to slow down, and it never reaches the server-wide
        // limit that would turn others away.
        let limit = configuration.maxConnectionsPerAddress
        if limit > 0, webSocketsPerAddress.count(peerAddress(wsi)) >= limit {
            return .tooManyConnectionsFromAddress(limit: limit)
        }
        if metrics.openConnections.load(ordering: .relaxed) >= configuration.maxConnections {
            return .serverFull
        }
        return nil
    }

    /// `LWS_CALLBACK_ESTABLISHED`: the upgrade is done (it happens right after `confirmUpgrade`, on this
    /// thread, so the per-address count cannot have moved in between).
    func webSocketOpened(_ wsi: OpaquePointer, user: UnsafeMutableRawPointer) {
        let now = Self.monotonicMilliseconds()
        let (state, action) = ConnectionState.opened(at: now, policy: connectionPolicy)
        let connection = register(wsi, user: user, kind: .webSocket, peer: peerAddress(wsi), state: state)
        connection.countedAddress = connection.peer
        webSocketsPerAddress.add(connection.peer)
        if configuration.socketSendBufferBytes > 0 {
            var size = Int32(configuration.socketSendBufferBytes)
            setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        perform(action, on: connection, at: now)
        onEvent(.opened(connection: connection.id, peer: connection.peer, query: query(wsi, firstWins: true)))
    }
}
