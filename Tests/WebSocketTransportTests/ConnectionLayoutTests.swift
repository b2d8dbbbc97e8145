import Testing
@testable import WebSocketTransport

/// `writeAtSend` asks for the first two cache lines of each child's `Connection` before it reads them: what
/// it reads there must lie in those lines, or each child costs a cache miss per frame again.
@Suite("Connection layout")
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
        #expect(ends.allSatisfy { $0 > 0 && $0 <= 2 * 64 }, "ends at \(ends)")
    }
}
