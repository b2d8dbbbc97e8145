/// What rooms need from the transport: queue frames and close connections, from any thread. The real one is
/// `WebSocketServer` (in `WebSocketTransport`); tests use an in-memory transport that records what was sent.
public protocol MessageTransport: Sendable {
    func send(_ frame: OutboundFrame, to connections: [ConnectionHandle])
    /// Several frames, each for its connections, in this order: what `send` does for each pair, which is
    /// what the default does; `WebSocketServer` does it under one lock with at most one wake-up.
    func send(_ batch: [(OutboundFrame, [ConnectionHandle])])
    /// Closes `connection` with a WebSocket close status and reason, after what was queued for it.
    func close(_ connection: ConnectionHandle, status: UInt16, reason: String)
}

extension MessageTransport {
    public func send(_ batch: [(OutboundFrame, [ConnectionHandle])]) {
        for (frame, connections) in batch { send(frame, to: connections) }
    }
}
