import CLibWebSockets

/// One outgoing WebSocket text message, encoded once and shared by every connection it goes to.
///
/// The payload sits after `LWS_PRE` bytes of headroom, where `lws_write` puts the frame header, so a
/// broadcast to 2,000 children copies nothing. It is `@unchecked Sendable` because the payload is never
/// changed after `init`, and the headroom is written only by the one service thread, one write at a time
/// (every write of the same payload writes the same header bytes).
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

    let storage: UnsafeMutableRawBufferPointer
    public let count: Int
    public let priority: Priority

    static let headroom = sc_lws_pre()

    /// Copies `bytes` after the headroom. Callers in other modules reach this unspecialised (the generic
    /// copy went byte by byte through witness tables, most of a reveal's cost), so contiguous storage
    /// is copied with one `memcpy` and only other collections take the element-wise path.
    public init(_ bytes: some Collection<UInt8>, priority: Priority = .normal) {
        self.priority = priority
        count = bytes.count
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.headroom + max(count, 1), alignment: 16)
        let payload = UnsafeMutableRawBufferPointer(rebasing: storage[Self.headroom...])
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
        Array(UnsafeRawBufferPointer(rebasing: storage[Self.headroom..<(Self.headroom + count)]))
    }

    package var payload: UnsafeMutablePointer<UInt8> {
        (storage.baseAddress! + Self.headroom).assumingMemoryBound(to: UInt8.self)
    }
}
