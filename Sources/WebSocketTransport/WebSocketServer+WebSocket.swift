import CLibWebSockets
import Dispatch

// WebSocket traffic: messages in (reassembled, bounded, rate-limited), the hello timeout, frames out.
extension WebSocketServer {
    func receive(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        guard !connection.refusing else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        seen(connection, at: now)
        let wsi = connection.wsi
        if lws_frame_is_binary(wsi) != 0 {
            refuse(connection, .binaryNotSupported)
            return
        }
        let remaining = Int(lws_remaining_packet_payload(wsi))
        if connection.inbound.count + bytes.count + remaining > configuration.maxMessageBytes {
            refuse(connection, .messageTooBig(limit: configuration.maxMessageBytes))
            return
        }
        connection.inbound.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0, remaining == 0 else { return }
        guard takeToken(connection, now: now) else {
            refuse(connection, .tooManyMessages)
            return
        }
        let message = connection.inbound
        connection.inbound = []
        if !connection.greeted {
            connection.greeted = true
            // LWS_SET_TIMER_USEC_CANCEL (a macro Swift cannot see). lws 4.1.6 does not cancel here: it
            // schedules the timer for now, at the head of its sorted list (no walk), and `helloTimerFired`
            // ignores it. Left alone, the timer would wait 10 s further down the list for nothing.
            lws_set_timer_usecs(wsi, -1)
        }
        metrics.messagesReceived.add(1, ordering: .relaxed)
        onEvent(.message(connection: connection.id, bytes: message))
    }

    private func takeToken(_ connection: Connection, now: UInt64) -> Bool {
        let elapsed = Double(now > connection.refilledAt ? now - connection.refilledAt : 0) / 1e9
        connection.refilledAt = now
        connection.tokens = min(configuration.messageBurst, connection.tokens + elapsed * configuration.messagesPerSecond)
        guard connection.tokens >= 1 else { return false }
        connection.tokens -= 1
        return true
    }

    /// `LWS_CALLBACK_TIMER`: the hello timeout (the only timer a WebSocket sets). A connection that answers
    /// pings but never says who it is would otherwise hold its place for ever.
    func helloTimerFired(_ connection: Connection) {
        guard !connection.greeted, !connection.refusing else { return }
        metrics.helloTimeouts.add(1, ordering: .relaxed)
        refuse(connection, .helloTimeout(seconds: configuration.helloTimeoutSeconds))
    }

    func writeNextFrame(_ connection: Connection) -> Int32 {
        guard let queue = connection.queue else { return 0 }
        if connection.pingDue, !connection.closeFrameSent { return writePing(connection) }
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
}
