import CLibWebSockets
import Dispatch

// Keepalive: a WebSocket that has sent nothing for `pingAfterIdleSeconds` is pinged, and one that has sent
// nothing (not even the pong) for `hangUpAfterIdleSeconds` is hung up on (a tablet that slept or left the
// Wi-Fi without a goodbye).
//
// Not libwebsockets' validity policy (`retry_and_idle_policy`), which did this before: lws 4.1 keeps every
// timer in one sorted linked list, and the policy re-inserts a connection's timer at "now + interval", at
// the list's end, when the connection pings and again when its pong comes: a walk over every connection's
// timer each time. Ten thousand children pinged every 20 s made that a third of the server's CPU under a
// classroom's load, and stalls of seconds when thousands of pongs came at once (docs/performance.md).
// Here a frame received writes the connection's last-seen time, and one sweep on one lws timer looks at
// every connection a few times per interval: O(connections) per sweep, nothing per message.
extension WebSocketServer {
    /// How often the sweep runs: a quarter of the shortest keepalive interval, within 0.1–1 s. A ping or a
    /// hang-up comes at most that much after its time.
    var keepaliveSweepMicroseconds: Int64? {
        let intervals = [configuration.pingAfterIdleSeconds, configuration.hangUpAfterIdleSeconds].filter { $0 > 0 }
        guard let shortest = intervals.min() else { return nil }
        return min(1_000_000, max(100_000, Int64(shortest) * 1_000_000 / 4))
    }

    /// Service thread, before the loop runs: the first sweep.
    func startKeepalive(_ context: OpaquePointer) {
        guard let interval = keepaliveSweepMicroseconds else { return }
        let timer = UnsafeMutablePointer<sc_lws_timer_t>.allocate(capacity: 1)
        timer.initialize(to: sc_lws_timer_t())
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        keepaliveTimer = timer
        sc_lws_timer_schedule(context, timer, keepaliveTimerFired, interval)
    }

    /// Service thread, before the context is destroyed.
    func stopKeepalive() {
        guard let timer = keepaliveTimer else { return }
        lws_sul_cancel(&timer.pointee.sul)
        timer.deallocate()
        keepaliveTimer = nil
    }

    /// A frame came from the peer (a message, part of one, or a pong): it is alive.
    func seen(_ connection: Connection, at now: UInt64) {
        connection.lastSeen = now
        connection.pinged = false
    }

    func sweepIdleConnections() {
        let now = DispatchTime.now().uptimeNanoseconds
        let pingAfter = UInt64(max(0, configuration.pingAfterIdleSeconds)) * 1_000_000_000
        let hangUpAfter = UInt64(max(0, configuration.hangUpAfterIdleSeconds)) * 1_000_000_000
        for connection in connections.values where connection.isWebSocket && !connection.refusing {
            let idle = now > connection.lastSeen ? now - connection.lastSeen : 0
            if hangUpAfter > 0, idle >= hangUpAfter {
                // As lws did: no close frame (the peer has not been heard from; it will not read one).
                connection.refusing = true
                metrics.idleHangUps.add(1, ordering: .relaxed)
                lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            } else if pingAfter > 0, idle >= pingAfter, !connection.pinged {
                connection.pinged = true
                connection.pingDue = true
                lws_callback_on_writable(connection.wsi)
            }
        }
        if let timer = keepaliveTimer, let interval = keepaliveSweepMicroseconds, let context = resources?.context {
            sc_lws_timer_schedule(context, timer, keepaliveTimerFired, interval)
        }
    }

    /// The keepalive ping's payload. Not empty: a pong echoes its ping's payload (RFC 6455, 5.5.3), and lws
    /// 4.1 does not report an empty pong to the protocol at all (`ops-ws.c`: "PONG && !len → already_done"),
    /// so an empty ping's answer would never count as life.
    static let pingPayload = Array("storycircle".utf8)

    /// In a WRITEABLE callback: the ping the sweep asked for, before anything queued.
    func writePing(_ connection: Connection) -> Int32 {
        connection.pingDue = false
        let payload = controlFrame.baseAddress!.advanced(by: OutboundFrame.headroom).assumingMemoryBound(to: UInt8.self)
        payload.update(from: Self.pingPayload, count: Self.pingPayload.count)
        guard lws_write(connection.wsi, payload, Self.pingPayload.count, LWS_WRITE_PING) >= 0 else { return -1 }
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
