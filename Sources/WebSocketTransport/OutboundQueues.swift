import Locking

/// The per-connection queues of frames waiting to be written, shared between the threads that send
/// (room actors) and the one service thread that writes.
///
/// Senders append under the lock and note the connection as needing a wake-up; the service thread, woken
/// by `lws_cancel_service()`, takes the wake-ups and asks lws for writable callbacks, then pops one frame
/// per callback. A queue that grows past its bounds is emptied and its connection marked to be killed:
/// a client that cannot keep up is dropped (it can rejoin), never allowed to grow memory without bound.
final class OutboundQueues: Sendable {
    /// What the service thread should do for a connection it was woken for.
    enum Wakeup: Equatable {
        case writable
        case kill
    }

    /// What to do in a WRITEABLE callback.
    enum Next {
        case frame(OutboundFrame, more: Bool)
        case close(status: UInt16, reason: String)
        case nothing
    }

    /// One connection's queue. The service thread keeps a reference to it so writing a frame needs no table
    /// lookup; `@unchecked Sendable` because its fields are read and written only while `state`'s lock is
    /// held (every method of `OutboundQueues` takes it first).
    final class Queue: @unchecked Sendable {
        var frames: [OutboundFrame] = []
        var head = 0
        var bytes = 0
        var close: (status: UInt16, reason: String)?
        var killed = false

        var pending: Int { frames.count - head }
    }

    private struct State {
        var queues: [UInt64: Queue] = [:]
        var wakeups: [UInt64: Wakeup] = [:]
        var responses: [UInt64: (sequence: UInt64, response: HTTPResponse)] = [:]
    }

    private let state = Locked(State())
    private let maxBytes: Int
    private let maxFrames: Int

    init(maxBytes: Int, maxFrames: Int) {
        self.maxBytes = maxBytes
        self.maxFrames = maxFrames
    }

    @discardableResult
    func open(_ connection: UInt64) -> Queue {
        let queue = Queue()
        state.withLock { $0.queues[connection] = queue }
        return queue
    }

    func remove(_ connection: UInt64) {
        state.withLock { state in
            state.queues[connection] = nil
            state.wakeups[connection] = nil
            state.responses[connection] = nil
        }
    }

    /// Queues `frame` for each open connection; returns how many were dropped for falling behind.
    func enqueue(_ frame: OutboundFrame, to connections: some Sequence<UInt64>) -> (woken: Bool, dropped: Int) {
        state.withLock { state in
            var woken = false
            var dropped = 0
            for connection in connections {
                guard let queue = state.queues[connection], !queue.killed, queue.close == nil else { continue }
                if queue.pending >= maxFrames || queue.bytes + frame.count > maxBytes {
                    queue.killed = true
                    queue.frames = []
                    queue.head = 0
                    queue.bytes = 0
                    state.wakeups[connection] = .kill
                    woken = true
                    dropped += 1
                    continue
                }
                queue.frames.append(frame)
                queue.bytes += frame.count
                if queue.pending == 1, state.wakeups[connection] == nil {
                    state.wakeups[connection] = .writable
                    woken = true
                }
            }
            return (woken, dropped)
        }
    }

    /// Closes the connection once everything already queued is written.
    func close(_ connection: UInt64, status: UInt16, reason: String) -> Bool {
        state.withLock { state in
            guard let queue = state.queues[connection], queue.close == nil, !queue.killed else { return false }
            queue.close = (status, reason)
            if state.wakeups[connection] == nil { state.wakeups[connection] = .writable }
            return true
        }
    }

    /// Asks every open connection to close (after what is queued): the goodbye of a shutdown.
    func closeAll(status: UInt16, reason: String) {
        state.withLock { state in
            for (connection, queue) in state.queues where queue.close == nil && !queue.killed {
                queue.close = (status, reason)
                if state.wakeups[connection] == nil { state.wakeups[connection] = .writable }
            }
        }
    }

    /// Whether any connection is still open (shutdown waits for the close handshakes).
    var hasOpenConnections: Bool {
        state.withLock { !$0.queues.isEmpty }
    }

    func respond(_ connection: UInt64, sequence: UInt64, with response: HTTPResponse) {
        state.withLock { state in
            state.responses[connection] = (sequence, response)
            if state.wakeups[connection] == nil { state.wakeups[connection] = .writable }
        }
    }

    func takeWakeups() -> [UInt64: Wakeup] {
        state.withLock { state in
            defer { state.wakeups = [:] }
            return state.wakeups
        }
    }

    func takeResponse(_ connection: UInt64) -> (sequence: UInt64, response: HTTPResponse)? {
        state.withLock { $0.responses.removeValue(forKey: connection) }
    }

    func next(for connection: UInt64) -> Next {
        state.withLock { state in
            guard let queue = state.queues[connection] else { return .nothing }
            return Self.pop(queue)
        }
    }

    /// The next thing to write for a queue the caller holds (the service thread's fast path).
    func next(from queue: Queue) -> Next {
        state.withLock { _ in Self.pop(queue) }
    }

    private static func pop(_ queue: Queue) -> Next {
        guard !queue.killed else { return .nothing }
        if queue.head < queue.frames.count {
            let frame = queue.frames[queue.head]
            queue.head += 1
            queue.bytes -= frame.count
            if queue.head == queue.frames.count {
                queue.frames.removeAll(keepingCapacity: queue.frames.count <= 64)
                queue.head = 0
            } else if queue.head >= 64, queue.head * 2 >= queue.frames.count {
                queue.frames.removeFirst(queue.head)
                queue.head = 0
            }
            return .frame(frame, more: queue.pending > 0 || queue.close != nil)
        }
        if let close = queue.close { return .close(status: close.status, reason: close.reason) }
        return .nothing
    }
}
