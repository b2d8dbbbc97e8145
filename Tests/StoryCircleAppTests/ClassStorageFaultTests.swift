import Foundation
import Locking
import StoryCircleServerTesting
import StoryCircleTesting
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// Rooms in memory, and a class book whose reads fail while the test says so.
final class FlakyClassStore: RoomStore, ClassBook {
    struct Faults {
        var classReads = false
        var roomListing = false
    }

    let memory = MemoryRoomStore()
    let faults = Locked(Faults())
    let stored: SchoolClass
    let erased = Locked<[String]>([])

    init(_ stored: SchoolClass) { self.stored = stored }

    private func failure() -> StoreFailure { StoreFailure(.unavailable, record: "class", reason: "disk gone") }

    func createRoom(_ header: RoomHeader) async throws { try await memory.createRoom(header) }
    func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        memory.append(record, room: code, resuming: resuming, whenDurable: whenDurable)
    }
    func archive(room code: String) async throws -> RoomArchive? { try await memory.archive(room: code) }
    func unfinishedRooms() async throws -> [RoomArchive] { try await memory.unfinishedRooms() }
    func summaries() async throws -> [RoomSummary] { try await memory.summaries() }
    func codeExists(_ code: String) async throws -> Bool { try await memory.codeExists(code) }
    func purge(createdBefore cutoff: ServerTime) async throws -> Int { try await memory.purge(createdBefore: cutoff) }
    var health: StoreHealth { memory.health }
    var offers: Storage { Storage(rooms: self, classes: self) }
    func probe() async -> StoreHealth { await memory.probe() }
    func close() async { await memory.close() }

    func listClasses() async throws -> [ClassEntry] { [stored.entry] }
    func schoolClass(_ id: String) async throws -> SchoolClass? {
        if faults.withLock({ $0.classReads }) { throw failure() }
        return id == stored.id ? stored : nil
    }
    func createClass(_ draft: ClassDraft) async throws -> SchoolClass { throw failure() }
    func updateClass(_ id: String, to draft: ClassDraft, basedOn version: Int) async throws -> SchoolClass { throw failure() }
    func deleteClass(_ id: String) async throws { throw failure() }
    func eraseMember(_ member: String, ofClass id: String) async throws { erased.withLock { $0.append(member) } }
    func classRooms(_ id: String) async throws -> [RoomArchive] {
        if faults.withLock({ $0.roomListing }) { throw failure() }
        return []
    }
}

@Suite("Class storage faults")
struct ClassStorageFaultTests {
    static let schoolClass = SchoolClass(
        id: "cls_faults", name: "1A", version: 1, changedAt: ServerTime(milliseconds: 0),
        members: [ClassMember(id: "mem_ada", name: "Ada", avatar: "owl")]
    )

    @Test func anEraseThatCommittedAnswers204EvenWhenTheRoomsCannotBeListedAfterwards() async throws {
        let store = FlakyClassStore(Self.schoolClass)
        store.faults.withLock { $0.roomListing = true }
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store)
        let clock = ManualClock()
        let api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil,
            adminTokenHash: RoomCredentials.hash("admin-token"), publicURL: "http://127.0.0.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true,
            classes: store, lookalikes: LookalikeTable()
        )
        let response = await api.handle(.testRequest(
            method: .delete, path: "/api/classes/cls_faults/members/mem_ada/data", query: [:],
            headers: ["authorization": "Bearer admin-token"], body: []
        ))
        #expect(response.status == 204)
        #expect(store.erased.withLock { $0 } == ["mem_ada"])
    }

    @Test func aClassRoomWhoseClassCannotBeReadIsNotRunWithAnEmptyRosterAndLoadsOnceItCanBe() async throws {
        let store = FlakyClassStore(Self.schoolClass)
        let (first, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store)
        let created = try await first.directory.createRoom(story: ServerFixtures.story, classRoster: ClassRoster(Self.schoolClass))

        // A restart while the class cannot be read.
        store.faults.withLock { $0.classReads = true }
        let (second, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store)
        _ = try await second.directory.restoreRooms()
        #expect(await second.directory.room(created.code) == nil, "not restored without its class")
        await #expect(throws: StoreFailure.self) { try await second.directory.findRoom(created.code) }
        #expect(await second.directory.room(created.code) == nil)

        store.faults.withLock { $0.classReads = false }
        let room = try #require(try await second.directory.findRoom(created.code))
        #expect(await room.classRoster == ClassRoster(Self.schoolClass))
    }
}
