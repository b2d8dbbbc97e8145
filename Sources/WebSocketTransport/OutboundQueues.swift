import Locking
import TransportCore

/// The per-connection queues of frames waiting to be written, shared between the threads that send
/// (room actors) and the one service thread that writes.
///
/// Senders append under the lock and note the connection as needing a wake-up; the service thread, woken
/// by `lws_cancel_service()`, takes the wake-ups and asks lws for writable callbacks, then pops one frame
/// per callback. A queue that grows past its bounds is emptied and its connection marked to be killed:
/// a client that cannot keep up is dropped (it can rejoin), never allowed to grow memory without bound.
/// (A room on the service thread itself writes a connection's first frame of a turn without queueing it
/// when the connection's queue is empty: `WebSocketServer.writeAtSend`.)
///
/// One wake-up serves every connection noted until the service thread takes them: a method says to wake
/// the loop only when it made the set of wake-ups non-empty. Whoever did has a `lws_cancel_service()`
/// still to come (it calls it after the lock), and the service thread empties the set only when woken, so
/// a wake-up noted later is either taken with those or makes the set non-empty again. A reveal to 2,000
/// children is then one or a few wake-ups, not 2,000 (each a `write` to lws's pipe and a turn of the loop).
package final class OutboundQueues: Sendable {
    /// What the service thread should do for a connection it was woken for.
    package enum Wakeup: Equatable {
        case writable
        case kill
    }

    /// What to do in a WRITEABLE callback.
    package enum Next {
        case frame(OutboundFrame, more: Bool)
        case close(status: UInt16, reason: String)
        case nothing
    }

    /// What to do in a WRITEABLE callback that can write several frames at once (`take`).
    enum Taken {
        /// Frames were taken; `more`: something is still queued (frames or the close).
        case frames(more: Bool)
        /// The one frame queued was taken (not put in `frames`).
        case frame(OutboundFrame, more: Bool)
        case close(status: UInt16, reason: String)
        case nothing
    }

    /// One connection's queue. The service thread keeps a reference to it so writing a frame needs no table
    /// lookup, and a wake-up is noted on the queue itself: a frame to a connection costs no hashing
    /// on either side (each table lookup was a few cache misses per frame, with thousands of connections).
    /// `@unchecked Sendable` because its fields are read and written only while `state`'s lock is held
    /// (every method of `OutboundQueues` takes it first), except `connection` and `memory`, which only the service
    /// thread touches.
    package final class Queue: @unchecked Sendable {
        let id: UInt64
        /// The frame queued when nothing else was: the classroom's usual case, kept out of `frames` so
        /// queueing and taking it touch no array (whose storage is one more cache miss per frame). When a
        /// frame joins it, it moves to the front of `frames`, so it is always the oldest.
        var lone: OutboundFrame?
        var frames: [OutboundFrame] = []
        var head = 0
        var bytes = 0
        var close: (status: UInt16, reason: String)?
        var killed = false
        /// Noted for the service thread (in a lane) and not yet taken; whether it waits in the reply lane.
        var noted: Wakeup?
        var notedReply = false
        /// The service thread's connection for this queue, from registration to unregistration.
        var connection: Connection? {
            didSet {
                memory = connection.map { (UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()), UnsafeRawPointer($0.wsi)) }
            }
        }
        /// Where `connection` and its lws connection live: what the service thread prefetches before it comes
        /// to this queue (`serviceWakeups`), read without touching (or retaining) either.
        private(set) var memory: (connection: UnsafeRawPointer, wsi: UnsafeRawPointer)?

        init(id: UInt64) { self.id = id }

        var pending: Int { (lone == nil ? 0 : 1) + frames.count - head }
    }

    /// What `takeWakeups` hands the service thread: connections in the order to ask for their callbacks.
    package struct Wakeups {
        package struct Entry {
            package var connection: UInt64
            package var wakeup: Wakeup
            /// The WebSocket's queue; nil for an HTTP connection's response.
            package var queue: Queue?
        }
        package var taken: [Entry] = []
        /// Some were left for the next turn (the limit): the service thread must wake itself again.
        package var more = false
    }

    /// A connection in a lane: a WebSocket's queue, or an HTTP connection with a response waiting.
    private enum Noted {
        case queue(Queue)
        case http(UInt64)
    }

    private struct State {
        var queues: [UInt64: Queue] = [:]
        /// HTTP connections with a response noted since the service thread last looked (they have no queue).
        var httpNoted: Set<UInt64> = []
        /// How many connections are noted (queues whose `noted` is set, and `httpNoted`).
        var noted = 0
        /// The order it looks in: the reply lane first (a reply, a kill, an HTTP response), then the rest in
        /// the order they came. An entry taken or removed since is skipped there.
        var replyLane: [Noted] = []
        var otherLane: [Noted] = []
        /// Where the other lane starts: it is taken from the front, a turn's worth at a time.
        var otherHead = 0
        var responses: [UInt64: (sequence: UInt64, response: HTTPResponse)] = [:]

        /// Notes that `queue` wants writing; true if nothing was noted (the caller must wake the loop).
        /// A queue already noted for other frames moves up when a reply joins it.
        mutating func wantsWriting(_ queue: Queue, reply: Bool = false) -> Bool {
            if queue.noted != nil {
                if reply, !queue.notedReply {
                    queue.notedReply = true
                    replyLane.append(.queue(queue))
                }
                return false
            }
            queue.noted = .writable
            queue.notedReply = reply
            if reply { replyLane.append(.queue(queue)) } else { otherLane.append(.queue(queue)) }
            noted += 1
            return noted == 1
        }

        /// Notes that an HTTP connection has its response; true if nothing was noted.
        mutating func wantsResponding(_ connection: UInt64) -> Bool {
            guard httpNoted.insert(connection).inserted else { return false }
            replyLane.append(.http(connection))
            noted += 1
            return noted == 1
        }

        /// Notes that `queue`'s connection is to be killed; true if nothing was noted.
        mutating func wantsKilling(_ queue: Queue) -> Bool {
            let wasEmpty = noted == 0
            if queue.noted == nil { noted += 1 }
            if !queue.notedReply { replyLane.append(.queue(queue)) }
            queue.noted = .kill
            queue.notedReply = true
            return wasEmpty
        }

        /// Takes one lane entry: what the service thread must do for it, or nil if it was taken or removed.
        mutating func take(_ entry: Noted) -> Wakeups.Entry? {
            switch entry {
            case .queue(let queue):
                guard let wakeup = queue.noted else { return nil }
                queue.noted = nil
                queue.notedReply = false
                noted -= 1
                return Wakeups.Entry(connection: queue.id, wakeup: wakeup, queue: queue)
            case .http(let connection):
                guard httpNoted.remove(connection) != nil else { return nil }
                noted -= 1
                return Wakeups.Entry(connection: connection, wakeup: .writable, queue: nil)
            }
        }

        /// Appends `frame` to each open queue of `connections`, or kills the queues it would overflow.
        mutating func append(_ frame: OutboundFrame, to connections: [UInt64], maxFrames: Int, maxBytes: Int, woken: inout Bool, dropped: inout Int) {
            let reply = frame.priority == .reply
            for connection in connections {
                guard let queue = queues[connection], !queue.killed, queue.close == nil else { continue }
                if queue.pending >= maxFrames || queue.bytes + frame.count > maxBytes {
                    queue.killed = true
                    queue.lone = nil
                    queue.frames = []
                    queue.head = 0
                    queue.bytes = 0
                    if wantsKilling(queue) { woken = true }
                    dropped += 1
                    continue
                }
                if queue.pending == 0 {
                    queue.lone = frame
                } else {
                    if let lone = queue.lone {
                        queue.lone = nil
                        queue.frames.append(lone)
                    }
                    queue.frames.append(frame)
                }
                queue.bytes += frame.count
                if queue.pending == 1 || reply, wantsWriting(queue, reply: reply) { woken = true }
            }
        }
    }

    private let state = Locked(State())
    private let maxBytes: Int
    private let maxFrames: Int

    package init(maxBytes: Int, maxFrames: Int) {
        self.maxBytes = maxBytes
        self.maxFrames = maxFrames
    }

    @discardableResult
    package func open(_ connection: UInt64) -> Queue {
        let queue = Queue(id: connection)
        state.withLock { $0.queues[connection] = queue }
        return queue
    }

    package func remove(_ connection: UInt64) {
        state.withLock { state in
            if let queue = state.queues.removeValue(forKey: connection), queue.noted != nil {
                // Its lane entries stay until the lane is taken or emptied; they are skipped there.
                queue.noted = nil
                queue.notedReply = false
                state.noted -= 1
            }
            if state.httpNoted.remove(connection) != nil { state.noted -= 1 }
            state.responses[connection] = nil
            if state.noted == 0 {
                state.replyLane.removeAll(keepingCapacity: true)
                state.otherLane.removeAll(keepingCapacity: true)
                state.otherHead = 0
            }
        }
    }

    /// Queues `frame` for each open connection. `woken`: the caller must wake the loop; `dropped`: how many
    /// connections were dropped for falling behind.
    package func enqueue(_ frame: OutboundFrame, to connections: [UInt64]) -> (woken: Bool, dropped: Int) {
        state.withLock { state in
            var woken = false
            var dropped = 0
            state.append(frame, to: connections, maxFrames: maxFrames, maxBytes: maxBytes, woken: &woken, dropped: &dropped)
            return (woken, dropped)
        }
    }

    /// Queues several frames, each for its connections, in order, under one lock: as `enqueue` for each.
    func enqueue(_ batch: [(OutboundFrame, [UInt64])]) -> (woken: Bool, dropped: Int) {
        state.withLock { state in
            var woken = false
            var dropped = 0
            for (frame, connections) in batch {
                state.append(frame, to: connections, maxFrames: maxFrames, maxBytes: maxBytes, woken: &woken, dropped: &dropped)
            }
            return (woken, dropped)
        }
    }

    /// Closes the connection once everything already queued is written. True if the caller must wake the
    /// loop.
    package func close(_ connection: UInt64, status: UInt16, reason: String) -> Bool {
        state.withLock { state in
            guard let queue = state.queues[connection], queue.close == nil, !queue.killed else { return false }
            queue.close = (status, reason)
            return state.wantsWriting(queue)
        }
    }

    /// Asks every open connection to close (after what is queued): the goodbye of a shutdown. (Its caller
    /// wakes the loop regardless.)
    func closeAll(status: UInt16, reason: String) {
        state.withLock { state in
            for queue in state.queues.values where queue.close == nil && !queue.killed {
                queue.close = (status, reason)
                _ = state.wantsWriting(queue)
            }
        }
    }

    /// Whether any connection is still open (shutdown waits for the close handshakes).
    var hasOpenConnections: Bool {
        state.withLock { !$0.queues.isEmpty }
    }

    /// True if the caller must wake the loop.
    func respond(_ connection: UInt64, sequence: UInt64, with response: HTTPResponse) -> Bool {
        state.withLock { state in
            state.responses[connection] = (sequence, response)
            return state.wantsResponding(connection)
        }
    }

    /// Takes what was noted, the reply lane first, and at most `limit` connections of the other lane (the
    /// rest wait, in order, for the next call). Bounding a turn's writes is what lets a reply overtake a
    /// reveal to 10,000 children queued just before it: it waits for one turn's worth, not for all of them.
    package func takeWakeups(limit: Int = .max) -> Wakeups {
        state.withLock { state in
            var result = Wakeups()
            for entry in state.replyLane {
                if let taken = state.take(entry) { result.taken.append(taken) }
            }
            state.replyLane.removeAll(keepingCapacity: true)
            var others = 0
            while others < limit, state.otherHead < state.otherLane.count {
                let entry = state.otherLane[state.otherHead]
                state.otherHead += 1
                guard let taken = state.take(entry) else { continue }
                result.taken.append(taken)
                others += 1
            }
            if state.otherHead == state.otherLane.count {
                state.otherLane.removeAll(keepingCapacity: true)
                state.otherHead = 0
            } else if state.otherHead >= 4_096 {
                state.otherLane.removeFirst(state.otherHead)
                state.otherHead = 0
            }
            result.more = state.noted > 0
            return result
        }
    }

    func takeResponse(_ connection: UInt64) -> (sequence: UInt64, response: HTTPResponse)? {
        state.withLock { $0.responses.removeValue(forKey: connection) }
    }

    package func next(for connection: UInt64) -> Next {
        state.withLock { state in
            guard let queue = state.queues[connection] else { return .nothing }
            return Self.pop(queue)
        }
    }

    /// Whether `queue` is open with nothing queued: a frame for it can be written at once.
    func isIdle(_ queue: Queue) -> Bool {
        state.withLock { _ in !queue.killed && queue.close == nil && queue.pending == 0 }
    }

    /// The next thing to write for a queue the caller holds (the service thread's fast path).
    func next(from queue: Queue) -> Next {
        state.withLock { _ in Self.pop(queue) }
    }

    /// Takes the queued frames that fit in one write of `maxBytes` (each frame with `headerBytes` of its
    /// header; always at least one frame), appending them to `frames`: one lock for the whole burst. A
    /// frame queued alone is returned as it is (`.frame`).
    func take(from queue: Queue, maxBytes: Int, headerBytes: (Int) -> Int, into frames: inout [OutboundFrame]) -> Taken {
        state.withLock { _ in
            guard !queue.killed else { return .nothing }
            if let lone = queue.lone {
                queue.lone = nil
                queue.bytes -= lone.count
                return .frame(lone, more: queue.close != nil)
            }
            var bytes = 0
            var end = queue.head
            while end < queue.frames.count {
                let frame = queue.frames[end]
                let size = headerBytes(frame.count) + frame.count
                if end > queue.head, bytes + size > maxBytes { break }
                frames.append(frame)
                bytes += size
                queue.bytes -= frame.count
                end += 1
            }
            guard end > queue.head else {
                if let close = queue.close { return .close(status: close.status, reason: close.reason) }
                return .nothing
            }
            queue.head = end
            Self.compact(queue)
            return .frames(more: queue.pending > 0 || queue.close != nil)
        }
    }

    /// Drops the frames before `head` once they are many, or all of them.
    private static func compact(_ queue: Queue) {
        if queue.head == queue.frames.count {
            // Not kept: an empty array is the shared empty storage, so `pending` reads no buffer of this
            // queue's (a burst's buffer is allocated again at the next burst).
            queue.frames.removeAll()
            queue.head = 0
        } else if queue.head >= 64, queue.head * 2 >= queue.frames.count {
            queue.frames.removeFirst(queue.head)
            queue.head = 0
        }
    }

    private static func pop(_ queue: Queue) -> Next {
        guard !queue.killed else { return .nothing }
        if let lone = queue.lone {
            queue.lone = nil
            queue.bytes -= lone.count
            return .frame(lone, more: queue.close != nil)
        }
        if queue.head < queue.frames.count {
            let frame = queue.frames[queue.head]
            queue.head += 1
            queue.bytes -= frame.count
            compact(queue)
            return .frame(frame, more: queue.pending > 0 || queue.close != nil)
        }
        if let close = queue.close { return .close(status: close.status, reason: close.reason) }
        return .nothing
    }
}
