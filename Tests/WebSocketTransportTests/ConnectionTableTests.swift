import Testing
@testable import WebSocketTransport

/// The table's ids (new ones sort after old ones; a freed slot answers only to its new connection) and its
/// ownership: it holds each connection until `remove`, and lookups hand them out without taking a reference
/// of their own.
@Suite("Connection table")
struct ConnectionTableTests {
    /// Watches a connection without keeping it alive.
    final class Watch {
        weak var connection: Connection?
        let id: UInt64

        init(_ connection: Connection) {
            self.connection = connection
            id = connection.id
        }
    }

    /// A new connection given to `table`, which then holds the only reference to it. (The `wsi` is never
    /// dereferenced: a `Connection` only keeps it for lws calls, and none is made here.)
    static func insertedAlone(into table: ConnectionTable) -> Watch {
        Watch(table.insert { Connection(id: $0, wsi: OpaquePointer(bitPattern: 0x1000)!, kind: .webSocket, peer: "127.0.0.1", state: .inert) })
    }

    @Test func idsSortInTheOrderConnectionsCameWhileSlotsAreTakenAgain() {
        let table = ConnectionTable()
        var live = (0..<5).map { _ in Self.insertedAlone(into: table) }
        var ids = live.map(\.id)
        // Churn: the oldest leaves and a new one comes, many times over, so every slot is taken again.
        for _ in 0..<50 {
            _ = table.remove(live.removeFirst().id)
            live.append(Self.insertedAlone(into: table))
            ids.append(live.last!.id)
        }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        #expect(table.count == 5 && Set(table.all.map(\.id)) == Set(live.map(\.id)))
        #expect(live.allSatisfy { table[$0.id]?.id == $0.id })
    }

    @Test func aSlotTakenAgainAnswersOnlyToItsNewConnection() {
        let table = ConnectionTable()
        let gone = Self.insertedAlone(into: table)
        let stays = Self.insertedAlone(into: table)
        _ = table.remove(gone.id)
        let next = Self.insertedAlone(into: table)
        let slot: (UInt64) -> UInt64 = { $0 & ((1 << ConnectionTable.slotBits) - 1) }
        #expect(slot(next.id) == slot(gone.id) && next.id > stays.id, "the next connection took the freed slot, under a new id")
        #expect(table[gone.id] == nil && table.unretained(gone.id) == nil && table.remove(gone.id) == nil)
        #expect(table[next.id] === next.connection && table[stays.id] === stays.connection)
        #expect(table.count == 2)
        // An id the table never made, in a slot it has and in one it has not.
        #expect(table[next.id + (1 << ConnectionTable.slotBits)] == nil && table[next.id + 1_000] == nil)
    }

    @Test func keepsAConnectionAliveUntilRemovedAndThenHandsItsReferenceOver() {
        let table = ConnectionTable()
        let watch = Self.insertedAlone(into: table)
        let id = watch.id
        #expect(watch.connection != nil, "the table holds the only reference")
        #expect(table[id] === watch.connection)
        #expect(table.unretained(id)?.takeUnretainedValue() === watch.connection)
        #expect(table.count == 1)
        do {
            let removed = table.remove(id)
            #expect(removed?.id == id)
            #expect(table[id] == nil && table.unretained(id) == nil && table.count == 0)
        }
        #expect(watch.connection == nil, "removing hands the table's reference to the caller, who dropped it")
        #expect(table.remove(id) == nil)
    }

    @Test func lookupsLeaveNoReferenceBehind() {
        let table = ConnectionTable()
        let watch = Self.insertedAlone(into: table)
        for _ in 0..<1_000 {
            _ = table.unretained(watch.id)
            _ = table[watch.id]?.id
            _ = table.all.count
        }
        _ = table.remove(watch.id)
        #expect(watch.connection == nil, "a lookup that left a reference behind would have kept it alive")
    }

    @Test func releasesWhatItHoldsWhenItGoes() {
        var watches: [Watch] = []
        do {
            let table = ConnectionTable()
            watches = [Self.insertedAlone(into: table), Self.insertedAlone(into: table)]
            #expect(Set(table.all.map(\.id)) == Set(watches.map(\.id)))
            #expect(watches.allSatisfy { $0.connection != nil })
        }
        #expect(watches.allSatisfy { $0.connection == nil })
    }
}
