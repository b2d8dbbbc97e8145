import WebSocketTransport

/// What rooms need from the transport: queue frames and close connections, from any thread. The real one is
/// `WebSocketServer`; tests use an in-memory transport that records what was sent.
public protocol MessageTransport: Sendable {
    func send(_ frame: OutboundFrame, to connections: [UInt64])
    func close(_ connection: UInt64, status: UInt16, reason: String)
}

extension WebSocketServer: MessageTransport {}
