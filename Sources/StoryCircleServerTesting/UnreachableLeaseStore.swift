import Locking
import StoryCircleCore
import StoryCircleServer

/// A memory store whose leases can be made unreachable, as PostgreSQL is while it restarts: while
/// `unreachable`, taking, renewing and releasing leases fail as a lost connection does; everything else
/// works (the test decides what an outage touches).
package final class UnreachableLeaseStore: RoomLeases {
    private struct State {
        var unreachable = false
        /// The lease calls refused so far, by name ("acquire", "renew", "release").
        var refused: [String] = []
        var renewals = 0
        var waiters: [(call: String, continuation: CheckedContinuation<Void, Never>)] = []
    }

    package let memory = MemoryRoomStore()
    private let state = Locked(State())

    package init() {}

    package var unreachable: Bool {
        get { state.withLock { $0.unreachable } }
        set { state.withLock { $0.unreachable = newValue } }
    }

    /// Renewals that reached the store.
    package var renewals: Int { state.withLock { $0.renewals } }

    /// Returns once a `call` ("acquire", "renew", "release") has been refused.
    package func refusal(of call: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let refused = state.withLock { state -> Bool in
                if state.refused.contains(call) { return true }
                state.waiters.append((call, continuation))
                return false
            }
            if refused { continuation.resume() }
        }
    }

    private func reach(_ call: String) throws {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
            guard state.unreachable else {
                if call == "renew" { state.renewals += 1 }
                return nil
            }
            state.refused.append(call)
            let ready = state.waiters.filter { $0.call == call }.map(\.continuation)
            state.waiters.removeAll { $0.call == call }
            return ready
        }
        guard let ready else { return }
        ready.forEach { $0.resume() }
        throw StoreFailure(.unavailable, record: "lease", reason: "server closed the connection unexpectedly")
    }

    package func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease {
        try reach("acquire")
        return try await memory.acquire(room: room, node: node, for: duration)
    }

    package func renew(_ leases: [RoomLease], for duration: Duration) async throws -> [RoomLease] {
        try reach("renew")
        return try await memory.renew(leases, for: duration)
    }

    package func release(_ lease: RoomLease) async throws {
        try reach("release")
        try await memory.release(lease)
    }

    package func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        memory.append(record, under: lease, resuming: resuming, whenDurable: whenDurable)
    }

    package func createRoom(_ header: RoomHeader) async throws { try await memory.createRoom(header) }

    package func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        memory.append(record, room: code, resuming: resuming, whenDurable: whenDurable)
    }

    package func archive(room code: String) async throws -> RoomArchive? { try await memory.archive(room: code) }
    package func unfinishedRooms() async throws -> [RoomArchive] { try await memory.unfinishedRooms() }
    package func summaries() async throws -> [RoomSummary] { try await memory.summaries() }
    package func codeExists(_ code: String) async throws -> Bool { try await memory.codeExists(code) }
    package func purge(createdBefore cutoff: ServerTime) async throws -> Int { try await memory.purge(createdBefore: cutoff) }
    package var health: StoreHealth { memory.health }

    /// Rooms and leases, as the PostgreSQL it stands for.
    package var offers: Storage { Storage(rooms: self, leases: self) }
    package func probe() async -> StoreHealth { await memory.probe() }
    package func close() async { await memory.close() }
}
