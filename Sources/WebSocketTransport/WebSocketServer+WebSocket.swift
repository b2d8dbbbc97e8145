import CLibWebSockets
import TransportCore

// WebSocket traffic: messages in (reassembled; bounded, rate-limited and the hello timeout decided by the
// connection's `ConnectionState`), frames out.
extension WebSocketServer {
    func receive(_ connection: Connection, _ bytes: UnsafeRawBufferPointer) {
        guard !connection.state.closing else { return }
        let wsi = connection.wsi
        let now = Self.monotonicMilliseconds()
        let remaining = Int(lws_remaining_packet_payload(wsi))
        let action = connection.state.frameReceived(
            at: now, isBinary: lws_frame_is_binary(wsi) != 0,
            messageBytes: connection.inbound.count + bytes.count + remaining,
            completesMessage: remaining == 0 && lws_is_final_fragment(wsi) != 0, policy: connectionPolicy)
        switch action {
        case .none:
            connection.inbound.append(contentsOf: bytes)
        case .deliver(let endsHelloTimeout):
            connection.inbound.append(contentsOf: bytes)
            let message = connection.inbound
            connection.inbound = []
            if endsHelloTimeout {
                // LWS_SET_TIMER_USEC_CANCEL (a macro Swift cannot see). lws 4.1.6 does not cancel here: it
                // schedules the timer for now, at the head of its sorted list (no walk), and
                // `helloTimerFired` ignores it. Left alone, the timer would wait 10 s further down the list
                // for nothing.
                lws_set_timer_usecs(wsi, -1)
            }
            metrics.messagesReceived.add(1, ordering: .relaxed)
            onEvent(.message(connection: connection.id, bytes: message))
        default:
            perform(action, on: connection, at: now)
        }
    }

    /// `LWS_CALLBACK_TIMER`: the hello timeout (the only timer a WebSocket sets).
    func helloTimerFired(_ connection: Connection) {
        let now = Self.monotonicMilliseconds()
        perform(connection.state.helloTimerFired(at: now, policy: connectionPolicy), on: connection, at: now)
    }

    /// `LWS_CALLBACK_SERVER_WRITEABLE`: the keepalive ping if one is due, else what is queued (as much as one
    /// write takes), else the close.
    func writeNextFrame(_ connection: Connection) -> Int32 {
        guard connection.queue != nil else { return 0 }
        if connection.pingDue, !connection.closeFrameSent { return writePing(connection) }
        switch writeQueuedFrames(connection) {
        case .written(let more):
            if more { lws_callback_on_writable(connection.wsi) }
            return 0
        case .failed:
            return -1
        case .close(let status, let reason):
            return lingeringClose(connection, status: status, reason: reason)
        case .nothing:
            return 0
        }
    }

    /// The one-frame path, on the service thread where it was woken for `connection` (`serviceWakeups`):
    /// what is queued is written at once, without asking lws for a WRITEABLE callback first.
    ///
    /// Why: asking turns the socket's POLLOUT interest on, and lws turns it off again before the callback;
    /// on libev's epoll backend each turn is an `epoll_ctl`, two system calls beside the frame's one `send`
    /// in the classroom's regime, where a connection has one frame queued at a time (docs/performance.md,
    /// "The one-frame path"). A socket with room takes the frame whole, so POLLOUT is never touched.
    ///
    /// Why it is safe outside WRITEABLE on lws 4.1.6 (lib/core-net/output.c, `lws_issue_raw`): a send the
    /// kernel takes only part of leaves the rest on lws's `buflist_out`, and lws itself asks for POLLOUT,
    /// flushes that before any other write and only then calls WRITEABLE; `lws_write` reports the whole
    /// frame as taken either way. Whatever lws must write first (that remainder, a ping the sweep asked for)
    /// or anything that closes the connection (our close, lws's own close frame, the peer's close being
    /// answered) sends the connection down the WRITEABLE path as before, as does anything still queued
    /// after this write and the close that ends a queue.
    func writeAtWakeup(_ connection: Connection) {
        let wsi = connection.wsi
        guard canWriteAtOnce(connection) else {
            lws_callback_on_writable(wsi)
            return
        }
        switch writeQueuedFrames(connection) {
        case .written(let more):
            metrics.writesAtWakeup.add(1, ordering: .relaxed)
            if more { lws_callback_on_writable(wsi) }
        case .failed:
            // lws marked the socket unusable; outside a callback the way to close it is lws's own timeout.
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        case .close:
            lws_callback_on_writable(wsi)
        case .nothing:
            break
        }
    }

    /// Nothing that lws or the connection must write or settle first: a frame can go out outside WRITEABLE.
    private func canWriteAtOnce(_ connection: Connection) -> Bool {
        let wsi = connection.wsi
        return !connection.pingDue && !connection.closeFrameSent && !connection.peerSentClose && !connection.state.closing
            && lws_get_close_length(wsi) == 0 && lws_partial_buffered(wsi) == 0
    }

