import Foundation
import Testing
@testable import StoryCircleCore

/// A child let back in after a removal (`playerReadmitted`), on every backend: the same player row, no
/// longer kicked, after reopening too; a blocked one stays blocked whatever the records say.
@Suite("Room store, a removed child let back in")
struct RoomStoreReadmissionSuite {
    @Test(arguments: Backend.all)
    func aReadmissionLiftsAKickButNeverABlock(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let records: [RoomRecord] = [
            .playerJoined(PlayerRecord(id: "p1", nickname: "Ana", tokenHash: RoomCredentials.hash("ana"), joinedAt: ServerTime(milliseconds: 2_000))),
            .playerJoined(PlayerRecord(id: "p2", nickname: "Ben", tokenHash: RoomCredentials.hash("ben"), joinedAt: ServerTime(milliseconds: 2_100))),
            .playerKicked(player: "p1", at: ServerTime(milliseconds: 3_000)),
            .playerBlocked(player: "p2", at: ServerTime(milliseconds: 3_100)),
            .playerReadmitted(player: "p1", at: ServerTime(milliseconds: 4_000)),
            .playerReadmitted(player: "p2", at: ServerTime(milliseconds: 4_100)),
        ]
        try await fixture.store.createRoom(Sample.header("123456"))
        try await appendAndWait(fixture.store, records, room: "123456")
        await fixture.store.close()

        let reopened = try fixture.reopen()
        let stored = try #require(try await reopened.archive(room: "123456"))
        #expect(stored == Sample.expected("123456", records))
        #expect(stored.players.map(\.id) == ["p1", "p2"], "one row for Ana, not a second child")
        #expect(stored.kicked == ["p2"])
        #expect(stored.blocked == ["p2"])
        #expect(try await reopened.summaries().first?.players == 1)
    }
}
