import CLibWebSockets

/// One outgoing WebSocket text message, encoded once and shared by every connection it goes to.
///
/// The payload sits after `LWS_PRE` bytes of headroom, where `lws_write` puts the frame header, so a
/// broadcast to 2,000 children copies nothing. It is `@unchecked Sendable` because the payload is never
/// changed after `init`, and the headroom is written only by the one service thread, one write at a time
/// (every write of the same payload writes the same header bytes).
public final class OutboundFrame: @unchecked Sendable {
    let storage: UnsafeMutableRawBufferPointer
    public let count: Int

    static let headroom = sc_lws_pre()

    /// Copies `bytes` after the headroom. Callers in other modules reach this unspecialised (the generic
    /// copy went byte by byte through witness tables, most of a reveal's cost), so contiguous storage
    /// is copied with one `memcpy` and only other collections take the element-wise path.
    public init(_ bytes: some Collection<UInt8>) {
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

    public convenience init(text: String) {
        self.init(Array(text.utf8))
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
