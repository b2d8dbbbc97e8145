import WebSocketTransport

/// What rooms need from the transport: queue frames and close connections, from any thread. The real one is
/// `WebSocketServer`; tests use an in-memory transport that records what was sent.
public protocol MessageTransport: Sendable {
    func send(_ frame: OutboundFrame, to connections: [UInt64])
    /// Several frames, each for its connections, in this order: what `send` does for each pair, which is
    /// what the default does; `WebSocketServer` does it under one lock with at most one wake-up.
    func send(_ batch: [(OutboundFrame, [UInt64])])
    func close(_ connection: UInt64, status: UInt16, reason: String)
}

extension MessageTransport {
    public func send(_ batch: [(OutboundFrame, [UInt64])]) {
        for (frame, connections) in batch { send(frame, to: connections) }
    }
}

extension WebSocketServer: MessageTransport {}
