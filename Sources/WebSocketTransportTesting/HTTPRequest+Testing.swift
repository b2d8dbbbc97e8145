import TransportCore

extension HTTPRequest {
    /// A request not tied to a connection, for tests of handlers (and the HTTP API fuzzer): its id answers
    /// no connection, so it is only for handlers called directly, never for `WebSocketServer.respond`.
    public static func testRequest(method: HTTPMethod, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = [], peer: String = "127.0.0.1") -> HTTPRequest {
        HTTPRequest(id: ID(connection: 0, sequence: 0), method: method, path: path, query: query, headers: headers, body: body, peer: peer)
    }
}
