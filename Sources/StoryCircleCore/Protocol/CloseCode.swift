/// How a WebSocket ends: the status of the close frame (RFC 6455, section 7.4.1, and two of our own in the
/// application range). Every close the server sends is one of these, named here once: a refusal's close
/// follows from its code (`ErrorCode.closeCode`), and the pages' table (`web-static/js/close-codes.js`) is
/// generated from this one (`GeneratedTables`). The transport takes the number from its callers.
public enum CloseCode: UInt16, Sendable, CaseIterable {
    /// The page's own close, or a goodbye.
    case normal = 1000
    /// The server is stopping, or took the room out of memory: a page reconnects and learns where it is.
    case goingAway = 1001
    /// Not a WebSocket (libwebsockets closes such a peer by itself).
    case protocolError = 1002
    /// A binary frame: the server speaks JSON text only.
    case unsupportedData = 1003
    /// Never sent: what a page sees when no close frame came (a dropped network, or an upgrade refused with
    /// HTTP 429 or 503).
    case abnormal = 1006
    /// Text that is not UTF-8 (libwebsockets closes such a peer by itself).
    case invalidData = 1007
    /// A refused hello or a flood; the reason is the error code.
    case policy = 1008
    /// A message over the size limit.
    case tooBig = 1009
    /// The room is moving to another node: reconnect shortly.
    case serviceRestart = 1012
    /// The join could not be stored yet (`storage_unavailable`): reconnect after a pause.
    case tryAgainLater = 1013
    /// The teacher removed this child.
    case kicked = 4001
    /// The same child opened the room in another window.
    case replaced = 4002
}