    /// The one-frame path for a room on the service thread: `frame` is written to each connection that has
    /// nothing queued (and nothing for lws to write or settle first, as `writeAtWakeup` asks), there and
    /// then; the others get it queued behind what they have. A frame written here is ahead of anything
    /// queued for that connection later, as the service thread is the only writer.
    ///
    /// Only a connection's first frame of a turn is written this way: the rest of the turn's frames for it
    /// (a teacher's count after each answer) are queued, and leave together after the turn, in one write
    /// (`coalesceWrites`), as from any other thread.
    ///
    /// Why: going through the queue costs a frame a lane entry, a lock to queue it and one to take it,
    /// and the reference counting of each (a third of the server's user time per frame in a classroom's
    /// broadcasts; docs/performance.md, "Writing where a room sends").
    func writeAtSend(_ frame: OutboundFrame, to ids: [UInt64], queueing: (UInt64) -> Bool = { _ in false }) {
        writesAtSendLeft -= ids.count
        // With thousands of connections, each one's `Connection`, queue and lws structures are cache misses
        // by the time a room sends to it again, as in `serviceWakeups`. So the connections are looked up
        // first, each asked for as it is found, and then, while one is written, the queue and `wsi` of the
        // one two ahead are asked for, and lws's WebSocket part of the next one (whose address is in its
        // `wsi`, asked for the turn before). (The table keeps every connection alive for the call: nothing
        // here unregisters one.)
        for id in ids {
            if !queueing(id), let object = connections.unretained(id) {
                sc_prefetch(object.toOpaque(), Int32(Connection.linesReadByWrites))
                sendTargets.append(object)
            } else {
                deferredSends.append(id)
            }
        }
        defer { sendTargets.removeAll(keepingCapacity: true) }
        // (Borrowed, not retained: a retain is a write to each object, and the table keeps them alive.)
        var written = 0
        for index in sendTargets.indices {
            if index + 2 < sendTargets.count {
                sendTargets[index + 2]._withUnsafeGuaranteedRef { ahead in
                    if let queue = ahead.queue { sc_prefetch(Unmanaged.passUnretained(queue).toOpaque(), 2) }
                    sc_prefetch_wsi(ahead.wsi)
                }
            }
            if index + 1 < sendTargets.count {
                sendTargets[index + 1]._withUnsafeGuaranteedRef { next in sc_prefetch_wsi_ws(next.wsi) }
            }
            sendTargets[index]._withUnsafeGuaranteedRef { connection in
                guard connection.writtenAtSendInTurn != turn, let queue = connection.queue, canWriteAtOnce(connection),
                      queues.isIdle(queue) else {
                    deferredSends.append(connection.id)
                    return
                }
                if writeFrame(connection, frame) {
                    connection.writtenAtSendInTurn = turn
                    written += 1
                } else {
                    lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                }
            }
        }
        if written > 0 { metrics.writesAtSend.add(written, ordering: .relaxed) }
        guard !deferredSends.isEmpty else { return }
        let (woken, dropped) = queues.enqueue(frame, to: deferredSends)
        deferredSends.removeAll(keepingCapacity: true)
        if dropped > 0 { metrics.slowClientsDropped.add(dropped, ordering: .relaxed) }
        if woken { wake() }
    }

    /// Several frames, in order, as `writeAtSend` writes one; but a connection that more than one of them
    /// is for gets its frames queued, so that they leave together in one write (`coalesceWrites`), as
    /// they would from any other thread.
    func writeAtSend(_ batch: [(OutboundFrame, [UInt64])]) {
        guard batch.count > 1 else {
            if let (frame, ids) = batch.first { writeAtSend(frame, to: ids) }
            return
        }
        // Borrowed from the server for the call, so that its storage is kept from batch to batch.
        var counts: [UInt64: Int] = [:]
        swap(&counts, &framesPerConnection)
        defer {
            counts.removeAll(keepingCapacity: true)
            swap(&counts, &framesPerConnection)
        }
        for (_, ids) in batch {
            for id in ids { counts[id, default: 0] += 1 }
        }
        for (frame, ids) in batch { writeAtSend(frame, to: ids) { counts[$0, default: 0] > 1 } }
    }

    /// What one write of a connection's queue did.
    enum QueuedWrite {
        /// Frames went to lws (whole, or their rest buffered by lws); `more`: something is still queued.
        case written(more: Bool)
        case failed
        case close(status: UInt16, reason: String)
        case nothing
    }

