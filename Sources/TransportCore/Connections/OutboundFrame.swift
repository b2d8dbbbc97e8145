import Synchronization

/// One outgoing WebSocket text message, encoded once and shared by every connection it goes to.
///
/// The payload sits after `headroom` bytes that the transport may write into: libwebsockets puts the
/// frame header there (`LWS_PRE` bytes), so a broadcast to 2,000 children copies nothing. How much headroom
/// a transport needs is the transport's to say: it reserves it (`reserveHeadroom`) before it starts, and
/// every frame made from then on has it. The rooms that make frames never see the number.
///
/// It is `@unchecked Sendable` because the payload is never changed after `init`, and the headroom is
/// written only by the one thread that writes to the sockets, one write at a time (every write of the same
/// payload writes the same header bytes).
public final class OutboundFrame: @unchecked Sendable {
    /// Which connections the service thread serves first when many wait to be written.
    public enum Priority: Sendable {
        /// News for many (a question, a reveal, a scoreboard): served in the order queued, a bounded number
        /// of connections per turn of the loop.
        case normal
        /// The answer to what this one client just sent (its answer's `answer.ack`, its `welcome`, an
        /// error, a pong): its connection goes ahead of those waiting with news, so a child's tap is
        /// acknowledged in milliseconds even while a reveal to thousands is being written. Order within a
        /// connection never changes.
        case reply
    }

    // What a write reads comes first.
    private let storage: UnsafeMutableRawBufferPointer
    /// The bytes before the payload: what was reserved when the frame was made. A frame made before its
    /// transport reserved any has less than it needs; the transport then copies it (see `reserveHeadroom`).
    public let headroom: Int
    public let count: Int
    public let priority: Priority

    /// Copies `bytes` after the headroom. Callers in other modules reach this unspecialised (the generic
    /// copy went byte by byte through witness tables, most of a reveal's cost), so contiguous storage
    /// is copied with one `memcpy` and only other collections take the element-wise path.
    public convenience init(_ bytes: some Collection<UInt8>, priority: Priority = .normal) {
        self.init(bytes, priority: priority, headroom: Self.reserved.load(ordering: .relaxed))
    }

    /// A frame with exactly `headroom` bytes before its payload, whatever was reserved: for tests of the
    /// transport's writer.
    package init(_ bytes: some Collection<UInt8>, priority: Priority = .normal, headroom: Int) {
        self.priority = priority
        count = bytes.count
        self.headroom = headroom
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: headroom + max(count, 1), alignment: 16)
        let payload = UnsafeMutableRawBufferPointer(rebasing: storage[headroom...])
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            payload.copyMemory(from: UnsafeRawBufferPointer(source))
        }
        if copied == nil {
            _ = payload.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    public convenience init(text: String, priority: Priority = .normal) {
        self.init(Array(text.utf8), priority: priority)
    }

    deinit {
        storage.deallocate()
    }

    /// The payload, for tests and logging.
    public var bytes: [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: storage[headroom..<(headroom + count)]))
    }

    /// The payload, with `headroom` writable bytes before it: for the transport's writer only.
    package var payload: UnsafeMutablePointer<UInt8> {
        (storage.baseAddress! + headroom).assumingMemoryBound(to: UInt8.self)
    }

    // MARK: - The headroom, reserved by the transport

    /// What the process's transports reserved: a process-wide value, as the C library that needs it is
    /// linked once per process (libwebsockets' `LWS_PRE` is a constant of the library).
    private static let reserved = Atomic<Int>(0)

    /// Makes every frame made from now on carry at least `bytes` of headroom. A transport calls it once,
    /// when it is made (before it starts and before rooms send through it); it never lowers what another
    /// asked for. Frames made earlier keep what they had.
    public static func reserveHeadroom(_ bytes: Int) {
        var current = reserved.load(ordering: .relaxed)
        while current < bytes {
            let (exchanged, original) = reserved.compareExchange(expected: current, desired: bytes, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// The headroom frames are made with now.
    public static var reservedHeadroom: Int { reserved.load(ordering: .relaxed) }
}
