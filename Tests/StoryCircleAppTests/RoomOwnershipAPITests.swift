import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// The HTTP API of a node that does not hold the room asked for (`RoomOwnershipTests` has the rest).
@Suite("Room ownership over HTTP")
struct RoomOwnershipAPITests {
    @Test func aRequestForARoomAnotherNodeHoldsIsAnswered503TryAgainWithRetryAfter() async throws {
        let store = MemoryRoomStore()
        let a = ServerFixtures.node("a", store: store)
        let b = ServerFixtures.node("b", store: store)
        let created = try await a.registry.directory.createRoom(story: ServerFixtures.story)
        _ = try #require(try await a.registry.directory.findRoom(created.code))
        let clock = ManualClock()
        let api = APIHandler(
            registry: b.registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin"),
            publicURL: "http://127.0.0.1:8080", startedAt: clock.now(), audio: nil, qrCodes: false
        )
        let response = await api.handle(.testRequest(method: .get, path: "/api/rooms/\(created.code)", headers: ["authorization": "Bearer \(created.teacherToken)"]))
        #expect(response.status == 503)
        #expect(response.headers.contains { $0.name == "retry-after" && $0.value == "2" })
        #expect(String(decoding: response.body, as: UTF8.self).contains("\"try_again\""))
    }}
