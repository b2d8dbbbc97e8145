import Locking
import StoryCircleCore

/// Which room each greeted connection belongs to: the one map of it, readable on the transport's service
/// thread. A message from a connection whose hello has been routed goes straight into its room's inbox,
/// without a hop through the `ConnectionRouter` actor.
///
/// Hellos, closes and messages of connections not yet bound go through the router's event stream. Order per
/// connection is kept by counting a connection's messages still in that stream: the transport takes the
/// direct way only when none is, and the router counts each one off after it has put it in the room's
/// inbox, so a direct message is always behind them. (The transport calls `deliver` from its one service
/// thread, so two direct messages are never in a race either.)
package final class ConnectionBindings: Sendable {
    /// Where a connection's messages go.
    package enum Binding {
        /// Its room's inbox.
        case bound(Room)
        /// Nowhere: its room let it go (`unbindAll(of:)`), and whoever did is closing it with the reason.
        /// What it sends until the close is not a hello: greeting it would refuse it with a close of its own
        /// (`hello_required`, a policy close the page does not reconnect after), racing the one that tells
        /// it to reconnect.
        case letGo
        /// The router's: its hello has not been routed yet.
        case unbound
    }

    private struct State {
        var rooms: [UInt64: Room] = [:]
        /// Messages of a connection given to the router's stream and not yet routed by it.
        var queued: [UInt64: Int] = [:]
        /// Connections their room let go, until they close.
        var letGo: Set<UInt64> = []
    }

    private let state = Locked(State())

    package init() {}

    /// Transport thread: puts the message in its room's inbox and returns true, or returns false and counts
    /// it as queued: the caller then gives it to the router's stream.
    package func deliver(_ connection: UInt64, _ bytes: [UInt8]) -> Bool {
        let room: Room? = state.withLock { state in
            if state.queued[connection] == nil, let room = state.rooms[connection] { return room }
            state.queued[connection, default: 0] += 1
            return nil
        }
        guard let room else { return false }
        room.submit(.message(ConnectionID(connection), bytes))
        return true
    }

    /// Where `connection`'s messages go now.
    package func binding(of connection: UInt64) -> Binding {
        state.withLock { state in
            if let room = state.rooms[connection] { return .bound(room) }
            return state.letGo.contains(connection) ? .letGo : .unbound
        }
    }

    /// `connection`'s hello was routed to `room`. False when the room has let its connections go
    /// (`unbindAll(of:)`) meanwhile: the connection must be told to try again.
    package func bind(_ connection: UInt64, to room: Room) -> Bool {
        state.withLock { state in
            guard !room.retired.withLock({ $0 }) else { return false }
            state.rooms[connection] = room
            return true
        }
    }

    /// One of `connection`'s queued messages has been routed (to its room, or refused).
    package func countOff(_ connection: UInt64) {
        state.withLock { state in
            guard let count = state.queued[connection] else { return }
            state.queued[connection] = count > 1 ? count - 1 : nil
        }
    }

    /// The connection is closed; returns the room it was bound to.
    @discardableResult
    package func unbind(_ connection: UInt64) -> Room? {
        state.withLock { state in
            state.queued[connection] = nil
            state.letGo.remove(connection)
            return state.rooms.removeValue(forKey: connection)
        }
    }

    /// Unbinds every connection of `room` and returns them, in order, for the caller to close: what they
    /// send from now on goes to the router, which drops it (`Binding.letGo`). The room is retired with it,
    /// in the same lock: a hello found the room just before is refused by `bind` rather than bound to a
    /// room that has gone.
    package func unbindAll(of room: Room) -> [UInt64] {
        state.withLock { state in
            room.retired.withLock { $0 = true }
            let bound = state.rooms.compactMap { $0.value === room ? $0.key : nil }.sorted()
            for connection in bound {
                state.rooms[connection] = nil
                state.letGo.insert(connection)
            }
            return bound
        }
    }
}
