import Foundation
import Testing
@testable import SQLiteStorage
@testable import StoryCircleCore

/// A blocked child stays blocked after a restart: the block is a column of its own (schema version 3).
@Suite("SQLite: blocked players")
struct BlockedPlayerStorageTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-blocked-\(UUID().uuidString)")
    var path: String { folder.appendingPathComponent("rooms.sqlite").path }

    private func append(_ store: SQLiteRoomStore, _ records: [RoomRecord]) async throws {
        for record in records {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                store.append(record, room: "123456") { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }
            }
        }
    }

    @Test func aBlockIsStoredAndComesBackAfterReopening() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let header = SQLiteRoomStoreTests.header("123456")
        let records: [RoomRecord] = [
            .playerJoined(PlayerRecord(id: "p1", nickname: "Ana", tokenHash: RoomCredentials.hash("ana"), joinedAt: ServerTime(milliseconds: 2_000))),
            .playerJoined(PlayerRecord(id: "p2", nickname: "Ben", tokenHash: RoomCredentials.hash("ben"), joinedAt: ServerTime(milliseconds: 2_100))),
            .playerJoined(PlayerRecord(id: "p3", nickname: "Cat", tokenHash: RoomCredentials.hash("cat"), joinedAt: ServerTime(milliseconds: 2_200))),
            .playerKicked(player: "p1", at: ServerTime(milliseconds: 3_000)),
            .playerBlocked(player: "p2", at: ServerTime(milliseconds: 3_100)),
            // Blocking a child who was kicked before keeps the first kick's time.
            .playerKicked(player: "p3", at: ServerTime(milliseconds: 3_200)),
            .playerBlocked(player: "p3", at: ServerTime(milliseconds: 3_300)),
        ]
        do {
            let store = try SQLiteRoomStore(path: path)
            try await store.createRoom(header)
            try await append(store, records)
            await store.close()
        }
        let store = try SQLiteRoomStore(path: path)
        defer { closeAfterTest(store) }
        var expected = RoomArchive(header: header)
        records.forEach { expected.apply($0) }
        let stored = try #require(try await store.archive(room: "123456"))
        #expect(stored == expected)
        #expect(stored.kicked == ["p1", "p2", "p3"])
        #expect(stored.blocked == ["p2", "p3"])
        #expect(try await store.summaries().first?.players == 0)

        let database = try SQLiteDatabase(path: path, readOnly: true)
        #expect(try database.integer("SELECT kicked_at FROM players WHERE id = 'p3'") == 3_200)
        #expect(try database.integer("SELECT max(version) FROM schema_migrations") == Int64(Migrations.latest))
    }
}
