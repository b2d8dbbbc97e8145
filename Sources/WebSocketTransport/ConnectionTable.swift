/// The service thread's connections by id. The table holds the one strong reference to each `Connection`
/// (lws's per-session slot holds it unretained); `unretained` hands one out without a reference, so a
/// room's send (`writeAtSend`) can find its 40 children and ask for their memory ahead without touching
/// them. A lookup that returned a reference retained the object there and then: a write to it, which with
/// thousands of connections is a cache miss, so the lookup stalled before anything could ask for it ahead.
///
/// The table also makes the ids. An id carries the slot its connection has in the table's array, below a
/// serial number that grows with every connection, so a lookup is an index and a comparison: no hashing,
/// and children who joined one after another are mostly side by side in memory, where a hashed table
/// scattered them (its lookup was an eighth of the server's user time in a classroom's broadcasts). Ids still
/// sort in the order their connections came, since the serial is above the slot, and none is reused: a
/// slot freed by one connection and taken by the next answers only to the new id, so a room still sending
/// to a child who left reaches nobody.
///
/// A connection found here stays alive until `remove`, which only `unregister` calls (on lws's close
/// callback): a caller that keeps one beyond a callback must keep its own reference.
final class ConnectionTable {
    /// 2^22 (4 million) connections at once, far above any open-file limit; 2^42 serials, 14 years of ten
    /// thousand connections a second.
    static let slotBits: UInt64 = 22
    private static let slotMask: UInt64 = (1 << slotBits) - 1
    private static let lastSerial: UInt64 = (1 << (64 - slotBits)) - 1

    private struct Entry {
        /// 0 while the slot is free: no id is 0 (serials start at 1).
        var id: UInt64 = 0
        var connection: Unmanaged<Connection>?
    }

    private var entries: [Entry] = []
    /// Slots given back, taken again last-freed first.
    private var freeSlots: [Int] = []
    private var nextSerial: UInt64 = 1
    private(set) var count = 0

    deinit {
        for entry in entries { entry.connection?.release() }
    }

    /// Keeps the connection `make` builds with the new id it is given.
    func insert(_ make: (UInt64) -> Connection) -> Connection {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            precondition(UInt64(entries.count) <= Self.slotMask, "more connections at once than a connection id can number")
            entries.append(Entry())
            slot = entries.count - 1
        }
        precondition(nextSerial <= Self.lastSerial, "connection ids have run out")
        let id = nextSerial << Self.slotBits | UInt64(slot)
        nextSerial += 1
        let connection = make(id)
        precondition(connection.id == id, "a connection is kept under the id it was made with")
        entries[slot] = Entry(id: id, connection: .passRetained(connection))
        count += 1
        return connection
    }

    /// The connection, no longer in the table, with the table's reference handed to the caller.
    func remove(_ id: UInt64) -> Connection? {
        let slot = Self.slot(id)
        guard slot < entries.count, entries[slot].id == id, let connection = entries[slot].connection else { return nil }
        entries[slot] = Entry()
        freeSlots.append(slot)
        count -= 1
        return connection.takeRetainedValue()
    }

    func unretained(_ id: UInt64) -> Unmanaged<Connection>? {
        let slot = Self.slot(id)
        guard slot < entries.count else { return nil }
        let entry = entries[slot]
        return entry.id == id ? entry.connection : nil
    }

    subscript(id: UInt64) -> Connection? {
        unretained(id)?.takeUnretainedValue()
    }

    /// Every connection, retained for the caller (for sweeps, where the cost does not matter).
    var all: [Connection] {
        entries.compactMap { $0.connection?.takeUnretainedValue() }
    }

    private static func slot(_ id: UInt64) -> Int {
        Int(truncatingIfNeeded: id & slotMask)
    }
}
