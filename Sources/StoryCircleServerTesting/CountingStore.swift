import Locking
import StoryCircleCore
import StoryCircleServer

/// A memory store with leases, as PostgreSQL offers them, that counts every call by name ("archive",
/// "acquire", "codeExists", …): a test shows what a request made the store do, and that a refused one made
/// it do nothing.
package final class CountingStore: RoomLeases {
    package let memory = MemoryRoomStore()
    private let calls = Locked<[String: Int]>([:])

    package init() {}

    /// Calls so far, by name.
    package var counts: [String: Int] { calls.withLock { $0 } }

    /// Every call so far.
    package var total: Int { calls.withLock { $0.values.reduce(0, +) } }

    /// Forgets the calls so far (those of the test's setting up).
    package func reset() { calls.withLock { $0 = [:] } }

    private func count(_ call: String) { calls.withLock { $0[call, default: 0] += 1 } }

    package func acquire(room: String, node: String, for duration: Duration) async throws -> RoomLease {
        count("acquire")
        return try await memory.acquire(room: room, node: node, for: duration)
    }

    package func renew(_ leases: [RoomLease], for duration: Duration) async throws -> [RoomLease] {
        count("renew")
        return try await memory.renew(leases, for: duration)
    }

    package func release(_ lease: RoomLease) async throws {
        count("release")
        try await memory.release(lease)
    }

    package func append(_ record: RoomRecord, under lease: RoomLease, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        count("append")
        memory.append(record, under: lease, resuming: resuming, whenDurable: whenDurable)
    }

    package func createRoom(_ header: RoomHeader) async throws {
        count("createRoom")
        try await memory.createRoom(header)
    }

    package func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        count("append")
        memory.append(record, room: code, resuming: resuming, whenDurable: whenDurable)
    }

    package func archive(room code: String) async throws -> RoomArchive? {
        count("archive")
        return try await memory.archive(room: code)
    }

    package func unfinishedRooms() async throws -> [RoomArchive] {
        count("unfinishedRooms")
        return try await memory.unfinishedRooms()
    }

    package func summaries() async throws -> [RoomSummary] {
        count("summaries")
        return try await memory.summaries()
    }

    package func codeExists(_ code: String) async throws -> Bool {
        count("codeExists")
        return try await memory.codeExists(code)
    }

    package func purge(createdBefore cutoff: ServerTime) async throws -> Int {
        count("purge")
        return try await memory.purge(createdBefore: cutoff)
    }

    package var health: StoreHealth { memory.health }
    package var offers: Storage { Storage(rooms: self, leases: self) }
    package func probe() async -> StoreHealth { await memory.probe() }
    package func close() async { await memory.close() }
}
