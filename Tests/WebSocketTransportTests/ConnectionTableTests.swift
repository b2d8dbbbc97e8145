import Testing
@testable import WebSocketTransport

/// The table's ownership: it holds each connection until `remove`, and lookups hand them out without
/// taking a reference of their own.
@Suite("Connection table")
struct ConnectionTableTests {
    /// The `wsi` is never dereferenced: a `Connection` only keeps it for lws calls, and none is made here.
    static func connection(_ id: UInt64) -> Connection {
        Connection(id: id, wsi: OpaquePointer(bitPattern: 0x1000)!, kind: .webSocket, peer: "127.0.0.1", state: .inert)
    }

    @Test func keepsAConnectionAliveUntilRemovedAndThenHandsItsReferenceOver() {
        let table = ConnectionTable()
        weak var gone: Connection?
        do {
            let connection = Self.connection(7)
            gone = connection
            table.insert(connection)
        }
        #expect(gone != nil, "the table holds the only reference")
        #expect(table[7] === gone)
        #expect(table.unretained(7)?.takeUnretainedValue() === gone)
        #expect(table.count == 1)
        do {
            let removed = table.remove(7)
            #expect(removed?.id == 7)
            #expect(table[7] == nil && table.unretained(7) == nil && table.count == 0)
        }
        #expect(gone == nil, "removing hands the table's reference to the caller, who dropped it")
        #expect(table.remove(7) == nil)
    }

    @Test func lookupsLeaveNoReferenceBehind() {
        let table = ConnectionTable()
        weak var gone: Connection?
        do {
            let connection = Self.connection(1)
            gone = connection
            table.insert(connection)
        }
        for _ in 0..<1_000 {
            _ = table.unretained(1)
            _ = table[1]?.id
            _ = table.all.count
        }
        _ = table.remove(1)
        #expect(gone == nil, "a lookup that left a reference behind would have kept it alive")
    }

    @Test func releasesWhatItHoldsWhenItGoes() {
        weak var first: Connection?
        weak var second: Connection?
        do {
            let table = ConnectionTable()
            let a = Self.connection(1), b = Self.connection(2)
            first = a
            second = b
            table.insert(a)
            table.insert(b)
            #expect(Set(table.all.map(\.id)) == [1, 2])
        }
        #expect(first == nil && second == nil)
    }
}
