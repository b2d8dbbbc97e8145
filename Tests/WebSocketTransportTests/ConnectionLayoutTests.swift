import CLibWebSockets
import Testing
@testable import WebSocketTransport

/// `writeAtSend` asks for each child's memory before it reads it: the first cache lines of its
/// `Connection` (`linesReadByWrites`), and the lines of lws's structures that a write reads. What it reads
/// must lie there, or each child costs cache misses per frame again.
@Suite("Connection layout", .serialized)
struct ConnectionLayoutTests {
    @Test func whatARoomsSendReadsLiesInTheLinesAskedForAhead() {
        let connection = Connection(id: 1, wsi: OpaquePointer(bitPattern: 0x1000)!, kind: .webSocket, peer: "127.0.0.1", state: .inert)
        let start = Int(bitPattern: Unmanaged.passUnretained(connection).toOpaque())
        /// Where a stored property ends, counted from the object's start.
        func end<Value>(_ field: UnsafeMutablePointer<Value>) -> Int {
            Int(bitPattern: field) + MemoryLayout<Value>.size - start
        }
        let ends = [
            withUnsafeMutablePointer(to: &connection.queue, end),
            withUnsafeMutablePointer(to: &connection.writtenAtSendInTurn, end),
            withUnsafeMutablePointer(to: &connection.pingDue, end),
            withUnsafeMutablePointer(to: &connection.closeFrameSent, end),
            withUnsafeMutablePointer(to: &connection.peerSentClose, end),
            withUnsafeMutablePointer(to: &connection.state, end),
        ]
        #expect(ends.allSatisfy { $0 > 0 && $0 <= Connection.linesReadByWrites * 64 }, "ends at \(ends)")
    }

    /// The offsets `sc_prefetch_wsi` asks for are those of the libwebsockets it is built against (4.1.6,
    /// Debian 12's): checked on a real connection against lws's own accessors. With another version the shim
    /// falls back to the first lines and says it does not know the layout.
    @Test func theLwsLinesAskedForAreWhereThisLibraryKeepsThem() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let (socket, id) = try await SendingTests.open(1, on: harness)[0]
        defer { withExtendedLifetime(socket) {} }
        let server = harness.server
        let matches: Int32? = await withCheckedContinuation { continuation in
            server.loopExecutor.execute { continuation.resume(returning: server.connections[id].map { sc_lws_layout_matches($0.wsi) }) }
        }
        let known = LWS_LIBRARY_VERSION_MAJOR == 4 && LWS_LIBRARY_VERSION_MINOR == 1 && LWS_LIBRARY_VERSION_PATCH == 6
        #expect(matches == (known ? 1 : -1))
    }
}
