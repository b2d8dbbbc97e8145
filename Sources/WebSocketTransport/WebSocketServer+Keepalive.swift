import CLibWebSockets
import TransportCore

// Keepalive: a WebSocket that has sent nothing for `pingAfterIdleSeconds` is pinged, and one that has sent
// nothing (not even the pong) for `hangUpAfterIdleSeconds` is hung up on (a tablet that slept or left the
// Wi-Fi without a goodbye). The rule is `ConnectionState.tick(at:)`; this is its shell: the sweep that
// feeds it the time, and the ping it asks for.
//
// Not libwebsockets' validity policy (`retry_and_idle_policy`): lws 4.1 keeps every timer in one sorted
// linked list, and the policy re-inserts a connection's timer at "now + interval", at the list's end, when
// the connection pings and again when its pong comes: a walk over every connection's timer each time. Ten
// thousand children pinged every 20 s made that a third of the server's CPU under a classroom's load, and
// stalls of seconds when thousands of pongs came at once (docs/performance.md). Here a frame received
// writes the connection's last-seen time, and one sweep on one lws timer looks at every connection a few
// times per interval: O(connections) per sweep, nothing per message.
extension WebSocketServer {
    /// The service thread's clock for `ConnectionState`: monotonic (uptime) milliseconds.
    static func monotonicMilliseconds() -> Milliseconds {
        Milliseconds(LoopExecutor.monotonicNanoseconds() / 1_000_000)
    }

    /// Service thread, before the loop runs: the first sweep.
    func startKeepalive(_ context: OpaquePointer) {
        guard let interval = connectionPolicy.keepaliveSweepInterval else { return }
        let timer = UnsafeMutablePointer<sc_lws_timer_t>.allocate(capacity: 1)
        timer.initialize(to: sc_lws_timer_t())
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        keepaliveTimer = timer
        sc_lws_timer_schedule(context, timer, keepaliveTimerFired, interval * 1_000)
    }

    /// Service thread, before the context is destroyed.
    func stopKeepalive() {
        guard let timer = keepaliveTimer else { return }
        lws_sul_cancel(&timer.pointee.sul)
        timer.deallocate()
        keepaliveTimer = nil
    }

    func sweepIdleConnections() {
        let now = Self.monotonicMilliseconds()
        for connection in connections.all where connection.isWebSocket {
            perform(connection.state.tick(at: now, policy: connectionPolicy), on: connection, at: now)
        }
        if let timer = keepaliveTimer, let interval = connectionPolicy.keepaliveSweepInterval, let context = resources?.context {
            sc_lws_timer_schedule(context, timer, keepaliveTimerFired, interval * 1_000)
        }
    }

    /// Carries out what a connection's state asked for, at `now` (when the event that asked happened).
    /// `.deliver` is the receiver's own (it has the message).
    func perform(_ action: ConnectionAction, on connection: Connection, at now: Milliseconds) {
        switch action {
        case .none, .deliver:
            break
        case .ping:
            connection.pingDue = true
            lws_callback_on_writable(connection.wsi)
        case .hangUp:
            // As lws did: no close frame (the peer has not been heard from; it will not read one).
            metrics.idleHangUps.add(1, ordering: .relaxed)
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        case .refuse(let refusal):
            if case .helloTimeout = refusal { metrics.helloTimeouts.add(1, ordering: .relaxed) }
            refuse(connection, refusal)
        case .checkHello(let time):
            // The connection's one lws timer (`LWS_CALLBACK_TIMER` → `helloTimerFired`).
            lws_set_timer_usecs(connection.wsi, lws_usec_t(max(0, time - now)) * 1_000)
        }
    }

    /// In a WRITEABLE callback: the ping the sweep asked for, before anything queued.
    func writePing(_ connection: Connection) -> Int32 {
        connection.pingDue = false
        let payload = controlFrame.baseAddress!.advanced(by: Self.headroom).assumingMemoryBound(to: UInt8.self)
        payload.update(from: pingPayload, count: pingPayload.count)
        guard lws_write(connection.wsi, payload, pingPayload.count, LWS_WRITE_PING) >= 0 else { return -1 }
        metrics.pingsSent.add(1, ordering: .relaxed)
        // Whatever is queued goes in the next callback.
        lws_callback_on_writable(connection.wsi)
        return 0
    }
}

/// The keepalive sweep's lws timer callback (C needs a top-level function); finds its server through the
/// timer's owner pointer.
func keepaliveTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = sc_lws_timer_owner(sul) else { return }
    Unmanaged<WebSocketServer>.fromOpaque(owner).takeUnretainedValue().sweepIdleConnections()
}
