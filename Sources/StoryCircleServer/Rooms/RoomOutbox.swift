import Locking
import StoryCircleCore
import WebSocketTransport

/// Carries out a room's sends, closes and records in the order the room decided them, without making the
/// room wait for the disk.
///
/// Each record gets a ticket. A send or close decided after a record may only go out once that record is
/// durable (that is how an answer is stored before it is acknowledged), so it is held until the store
/// reports the ticket committed; later actions queue behind it, keeping order per room. Meanwhile the room
/// goes on handling events: a busy room is never slowed to one commit per answer.
final class RoomOutbox: Sendable {
    private enum Action {
        case send(OutboundFrame, [UInt64])
        case close(UInt64, status: UInt16, reason: String)
    }

    private struct State {
        var issued: UInt64 = 0
        var durable: UInt64 = 0
        var held: [(ticket: UInt64, action: Action)] = []
    }

    private let code: String
    private let transport: any MessageTransport
    private let store: any RoomStore
    private let metrics: ServerMetrics
    private let logger: Logger
    private let state = Locked(State())

    init(code: String, transport: any MessageTransport, store: any RoomStore, metrics: ServerMetrics, logger: Logger) {
        self.code = code
        self.transport = transport
        self.store = store
        self.metrics = metrics
        self.logger = logger
    }

    func persist(_ record: RoomRecord) {
        let ticket = state.withLock { state -> UInt64 in
            state.issued += 1
            return state.issued
        }
        store.append(record, room: code) { [self] error in
            if error != nil {
                // Availability wins over a lost record: the room goes on, the failure is counted and logged.
                metrics.storageFailed()
                logger.error("Could not store a room record", ["room.code": code])
            }
            committed(ticket)
        }
    }

    func send(_ frame: OutboundFrame, to connections: [UInt64]) {
        perform(.send(frame, connections))
    }

    func close(_ connection: UInt64, status: UInt16, reason: String) {
        perform(.close(connection, status: status, reason: reason))
    }

    /// Sends at once, ahead of held messages: for replies that carry no room state (pongs).
    func sendImmediately(_ frame: OutboundFrame, to connections: [UInt64]) {
        transport.send(frame, to: connections)
    }

    /// Records not yet durable.
    var pendingRecords: Int {
        state.withLock { Int($0.issued - $0.durable) }
    }

    private func perform(_ action: Action) {
        // The transport is called under the lock so a release on the store's thread and a new action from
        // the room cannot overtake each other.
        state.withLock { state in
            if state.durable == state.issued, state.held.isEmpty {
                carryOut(action)
            } else {
                state.held.append((state.issued, action))
            }
        }
    }

    private func committed(_ ticket: UInt64) {
        state.withLock { state in
            state.durable = max(state.durable, ticket)
            var released = 0
            for (heldTicket, action) in state.held {
                guard heldTicket <= state.durable else { break }
                carryOut(action)
                released += 1
            }
            state.held.removeFirst(released)
        }
    }

    private func carryOut(_ action: Action) {
        switch action {
        case .send(let frame, let connections): transport.send(frame, to: connections)
        case .close(let connection, let status, let reason): transport.close(connection, status: status, reason: reason)
        }
    }
}