    /// Takes what one write carries from the connection's queue and writes it: one frame as it is, several
    /// coalesced into one `send`.
    private func writeQueuedFrames(_ connection: Connection) -> QueuedWrite {
        guard let queue = connection.queue else { return .nothing }
        defer { writeBatch.removeAll(keepingCapacity: true) }
        // A limit of 0 takes exactly one frame (`take` always takes one).
        let maxBytes = configuration.coalesceWrites ? Self.coalescedWriteBytes : 0
        switch queues.take(from: queue, maxBytes: maxBytes, headerBytes: Self.frameHeaderBytes, into: &writeBatch) {
        case .frame(let frame, let more):
            return writeFrame(connection, frame) ? .written(more: more) : .failed
        case .frames(let more):
            let written = writeBatch.count == 1 ? writeFrame(connection, writeBatch[0]) : writeFrames(connection, writeBatch)
            return written ? .written(more: more) : .failed
        case .close(let status, let reason):
            return .close(status: status, reason: reason)
        case .nothing:
            return .nothing
        }
    }

    /// The most bytes of frames, headers included, one WRITEABLE callback writes in one go.
    static let coalescedWriteBytes = 16 * 1_024

    /// The header of an unmasked server frame of `length` payload bytes (RFC 6455, 5.2).
    static func frameHeaderBytes(_ length: Int) -> Int {
        length < 126 ? 2 : length < 65_536 ? 4 : 10
    }

    /// One frame: lws writes its header into the frame's headroom, nothing is copied. (A frame made before
    /// any server reserved its headroom has too little: it is copied behind enough, once per write.)
    private func writeFrame(_ connection: Connection, _ frame: OutboundFrame) -> Bool {
        guard frame.headroom >= Self.headroom else { return writeFrameCopied(connection, frame) }
        guard lws_write(connection.wsi, frame.payload, frame.count, LWS_WRITE_TEXT) >= frame.count else { return false }
        metrics.messagesSent.add(1, ordering: .relaxed)
        metrics.bytesSent.add(frame.count, ordering: .relaxed)
        return true
    }

    private func writeFrameCopied(_ connection: Connection, _ frame: OutboundFrame) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.headroom + max(frame.count, 1), alignment: 16)
        defer { buffer.deallocate() }
        let payload = (buffer.baseAddress! + Self.headroom).assumingMemoryBound(to: UInt8.self)
        payload.update(from: frame.payload, count: frame.count)
        guard lws_write(connection.wsi, payload, frame.count, LWS_WRITE_TEXT) >= frame.count else { return false }
        metrics.messagesSent.add(1, ordering: .relaxed)
        metrics.bytesSent.add(frame.count, ordering: .relaxed)
        return true
    }

    /// Several queued frames in one `send`: each framed here (FIN, text, unmasked length) and copied behind
    /// the other, then written as raw bytes. lws writes only one frame per `lws_write` with its own framing,
    /// so a connection with many frames waiting cost a system call (and a turn of the loop) each.
    ///
    /// Correct only because nothing between us and the socket changes the bytes of a message: the server
    /// negotiates no extension (no permessage-deflate, whose frames lws would have to compress and mark),
    /// and only whole frames are written here (lws is never left "inside a frame" by us). lws writes its own
    /// control frames (pongs, its close) between our writes, which RFC 6455 allows between messages; and
    /// it calls WRITEABLE only once a partial write it buffered has gone out, so order is kept.
    private func writeFrames(_ connection: Connection, _ frames: [OutboundFrame]) -> Bool {
        let start = writeBuffer.baseAddress! + Self.headroom
        var offset = 0
        var payloadBytes = 0
        for frame in frames {
            let length = frame.count
            start.storeBytes(of: 0x81, toByteOffset: offset, as: UInt8.self)  // FIN, text
            if length < 126 {
                start.storeBytes(of: UInt8(length), toByteOffset: offset + 1, as: UInt8.self)
                offset += 2
            } else if length < 65_536 {
                start.storeBytes(of: 126, toByteOffset: offset + 1, as: UInt8.self)
                start.storeBytes(of: UInt16(length).bigEndian, toByteOffset: offset + 2, as: UInt16.self)
                offset += 4
            } else {
                start.storeBytes(of: 127, toByteOffset: offset + 1, as: UInt8.self)
                start.storeBytes(of: UInt64(length).bigEndian, toByteOffset: offset + 2, as: UInt64.self)
                offset += 10
            }
            (start + offset).copyMemory(from: frame.payload, byteCount: length)
            offset += length
            payloadBytes += length
        }
        let bytes = start.assumingMemoryBound(to: UInt8.self)
        // LWS_WRITE_HTTP is LWS_WRITE_RAW (a macro Swift cannot see): the bytes go out as they are.
        guard lws_write(connection.wsi, bytes, offset, LWS_WRITE_HTTP) >= offset else { return false }
        metrics.messagesSent.add(frames.count, ordering: .relaxed)
        metrics.bytesSent.add(payloadBytes, ordering: .relaxed)
        metrics.framesCoalesced.add(frames.count, ordering: .relaxed)
        return true
    }
}
