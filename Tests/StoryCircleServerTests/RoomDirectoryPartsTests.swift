import StoryCircleCore
import StoryCircleServerTesting
import StoryCircleTesting
import Testing
import TransportCore

@testable import StoryCircleServer

/// The directory's parts, each at its own job: `RoomRetention` decides which rooms leave memory and which
/// leave the store, `ClassFollowing` leaves rooms alone over a store that keeps no classes, and both let
/// only `RoomLifecycle` change the map.
@Suite("Room directory parts")
struct RoomDirectoryPartsTests {
    @Test func retentionKeepsAFinishedRoomSomeoneIsOnAndLetsAnEmptyOneGo() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, clock: clock)
        let watched = try await registry.directory.createRoom(story: ServerFixtures.story)
        let empty = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: watched.code, nickname: "Ana"))
        _ = await transport.next("welcome", to: 1)
        for code in [watched.code, empty.code] {
            _ = try await #require(await registry.directory.room(code)).perform(.end)
        }
        clock.advance(by: 1)

        let swept = await registry.directory.sweep(finishedBefore: clock.now(), createdBefore: ServerTime(milliseconds: 0))
        #expect(swept.evicted == 1 && swept.purged == 0)
        #expect(await registry.directory.room(watched.code) != nil, "Ana is still on its podium")
        #expect(await registry.directory.room(empty.code) == nil)
        #expect(try await registry.directory.findRoom(empty.code) != nil, "its results stay in the store, and it comes back when asked for")
        await registry.shutDown()
    }

    @Test func eachRoomIsHeldToItsOwnSchoolsRetentionAndItsDeletionIsAudited() async throws {
        let clock = ManualClock()
        let store = MemoryRoomStore()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        let north = try await registry.directory.createRoom(story: ServerFixtures.story, owner: Owner(accountID: "acc_a", schoolID: "sch_north"))
        let south = try await registry.directory.createRoom(story: ServerFixtures.story, owner: Owner(accountID: "acc_b", schoolID: "sch_south"))
        clock.advance(by: 1)

        // North's rule has run out; the fallback (every other school) has not.
        let rooms = RetentionCutoffs(fallback: ServerTime(milliseconds: 0), schools: ["sch_north": clock.now()])
        _ = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), rooms: rooms, audit: nil, at: clock.now())
        #expect(await registry.directory.room(north.code) == nil)
        #expect(await registry.directory.room(south.code) != nil, "south's rooms are kept by its own rule")

        // A store without schools purges by the fallback, and the trail says how many went, not which.
        _ = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), rooms: RetentionCutoffs(fallback: clock.now()), audit: nil, at: clock.now())
        let rows = try await store.auditLog.entries(AuditQuery(action: .retentionDeleted)).entries.map(\.event)
        #expect(rows.map(\.actor.kind) == [.retention])
        #expect(rows.map(\.detail) == ["rooms 2"] && rows.map(\.at) == [clock.now()])
        await registry.shutDown()
    }

    @Test func retentionDeletesARoomPastItsPeriodFromMemoryAndTheStore() async throws {
        let transport = RecordingTransport()
        let clock = ManualClock()
        let store = MemoryRoomStore()
        let (registry, events) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
        let old = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: old.code, nickname: "Ana"))
        _ = await transport.next("welcome", to: 1)
        clock.advance(by: 1)

        let swept = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), createdBefore: clock.now())
        #expect(swept.purged == 1)
        #expect(await registry.directory.room(old.code) == nil)
        #expect(try await store.archive(room: old.code) == nil)
        #expect(transport.closeStatus(1) == 1001, "whoever was on it is told the room is gone")
        await registry.shutDown()
    }

    @Test func retentionPrunesAuditRowsByTheirOwnRuleOnly() async throws {
        let clock = ManualClock()
        let store = MemoryRoomStore()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        let room = try await registry.directory.createRoom(story: ServerFixtures.story)
        let event = { (at: Int64) in
            AuditEvent(at: ServerTime(milliseconds: at), actor: AuditActor(kind: .adminToken), action: .readRoomResults, target: "room:\(room.code)", address: "x")
        }
        try await store.auditLog.append(event(0))
        let kept = try await store.auditLog.append(event(10))

        // A sweep without an audit cutoff leaves the trail alone; with one, only rows older than it go.
        _ = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), createdBefore: ServerTime(milliseconds: 0))
        #expect(try await store.auditLog.entries(AuditQuery()).entries.count == 2)
        _ = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), createdBefore: ServerTime(milliseconds: 0), auditBefore: ServerTime(milliseconds: 5))
        #expect(try await store.auditLog.entries(AuditQuery()).entries == [kept])
        #expect(await registry.directory.room(room.code) != nil, "the room's own retention is another rule")
        await registry.shutDown()
    }

    @Test func classFollowingLeavesRoomsAloneOverAStoreWithoutClasses() async throws {
        let transport = RecordingTransport()
        let (registry, events) = ServerFixtures.registry(transport: transport)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        _ = await transport.next("welcome", to: 1)
        let room = try #require(await registry.directory.room(created.code))
        _ = try await room.perform(.end)

        #expect(await registry.directory.classes.classes == nil)
        await registry.directory.classes.followStoredClasses()
        await registry.directory.reloadFinishedRooms(ofClass: "class-1")
        #expect(await registry.directory.room(created.code) === room)
        #expect(transport.closeStatus(1) == nil)
        await registry.shutDown()
    }
}
