import Locking
import StoryCircleCore

/// Which room a greeted connection's messages go to, readable on the transport's service thread: a message
/// from a connection whose hello has been routed goes straight into its room's inbox, without a hop through
/// the `RoomRegistry` actor (issue #14, suspect 8). The registry makes blocking store calls (creating a
/// room waits on the SQLite writer); with every message of every room queued behind them, one teacher
/// creating a room delayed every child's answer.
///
/// Hellos, closes and messages of connections not yet bound still go through the registry's event stream.
/// Order per connection is kept by counting a connection's messages still in that stream: the transport
/// takes the direct way only when none is, and the registry counts each one off after it has put it in the
/// room's inbox, so a direct message is always behind them. (The transport calls `deliver` from its one
/// service thread, so two direct messages are never in a race either.)
final class InboundRoutes: Sendable {
    private struct State {
        var rooms: [UInt64: Room] = [:]
        /// Messages of a connection given to the registry's stream and not yet routed by it.
        var queued: [UInt64: Int] = [:]
    }

    private let state = Locked(State())

    /// Transport thread: puts the message in its room's inbox and returns true, or returns false and counts
    /// it as queued: the caller then gives it to the registry's stream.
    func deliver(_ connection: UInt64, _ bytes: [UInt8]) -> Bool {
        let room: Room? = state.withLock { state in
            if state.queued[connection] == nil, let room = state.rooms[connection] { return room }
            state.queued[connection, default: 0] += 1
            return nil
        }
        guard let room else { return false }
        room.submit(.message(ConnectionID(connection), bytes))
        return true
    }

    /// Registry: `connection`'s hello was routed to `room`.
    func bind(_ connection: UInt64, to room: Room) {
        state.withLock { $0.rooms[connection] = room }
    }

    /// Registry: one of `connection`'s queued messages has been routed (to its room, or refused).
    func routed(_ connection: UInt64) {
        state.withLock { state in
            guard let count = state.queued[connection] else { return }
            state.queued[connection] = count > 1 ? count - 1 : nil
        }
    }

    /// Registry: the connection is closed.
    func unbind(_ connection: UInt64) {
        state.withLock { state in
            state.rooms[connection] = nil
            state.queued[connection] = nil
        }
    }
}
