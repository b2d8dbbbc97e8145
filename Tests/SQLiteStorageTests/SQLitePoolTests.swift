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

    @Test(.timeLimit(.minutes(1)))
    func callersWaitingForABlockedWriterDoNotHoldThePoolsThreads() async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store) }

        // Another connection takes the write lock; the store's writer waits for it (its busy timeout).
        let other = try SQLiteDatabase(path: path)
        try other.execute("BEGIN EXCLUSIVE")
        let waiting = ProcessInfo.processInfo.activeProcessorCount * 4
        let created = Locked(0)
        let creations = (0..<waiting).map { index in
            Task {
                try await store.createRoom(SQLiteRoomStoreTests.header("70000\(index)"))
                created.withLock { $0 += 1 }
            }
        }

        // Meanwhile the pool runs other work at once: more tasks than it has threads, each needing one.
        let started = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<waiting { group.addTask { _ = (0..<1_000).reduce(0, +) } }
        }
        // Held, the pool would free its threads only when the writer gives up, after SQLite's 5 s busy
        // timeout; 4 s tells the two apart and leaves a loaded machine room.
        #expect(ContinuousClock.now - started < .seconds(4), "the pool was not held by the store's callers")
        #expect(created.withLock { $0 } == 0, "and the writer really was blocked all along")

        try other.execute("COMMIT")
        for creation in creations { try await creation.value }
        #expect(created.withLock { $0 } == waiting)
        for index in 0..<waiting { #expect(try await store.codeExists("70000\(index)")) }
    }
}
