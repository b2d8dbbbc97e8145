/// How the transport names one connection (a WebSocket, or the HTTP connection a request came on) to the
/// application: in its events, and back in `send`, `close` and `respond`. Handed out in increasing order and
/// never reused in a process, so a room still sending to a connection that has closed reaches nobody
/// rather than its successor.
///
/// A plain integer, not a wrapper: rooms keep thousands of them in the arrays they send to, and the core
/// names the same value `ConnectionID` without depending on the transport.
public typealias ConnectionHandle = UInt64
