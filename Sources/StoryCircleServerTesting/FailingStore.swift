import Foundation
import Locking
import StoryCircleCore
import StoryCircleServer

/// A store that fails on demand, as a full disk, a read-only mount or a constraint would, and otherwise
/// keeps rooms in memory. It keeps the store contract (`RoomStore.append`): once a room's record fails,
/// the room's later records fail untried until one resumes; and its health is `failing` from the first
/// failed write until a write or a probe succeeds. Completions run at once, on the caller's thread.
package final class FailingStore: RoomStore {
    private struct State {
        /// While set, every write fails with this reason.
        var broken: String?
        /// Writes that fail before the store works again on its own.
        var failuresLeft = 0
        var readsBroken = false
        var rejects: (@Sendable (RoomRecord) -> Bool)?
        var blocked: [String: StoreFailure] = [:]
        var health = StoreHealth.ok
        var appends = 0
        var failures = 0
        var resumes = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// While holding, appends wait here, as records in flight in a real store's queue do.
        var holding = false
        var held: [(record: RoomRecord, room: String, resuming: Bool, done: @Sendable ((any Error)?) -> Void)] = []
        var heldWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// While holding reads, `archive` waits here until `releaseReads()`.
        var holdingReads = false
        var heldReads: [CheckedContinuation<Void, Never>] = []
        var heldReadWaiters: [CheckedContinuation<Void, Never>] = []
    }

    package static let diskFull = "database or disk is full (No space left on device)"

    private let memory = MemoryRoomStore()
    private let clock: any ServerClock
    private let state = Locked(State())

    package init(clock: any ServerClock) {
        self.clock = clock
    }

    /// Every write fails from now on, until `heal()`.
    package func breakWrites(_ reason: String = FailingStore.diskFull) { state.withLock { $0.broken = reason } }

    /// The next `count` writes fail; then the store works again by itself (a disk that had a hiccup).
    package func failNext(_ count: Int) { state.withLock { $0.failuresLeft = count } }

    /// Records for which `rejects` is true can never be written (a constraint).
    package func reject(_ rejects: @escaping @Sendable (RoomRecord) -> Bool) { state.withLock { $0.rejects = rejects } }

    package func breakReads() { state.withLock { $0.readsBroken = true } }

    /// Reads (`archive`) wait, unanswered, until `releaseReads()`: a room reading itself back stays there.
    package func holdReads() { state.withLock { $0.holdingReads = true } }

    /// Answers the held reads and stops holding.
    package func releaseReads() {
        let held = state.withLock { state in
            state.holdingReads = false
            defer { state.heldReads = [] }
            return state.heldReads
        }
        held.forEach { $0.resume() }
    }

    /// Returns once a read is held.
    package func waitForHeldRead() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.heldReads.isEmpty { return true }
                state.heldReadWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Appends wait, untried, until `releaseHeld()`: several records of a room are then in flight at once.
    package func holdWrites() { state.withLock { $0.holding = true } }

    /// Tries the held appends now, in order, as a store's writer would take its queue, and stops holding.
    package func releaseHeld() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for call in held { append(call.record, room: call.room, resuming: call.resuming, whenDurable: call.done) }
    }

    /// Returns once at least `count` appends are held.
    package func waitForHeld(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.heldWaiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    package func heal() {
        state.withLock { state in
            state.broken = nil
            state.failuresLeft = 0
            state.readsBroken = false
            state.rejects = nil
        }
    }

    package var appends: Int { state.withLock { $0.appends } }
    package var failures: Int { state.withLock { $0.failures } }
    package var resumes: Int { state.withLock { $0.resumes } }

    /// Returns once at least `count` appends have failed (their completions have run).
    package func waitForFailures(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.failures >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    package func archive(room code: String) async throws -> RoomArchive? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                guard state.holdingReads else { return nil }
                state.heldReads.append(continuation)
                defer { state.heldReadWaiters = [] }
                return state.heldReadWaiters
            }
            guard let waiters else { return continuation.resume() }
            waiters.forEach { $0.resume() }
        }
        if state.withLock({ $0.readsBroken }) { throw StoreFailure(.unavailable, record: "archive", reason: "disk I/O error (Input/output error)") }
        return try await memory.archive(room: code)
    }

    package func createRoom(_ header: RoomHeader) async throws {
        if let failure = writeFailure(record: "room.created") { throw failure }
        try await memory.createRoom(header)
    }

    package func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        let ready: [CheckedContinuation<Void, Never>]? = state.withLock { state in
            guard state.holding else { return nil }
            state.held.append((record, code, resuming, whenDurable))
            let ready = state.heldWaiters.filter { $0.count <= state.held.count }.map(\.continuation)
            state.heldWaiters.removeAll { $0.count <= state.held.count }
            return ready
        }
        if let ready {
            ready.forEach { $0.resume() }
            return
        }
        let failure: StoreFailure? = state.withLock { state in
            state.appends += 1
            if resuming {
                state.resumes += 1
                state.blocked[code] = nil
            }
            if let cause = state.blocked[code] {
                return StoreFailure(.unavailable, record: record.kind, reason: "an earlier record of this room was not stored (\(cause.reason))")
            }
            if state.rejects?(record) == true {
                let failure = StoreFailure(.rejected, record: record.kind, reason: "UNIQUE constraint failed")
                state.blocked[code] = failure
                return failure
            }
            if let failure = Self.writeFailure(&state, record: record.kind, at: clock.now()) {
                state.blocked[code] = failure
                return failure
            }
            return nil
        }
        if let failure {
            whenDurable(failure)
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.failures += 1
                let ready = state.waiters.filter { $0.count <= state.failures }.map(\.continuation)
                state.waiters.removeAll { $0.count <= state.failures }
                return ready
            }
            ready.forEach { $0.resume() }
            return
        }
        memory.append(record, room: code) { _ in }
        whenDurable(nil)
    }

    package func unfinishedRooms() async throws -> [RoomArchive] { try await memory.unfinishedRooms() }
    package func summaries() async throws -> [RoomSummary] { try await memory.summaries() }
    package func codeExists(_ code: String) async throws -> Bool { try await memory.codeExists(code) }
    package func purge(createdBefore cutoff: ServerTime) async throws -> Int { try await memory.purge(createdBefore: cutoff) }
    package var health: StoreHealth { state.withLock { $0.health } }

    package var offers: Storage { Storage(rooms: self) }

    package func probe() async -> StoreHealth {
        _ = writeFailure(record: "probe")
        return health
    }

    package func close() async {}

    private func writeFailure(record: String) -> StoreFailure? {
        state.withLock { Self.writeFailure(&$0, record: record, at: clock.now()) }
    }

    /// Whether a write fails now; updates the health either way.
    private static func writeFailure(_ state: inout State, record: String, at now: ServerTime) -> StoreFailure? {
        var reason = state.broken
        if reason == nil, state.failuresLeft > 0 {
            state.failuresLeft -= 1
            reason = diskFull
        }
        guard let reason else {
            state.health = .ok
            return nil
        }
        if case .failing(let since, _) = state.health {
            state.health = .failing(since: since, reason: reason)
        } else {
            state.health = .failing(since: now, reason: reason)
        }
        return StoreFailure(.unavailable, record: record, reason: reason)
    }
}
