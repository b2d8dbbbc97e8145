import Foundation
import Locking
import RoomStoreSupport
@testable import StoryCircleCore
@testable import StoryCircleServer

/// A store whose commits for chosen rooms, and whose room creations while `slowCreates` is on, stall until
/// the test calls `finishSlowCalls()`: the time is spent blocking threads of the store's own
/// (`StoreThreads`), as a database on a stalled disk would, never a cooperative thread. Everything else is
/// immediate (memory). A test awaits `waitForSlowCalls` to know the slow work has started, instead of
/// sleeping; what the stalled calls hold back stays held back however slowly the machine runs the test.
final class SlowStore: RoomStore {
    private struct State {
        var slowRooms: Set<String> = []
        var slowCreates = false
        var started = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let memory = MemoryRoomStore()
    /// Opened by `finishSlowCalls()`: the stalled calls then end.
    private let gate = LockedCondition(false)
    /// More threads than the machine has cores: were the slow calls on the cooperative pool, they alone
    /// would hold every one of its threads.
    private let threads = StoreThreads(name: "slow-store", count: 6)
    private let state = Locked(State())

    init() {}

    /// Lets every stalled call, and every later one, end.
    func finishSlowCalls() { gate.withLockAndWake { $0 = true } }

    /// Commits for `room` stall from now on.
    func slowDown(_ room: String) { state.withLock { _ = $0.slowRooms.insert(room) } }

    /// Room creations stall from now on.
    func slowDownCreations() { state.withLock { $0.slowCreates = true } }

    /// Returns once at least `count` slow calls are under way.
    func waitForSlowCalls(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.started >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The slow part of a call, on one of the store's threads.
    private func stall() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.started += 1
            let ready = state.waiters.filter { $0.count <= state.started }.map(\.continuation)
            state.waiters.removeAll { $0.count <= state.started }
            return ready
        }
        ready.forEach { $0.resume() }
        gate.waitUntil({ $0 }) { _ in }
    }

    func createRoom(_ header: RoomHeader) async throws {
        if state.withLock({ $0.slowCreates }) {
            try await threads.run { [self] in stall() }
        }
        try await memory.createRoom(header)
    }

    func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        guard state.withLock({ $0.slowRooms.contains(code) }) else {
            memory.append(record, room: code, resuming: resuming, whenDurable: whenDurable)
            return
        }
        Task { [self] in
            do {
                try await threads.run { [self] in stall() }
                memory.append(record, room: code, resuming: resuming, whenDurable: whenDurable)
            } catch {
                whenDurable(StoreFailure.from(error, record: record.kind))
            }
        }
    }

    func archive(room code: String) async throws -> RoomArchive? { try await memory.archive(room: code) }
    func unfinishedRooms() async throws -> [RoomArchive] { try await memory.unfinishedRooms() }
    func summaries() async throws -> [RoomSummary] { try await memory.summaries() }
    func codeExists(_ code: String) async throws -> Bool { try await memory.codeExists(code) }
    func purge(createdBefore cutoff: ServerTime) async throws -> Int { try await memory.purge(createdBefore: cutoff) }
    var health: StoreHealth { .ok }
    var offers: Storage { Storage(rooms: self) }
    func probe() async -> StoreHealth { .ok }
    func close() async { await threads.shutDown() }
}
