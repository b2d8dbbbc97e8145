import CLibWebSockets
import TransportCore

// How WebSockets end: refusals (an error message, then a close), our polite close, and the client's.
extension WebSocketServer {
    /// A refusal of a connection the application has not seen the end of: say why in the application's
    /// words, then close with the refusal's status. Input from the connection is ignored from here on.
    func refuse(_ connection: Connection, _ refusal: TransportRefusal) {
        connection.state.close()
        connection.inbound = []
        if case .helloTimeout = refusal {} else { metrics.protocolErrors.add(1, ordering: .relaxed) }
        let (close, frame) = refusals.webSocketRefusal(refusal)
        let (queued, _) = queues.enqueue(OutboundFrame(frame), to: [connection.id])
        let closing = queues.close(connection.id, status: close.status, reason: close.reason)
        // Even here on the service thread: a wake-up noted must be taken, or later senders, seeing one
        // pending, would not wake the loop (see `OutboundQueues`).
        if queued || closing { wake() }
        // However the client behaves (it may read nothing at all), the connection ends within this bound;
        // the close below shortens it once the close frame is out.
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, Self.refusalGraceSeconds)
        lws_callback_on_writable(connection.wsi)
    }

    static let refusalGraceSeconds: Int32 = 5

    /// Closes politely: the close frame, then read (and discard) until the client answers with its own
    /// close, which ends the connection (`peerClosed`), or `PENDING_TIMEOUT_CLOSE_ACK` expires. lws's own
    /// close (`lws_close_reason` and return -1) closes the socket at once, and a client that is still
    /// sending then gets a reset, which makes its kernel drop our error and close frame unread: a flooding
    /// or refused client would never learn why.
    ///
    /// Not half-closed (`SHUT_WR`) after the frame either: a proxy (nginx) ends both sides of an upgraded
    /// connection as soon as one side's stream ends, so a client whose pong or tap crossed our close got a
    /// reset from the proxy, with the same effect (a close seen as 1006, not 1012, by a page that had to
    /// reconnect after a room moved).
    func lingeringClose(_ connection: Connection, status: UInt16, reason: String) -> Int32 {
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
            connection.state.close()
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, 3)
            // Whatever lws could not send at once goes in later callbacks (it flushes its buffer first).
            if lws_partial_buffered(wsi) != 0 { lws_callback_on_writable(wsi) }
        }
        return 0
    }

    /// `LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`, with the client's close payload. lws echoes that payload as
    /// its answer (it already turns invalid status codes into 1002), but it echoes a 1-byte payload as it
    /// is, and one byte is no close status at all (RFC 6455, 5.5.1: the body starts with a 2-byte code).
    /// That is a protocol error: close with 1002 instead of echoing it.
    func peerClosed(_ wsi: OpaquePointer, _ connection: Connection?, payloadLength: Int) -> Int32 {
        // The answer to our close: nothing to echo (our side is shut), just close.
        if connection?.closeFrameSent == true { return 1 }
        connection?.peerSentClose = true
        guard payloadLength == 1 else { return 0 }
        metrics.protocolErrors.add(1, ordering: .relaxed)
        connection?.state.close()
        var reason = Array("protocol_error".utf8)
        lws_close_reason(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, &reason, reason.count)
        return -1
    }
}
