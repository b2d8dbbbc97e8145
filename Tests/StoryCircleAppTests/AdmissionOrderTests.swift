import Foundation
import Locking
import Testing
import TransportCore
import WebSocketTransportTesting
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer
@testable import StoryCircleServerTesting
@testable import StoryCircleTesting

/// Authority before work: a request whose token proves nothing for the room it names is refused before
/// the store is read, a lease is taken or a room is loaded, and in the same way whether the room exists.
@Suite("HTTP API: authority first")
struct AdmissionOrderTests {
    /// A node that does not hold the room in memory (as after a restart, or in a cluster), over a store
    /// that counts every call; the room was made by another node sharing the key.
    struct Setting {
        let store: CountingStore
        let room: CreatedRoom
        let api: APIHandler
        let lines: Locked<[String]>
    }

    static func setting(limits: RefusedRequests.Limits = .init()) async throws -> Setting {
        let store = CountingStore()
        let maker = ServerFixtures.node("maker", store: store)
        let room = try await maker.registry.directory.createRoom(story: ServerFixtures.story)
        let node = ServerFixtures.node("other", store: store)
        let clock = ManualClock()
        let lines = Locked<[String]>([])
        let logger = StoryCircleLog(label: "test", minimumLevel: .info, sink: { line in lines.withLock { $0.append(line) } })
        let api = APIHandler(
            registry: node.registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true, refused: RefusedRequests(limits: limits, logger: logger)
        )
        store.reset()
        return Setting(store: store, room: room, api: api, lines: lines)
    }

    @Test func aTokenThatProvesNothingReadsNothingLeasesNothingAndLoadsNothing() async throws {
        let setting = try await Self.setting()
        let (store, room, api) = (setting.store, setting.room, setting.api)
        let other = ServerFixtures.clusterTokens.teacherToken(room: "999999")
        let wrongKey = RoomTokens.ephemeral().teacherToken(room: room.code)
        var tampered = Array(room.teacherToken)
        tampered[tampered.count - 1] = tampered.last == "0" ? "1" : "0"
        let attempts: [(path: String, token: String?)] = [
            ("/api/rooms/\(room.code)", nil), ("/api/rooms/\(room.code)", "guess"), ("/api/rooms/\(room.code)", String(tampered)),
            ("/api/rooms/\(room.code)", wrongKey), ("/api/rooms/\(room.code)", other), ("/api/rooms/999999", room.teacherToken),
            ("/api/rooms/999999", "guess"), ("/api/rooms/\(room.code)/results", room.dashboardToken), ("/api/rooms/\(room.code)/commands", "admin"),
        ]
        for attempt in attempts {
            let method: HTTPMethod = attempt.path.hasSuffix("commands") ? .post : .get
            let response = await api.handle(.testRequest(method: method, path: attempt.path, headers: attempt.token.map { ["authorization": "Bearer \($0)"] } ?? [:]))
            #expect(response.status == 401, "\(attempt.path) \(attempt.token?.prefix(8) ?? "none")")
        }
        #expect(store.total == 0, "\(store.counts)")
        #expect(await api.registry.directory.room(room.code) == nil)
        // The room's own token does load it: the counting store would have seen a refused one.
        let admitted = await api.handle(.testRequest(method: .get, path: "/api/rooms/\(room.code)", headers: ["authorization": "Bearer \(room.dashboardToken)"]))
        #expect(admitted.status == 200)
        #expect(store.counts["archive"] == 1 && store.counts["acquire"] == 1)
    }

    @Test func aCodeThatIsNoRoomIsNeverLeased() async throws {
        let setting = try await Self.setting()
        let response = await setting.api.handle(.testRequest(method: .get, path: "/api/rooms/999999", headers: ["authorization": "Bearer admin-token"]))
        #expect(response.status == 404)
        #expect(setting.store.counts["codeExists"] == 1)
        #expect(setting.store.counts["acquire"] == nil && setting.store.counts["archive"] == nil)
    }

    @Test func aRefusedBodyIsAnsweredFromItsHeadAndOnlyAProvedOneMaySendTheLargeLimit() async throws {
        let setting = try await Self.setting()
        let (api, room) = (setting.api, setting.room)
        let router = APIHandler.router
        func head(_ method: HTTPMethod, _ path: String, _ token: String?) -> HeadAdmission {
            router.admitHead(.testRequest(method: method, path: path, headers: token.map { ["authorization": "Bearer \($0)", "content-length": "8388608"] } ?? ["content-length": "8388608"]), with: api, defaultBodyLimit: 1_000)
        }
        let upload = try #require(router.routes.first { $0.pattern == "/api/pictures" }?.bodyLimit)
        #expect(head(.post, "/api/pictures", "admin-token") == .read(bodyLimit: upload))
        for token in [nil, "x", room.teacherToken] {
            guard case .answer(let response) = head(.post, "/api/pictures", token) else {
                Issue.record("a picture upload with \(token?.prefix(6) ?? "no token") was read")
                continue
            }
            #expect([401, 403].contains(response.status.code))
        }
        // A room's route: the room's token proves it from the head; a guess is answered from the head.
        #expect(head(.post, "/api/rooms/\(room.code)/commands", room.teacherToken) == .read(bodyLimit: 1_000))
        guard case .answer(let refused) = head(.post, "/api/rooms/\(room.code)/commands", "guess") else {
            Issue.record("a guessed token's command was read")
            return
        }
        #expect(refused.status == 401)
        // Routes anyone may call, and paths of no route, keep the default.
        #expect(head(.get, "/healthz", "guess") == .read(bodyLimit: 1_000))
        #expect(head(.get, "/api/nothing", nil) == .read(bodyLimit: 1_000))
        #expect(setting.store.total == 0)
    }

    @Test func refusalsPastTheBurstAreToldToWaitAndLoggedOncePerBurstWithoutTheToken() async throws {
        let setting = try await Self.setting(limits: RefusedRequests.Limits(burst: 3, perSecond: 0.5))
        let (api, room) = (setting.api, setting.room)
        let secret = "guess-\(UUID().uuidString)"
        var statuses: [Int] = []
        var retryAfter: String?
        for _ in 0..<6 {
            let response = await api.handle(.testRequest(method: .get, path: "/api/rooms/\(room.code)", headers: ["authorization": "Bearer \(secret)"], peer: "10.1.1.1"))
            statuses.append(response.status.code)
            if response.status.code == 429 { retryAfter = response.header("retry-after") }
        }
        #expect(statuses == [401, 401, 401, 429, 429, 429])
        #expect(retryAfter == "2")
        // Another address is not held up, nor is a valid token from this one.
        #expect(await api.handle(.testRequest(method: .get, path: "/api/rooms/\(room.code)", headers: ["authorization": "Bearer x"], peer: "10.1.1.2")).status == 401)
        #expect(await api.handle(.testRequest(method: .get, path: "/api/rooms/\(room.code)", headers: ["authorization": "Bearer \(room.teacherToken)"], peer: "10.1.1.1")).status == 200)
        let lines = setting.lines.withLock { $0 }.filter { $0.contains("10.1.1.1") }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { $0.contains("GET /api/rooms/:code") && !$0.contains(secret) && !$0.contains(room.teacherToken) })
    }
}
