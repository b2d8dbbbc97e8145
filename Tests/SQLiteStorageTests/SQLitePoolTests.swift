import Dispatch
import Foundation
import Locking
import Testing
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The store's blocking work happens on threads of its own: with its writer stuck behind another
/// connection's lock, many callers awaiting it still leave Swift's cooperative pool free for everyone else.
/// (Two cores give the pool two threads: two callers waiting on them would stop every other task.)
@Suite("SQLite store off the cooperative pool")
struct SQLitePoolTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-pool-\(UUID().uuidString)")
    var path: String { folder.appendingPathComponent("rooms.sqlite").path }

    /// No time is measured: the writer waits for the other connection as long as it takes, and that
    /// connection lets go only once the pool has run everything else. Callers that held the pool's threads
    /// would make that a deadlock, which only the watchdog ends (and the test fails); on a loaded machine the
    /// pool is merely slow, and the test waits for it.
    @Test(.timeLimit(.minutes(3)))
    func callersWaitingForABlockedWriterDoNotHoldThePoolsThreads() async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store) }
        // SQLite's 5 s busy timeout would end the writer's wait on a slow run; ten minutes outlasts the watchdog.
        try await store.runOnWriter("PRAGMA busy_timeout = 600000")

        // Another connection takes the write lock; the store's writer waits for it. From here on that
        // connection belongs to the watchdog's thread, which lets go once the pool has run everything else,
        // or after a minute of the pool making no way through a handful of additions: a held pool, not load.
        nonisolated(unsafe) let other = try SQLiteDatabase(path: path)
        try other.execute("BEGIN EXCLUSIVE")
        let poolRanEverything = DispatchSemaphore(value: 0)
        let inTime = Locked<Bool?>(nil)
        let released = DispatchSemaphore(value: 0)
        Thread {
            inTime.withLock { $0 = poolRanEverything.wait(timeout: .now() + .seconds(60)) == .success }
            try? other.execute("COMMIT")
            released.signal()
        }.start()

        let waiting = ProcessInfo.processInfo.activeProcessorCount * 4
        let callers = LockedCondition(0)
        let created = Locked(0)
        let creations = (0..<waiting).map { index in
            Task {
                callers.withLockAndWake { $0 += 1 }
                try await store.createRoom(SQLiteRoomStoreTests.header("70000\(index)"))
                created.withLock { $0 += 1 }
            }
        }
        // Every caller has come to the store (a caller that blocked its thread would keep the later ones
        // from starting at all), then the pool runs other work: more tasks than it has threads.
        await Self.onThread { callers.waitUntil({ $0 == waiting }, then: { _ in }) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<waiting { group.addTask { _ = (0..<1_000).reduce(0, +) } }
        }
        #expect(created.withLock { $0 } == 0, "the writer really was blocked all along")
        poolRanEverything.signal()
        await Self.onThread { released.wait() }
        #expect(inTime.withLock { $0 } == true, "the pool was held by the store's callers until the watchdog let the writer go")

        for creation in creations { try await creation.value }
        #expect(created.withLock { $0 } == waiting)
        for index in 0..<waiting { #expect(try await store.codeExists("70000\(index)")) }
    }

    /// Runs `body` on a thread of its own (it blocks) and hands back what it returns.
    private static func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}
