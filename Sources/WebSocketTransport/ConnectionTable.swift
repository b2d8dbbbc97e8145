/// The service thread's connections by id. The table holds the one strong reference to each `Connection`
/// (lws's per-session slot holds it unretained); `unretained` hands one out without a reference, so a
/// room's send (`writeAtSend`) can find its 40 children and ask for their memory ahead without touching
/// them. A lookup that returned a reference retained the object there and then: a write to it, which with
/// thousands of connections is a cache miss, so the lookup stalled before anything could ask for it ahead.
///
/// A connection found here stays alive until `remove`, which only `unregister` calls (on lws's close
/// callback): a caller that keeps one beyond a callback must keep its own reference.
final class ConnectionTable {
    private var byID: [UInt64: Unmanaged<Connection>] = [:]

    deinit {
        for connection in byID.values { connection.release() }
    }

    var count: Int { byID.count }

    func insert(_ connection: Connection) {
        precondition(byID[connection.id] == nil, "a connection id is never reused")
        byID[connection.id] = .passRetained(connection)
    }

    /// The connection, no longer in the table, with the table's reference handed to the caller.
    func remove(_ id: UInt64) -> Connection? {
        byID.removeValue(forKey: id)?.takeRetainedValue()
    }

    func unretained(_ id: UInt64) -> Unmanaged<Connection>? {
        byID[id]
    }

    subscript(id: UInt64) -> Connection? {
        byID[id]?.takeUnretainedValue()
    }

    /// Every connection, retained for the caller (for sweeps, where the cost does not matter).
    var all: [Connection] {
        byID.values.map { $0.takeUnretainedValue() }
    }
}
