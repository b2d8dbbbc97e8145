import Locking

/// The per-connection queues of frames waiting to be written, shared between the threads that send
/// (room actors) and the one service thread that writes.
///
/// Senders append under the lock and note the connection as needing a wake-up; the service thread, woken
/// by `lws_cancel_service()`, takes the wake-ups and asks lws for writable callbacks, then pops one frame
/// per callback. A queue that grows past its bounds is emptied and its connection marked to be killed:
/// a client that cannot keep up is dropped (it can rejoin), never allowed to grow memory without bound.
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
        case close(status: UInt16, reason: String)
        case nothing
    }

    /// One connection's queue. The service thread keeps a reference to it so writing a frame needs no table
    /// lookup; `@unchecked Sendable` because its fields are read and written only while `state`'s lock is
    /// held (every method of `OutboundQueues` takes it first).
    package final class Queue: @unchecked Sendable {
        var frames: [OutboundFrame] = []
        var head = 0
        var bytes = 0
        var close: (status: UInt16, reason: String)?
        var killed = false

        var pending: Int { frames.count - head }
    }

    /// What `takeWakeups` hands the service thread: connections in the order to ask for their callbacks.
    package struct Wakeups {
        package var taken: [(connection: UInt64, wakeup: Wakeup)] = []
        /// Some were left for the next turn (the limit): the service thread must wake itself again.
        package var more = false
    }

    private struct State {
        var queues: [UInt64: Queue] = [:]
        /// Connections noted since the service thread last looked, and whether each waits in the reply lane.
        var wakeups: [UInt64: (wakeup: Wakeup, reply: Bool)] = [:]
        /// The order it looks in: the reply lane first (a reply, a kill, an HTTP response), then the rest in
        /// the order they came. An id whose entry was taken or removed is skipped there.
        var replyLane: [UInt64] = []
        var otherLane: [UInt64] = []
        /// Where the other lane starts: it is taken from the front, a turn's worth at a time.
        var otherHead = 0
        var responses: [UInt64: (sequence: UInt64, response: HTTPResponse)] = [:]

        /// Notes that `connection` wants writing; true if the set was empty (the caller must wake the loop).
        /// A connection already noted for other frames moves up when a reply joins its queue.
        mutating func wantsWriting(_ connection: UInt64, reply: Bool = false) -> Bool {
            if let noted = wakeups[connection] {
                if reply, !noted.reply {
                    wakeups[connection] = (noted.wakeup, true)
                    replyLane.append(connection)
                }
                return false
            }
            wakeups[connection] = (.writable, reply)
            if reply { replyLane.append(connection) } else { otherLane.append(connection) }
            return wakeups.count == 1
        }

        /// Notes that `connection` is to be killed; true if the set was empty.
        mutating func wantsKilling(_ connection: UInt64) -> Bool {
            let wasEmpty = wakeups.isEmpty
            if wakeups[connection]?.reply != true { replyLane.append(connection) }
            wakeups[connection] = (.kill, true)
            return wasEmpty
        }

        /// Appends `frame` to each open queue of `connections`, or kills the queues it would overflow.
        mutating func append(_ frame: OutboundFrame, to connections: [UInt64], maxFrames: Int, maxBytes: Int, woken: inout Bool, dropped: inout Int) {
            let reply = frame.priority == .reply
            for connection in connections {
                guard let queue = queues[connection], !queue.killed, queue.close == nil else { continue }
                if queue.pending >= maxFrames || queue.bytes + frame.count > maxBytes {
                    queue.killed = true
                    queue.frames = []
                    queue.head = 0
                    queue.bytes = 0
                    if wantsKilling(connection) { woken = true }
                    dropped += 1
                    continue
                }
                queue.frames.append(frame)
                queue.bytes += frame.count
                if queue.pending == 1 || reply, wantsWriting(connection, reply: reply) { woken = true }
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
        let queue = Queue()
        state.withLock { $0.queues[connection] = queue }
        return queue
    }

    package func remove(_ connection: UInt64) {
        state.withLock { state in
            state.queues[connection] = nil
            state.wakeups[connection] = nil
            state.responses[connection] = nil
            if state.wakeups.isEmpty {
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
            return state.wantsWriting(connection)
        }
    }

    /// Asks every open connection to close (after what is queued): the goodbye of a shutdown. (Its caller
    /// wakes the loop regardless.)
    func closeAll(status: UInt16, reason: String) {
        state.withLock { state in
            for (connection, queue) in state.queues where queue.close == nil && !queue.killed {
                queue.close = (status, reason)
                _ = state.wantsWriting(connection)
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
            return state.wantsWriting(connection, reply: true)
        }
    }

    /// Takes what was noted, the reply lane first, and at most `limit` connections of the other lane (the
    /// rest wait, in order, for the next call). Bounding a turn's writes is what lets a reply overtake a
    /// reveal to 10,000 children queued just before it: it waits for one turn's worth, not for all of them.
    package func takeWakeups(limit: Int = .max) -> Wakeups {
        state.withLock { state in
            var result = Wakeups()
            for connection in state.replyLane {
                if let noted = state.wakeups.removeValue(forKey: connection) { result.taken.append((connection, noted.wakeup)) }
            }
            state.replyLane.removeAll(keepingCapacity: true)
            var others = 0
            while others < limit, state.otherHead < state.otherLane.count {
                let connection = state.otherLane[state.otherHead]
                state.otherHead += 1
                guard let noted = state.wakeups.removeValue(forKey: connection) else { continue }
                result.taken.append((connection, noted.wakeup))
                others += 1
            }
            if state.otherHead == state.otherLane.count {
                state.otherLane.removeAll(keepingCapacity: true)
                state.otherHead = 0
            } else if state.otherHead >= 4_096 {
                state.otherLane.removeFirst(state.otherHead)
                state.otherHead = 0
            }
            result.more = !state.wakeups.isEmpty
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

    /// The next thing to write for a queue the caller holds (the service thread's fast path).
    func next(from queue: Queue) -> Next {
        state.withLock { _ in Self.pop(queue) }
    }

    /// Takes the queued frames that fit in one write of `maxBytes` (each frame with `headerBytes` of its
    /// header; always at least one frame), appending them to `frames`: one lock for the whole burst.
    func take(from queue: Queue, maxBytes: Int, headerBytes: (Int) -> Int, into frames: inout [OutboundFrame]) -> Taken {
        state.withLock { _ in
            guard !queue.killed else { return .nothing }
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
            queue.frames.removeAll(keepingCapacity: queue.frames.count <= 64)
            queue.head = 0
        } else if queue.head >= 64, queue.head * 2 >= queue.frames.count {
            queue.frames.removeFirst(queue.head)
            queue.head = 0
        }
    }

    private static func pop(_ queue: Queue) -> Next {
        guard !queue.killed else { return .nothing }
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
