import StoryCircleCore
import StoryCircleServer
import StoryCircleServerTesting
import StoryCircleTesting
import Testing

/// What a store offers (`RoomStore.offers`) is named once, and the rooms are run by it: a store offered
/// with its leases is shared (rooms are only loaded where asked for), any other runs its rooms at once.
@Suite("Storage offers")
struct StorageOffersTests {
    @Test func memoryAndTheDoublesOfferWhatTheStoresTheyStandForOffer() {
        let memory = MemoryRoomStore()
        #expect(memory.offers.rooms === memory)
        #expect(memory.offers.classes == nil && memory.offers.library == nil && memory.offers.pictures == nil)
        #expect(memory.offers.leases == nil && !memory.offers.isShared, "one process keeps it: nobody to hand a room to")

        let failing = FailingStore(clock: ManualClock())
        #expect(failing.offers.rooms === failing && !failing.offers.isShared)
        #expect(GatedStore().offers.leases == nil)

        let unreachable = UnreachableLeaseStore()
        #expect(unreachable.offers.leases === unreachable && unreachable.offers.isShared, "it stands for PostgreSQL")
    }

    @Test func aStoreOfThisNodeAloneRunsANewRoomAtOnceAndRestoresItAfterARestart() async throws {
        let store = MemoryRoomStore()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        #expect(await registry.directory.room(created.code) != nil)
        await registry.shutDown()

        let (restarted, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store)
        #expect(try await restarted.directory.restoreRooms() == 1)
        #expect(await restarted.directory.room(created.code) != nil)
        await restarted.shutDown()
    }

    @Test func aSharedStoreRunsARoomOnlyWhereItIsAskedForAndRestoresNothing() async throws {
        let store = MemoryRoomStore()
        let a = ServerFixtures.node("a", store: store)
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        #expect(await a.registry.directory.room(created.code) == nil, "the proxy decides which node runs it")
        #expect(try await a.registry.directory.restoreRooms() == 0)
        #expect(try await a.registry.directory.findRoom(created.code) != nil, "loaded under its lease when asked for")
        #expect(await a.registry.directory.liveRoomCount == 1)
        await a.registry.shutDown()
    }
}
