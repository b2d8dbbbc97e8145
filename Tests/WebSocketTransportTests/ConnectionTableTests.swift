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

    /// Watches a connection without keeping it alive.
    final class Watch {
        weak var connection: Connection?
    }

    /// A new connection given to `table`, which then holds the only reference to it.
    static func insertedAlone(_ id: UInt64, into table: ConnectionTable) -> Watch {
        let watch = Watch()
        let connection = connection(id)
        watch.connection = connection
        table.insert(connection)
        return watch
    }

    @Test func keepsAConnectionAliveUntilRemovedAndThenHandsItsReferenceOver() {
        let table = ConnectionTable()
        let watch = Self.insertedAlone(7, into: table)
        #expect(watch.connection != nil, "the table holds the only reference")
        #expect(table[7] === watch.connection)
        #expect(table.unretained(7)?.takeUnretainedValue() === watch.connection)
        #expect(table.count == 1)
        do {
            let removed = table.remove(7)
            #expect(removed?.id == 7)
            #expect(table[7] == nil && table.unretained(7) == nil && table.count == 0)
        }
        #expect(watch.connection == nil, "removing hands the table's reference to the caller, who dropped it")
        #expect(table.remove(7) == nil)
    }

    @Test func lookupsLeaveNoReferenceBehind() {
        let table = ConnectionTable()
        let watch = Self.insertedAlone(1, into: table)
        for _ in 0..<1_000 {
            _ = table.unretained(1)
            _ = table[1]?.id
            _ = table.all.count
        }
        _ = table.remove(1)
        #expect(watch.connection == nil, "a lookup that left a reference behind would have kept it alive")
    }

    @Test func releasesWhatItHoldsWhenItGoes() {
        var watches: [Watch] = []
        do {
            let table = ConnectionTable()
            watches = [Self.insertedAlone(1, into: table), Self.insertedAlone(2, into: table)]
            #expect(Set(table.all.map(\.id)) == [1, 2])
            #expect(watches.allSatisfy { $0.connection != nil })
        }
        #expect(watches.allSatisfy { $0.connection == nil })
    }
}
