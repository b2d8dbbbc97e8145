import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import SQLiteStorage
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer

/// The API's table of routes, and the authority each one requires checked over every kind of credential, in
/// process (the pytest suite drives the same routes over sockets).
@Suite("HTTP API: the route table")
struct RouteTableTests {
    /// Every route, as a newcomer would read it: method, pattern, authority. A new route fails here until it
    /// is listed, with the authority it was given.
    static let table = [
        "GET /healthz none", "GET /metrics none", "GET /api/join none",
        "POST /api/rooms teaching", "GET /api/rooms teaching", "GET /api/rooms/:code dashboard", "POST /api/rooms/:code/commands teacher",
        "GET /api/rooms/:code/results teacher", "GET /api/rooms/:code/qr.svg dashboard",
        "POST /api/stories/validate teaching", "POST /api/stories/listen teaching", "GET /api/stories/voices teaching", "GET /api/stories teaching",
        "POST /api/stories teaching", "GET /api/stories/:id story reader", "PUT /api/stories/:id story owner", "DELETE /api/stories/:id story owner",
        "GET /api/classes teaching", "POST /api/classes teaching", "GET /api/classes/:id class teacher", "PUT /api/classes/:id class owner",
        "DELETE /api/classes/:id class owner", "GET /api/classes/:id/report class teacher", "GET /api/classes/:id/results.csv class teacher",
        "DELETE /api/classes/:id/members/:member/data class owner",
        "GET /api/classes/:id/members/:member/data class owner", "GET /api/rooms/:code/players/:player/data teacher",
        "DELETE /api/rooms/:code/players/:player/data teacher", "DELETE /api/rooms/:code teacher",
        "POST /api/pictures teaching", "GET /pictures/:id none",
        "GET /audio/:file none",
        "POST /api/sign-in none",
        "GET /api/schools admin", "POST /api/schools admin", "GET /api/accounts school admin", "POST /api/accounts school admin",
        "GET /api/accounts/:id school admin", "PATCH /api/accounts/:id school admin", "POST /api/accounts/:id/reset school admin", "POST /api/accounts/setup none",
        "GET /api/schools/:id/retention school admin", "PUT /api/schools/:id/retention school admin",
        "POST /api/accounts/:id/adopt admin", "PUT /api/stories/:id/shared story owner",
        "GET /api/audit school admin",
        "POST /api/session none", "GET /api/session signed in", "DELETE /api/session signed in", "POST /api/session/everywhere signed in",
        "POST /api/passkeys/options signed in", "POST /api/passkeys signed in", "GET /api/passkeys signed in", "DELETE /api/passkeys/:id signed in",
        "POST /api/session/passkey/options none", "POST /api/session/passkey none",
        "GET /api/accounts/:id/passkeys school admin", "DELETE /api/accounts/:id/passkeys/:passkey school admin",
        "POST /api/roster/import admin",
    ]

    @Test func everyRouteIsListedWithItsAuthority() {
        #expect(APIHandler.router.routes.map { "\($0.method.rawValue) \($0.pattern) \($0.authority)" } == Self.table)
    }

    @Test func theTransportsPrefixesAndBodyLimitsComeFromTheTable() throws {
        #expect(APIHandler.router.prefixes == ["/healthz", "/metrics", "/api", "/pictures", "/audio"])
        let upload = try #require(APIHandler.router.routes.first { $0.pattern == "/api/pictures" }?.bodyLimit)
        #expect(upload > 1_000_000)
        // A passkey's answer is small: its routes read less than the default.
        #expect(APIHandler.router.bodyLimits == [
            "/api/pictures": upload, "/api/passkeys": PasskeyRoutes.bodyLimit, "/api/session/passkey": PasskeyRoutes.bodyLimit, "/api/roster/import": RosterRoutes.maximumBody,
        ])
        let transport = ClassroomServer.transportConfiguration(ServerConfiguration())
        #expect(transport.dynamicPrefixes == APIHandler.router.prefixes)
        #expect(transport.maxRequestBodyBytesByPath == APIHandler.router.bodyLimits)
    }

    enum Credential: String, CaseIterable {
        /// `forged`: shaped as the room's own token (its code, a random part, a MAC) but not made with the key.
        case none, wrong, forged, admin, teacher, otherTeacher, dashboard
    }

    /// Whether `credential` holds `authority` over the room (and class) the matrix asks about.
    static func admits(_ authority: Authority, _ credential: Credential) -> Bool {
        switch authority {
        case .none: true
        // The owned-thing authorities: the admin token among bearer tokens (accounts: `AuthorizationMatrixTests`).
        case .admin, .schoolAdmin, .teaching, .storyReader, .storyOwner, .classOwner: credential == .admin
        // An account's session, never a bearer token (`SessionRouteTests` signs in).
        case .signedIn: false
        case .teacher, .classTeacher: [.admin, .teacher].contains(credential)
        case .dashboard: [.admin, .teacher, .dashboard].contains(credential)
        }
    }

    /// The status a refused credential gets: 403 where a route says a room's token is the wrong role.
    static func refusal(_ route: Route, _ credential: Credential) -> HTTPStatus {
        if case .adminOnly = route.refusal, credential != .none { return 403 }
        return 401
    }

    @Test func eachRouteAnswersEachCredentialAsItsAuthoritySays() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-routes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
        let clock = ManualClock()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        defer { Task { await registry.shutDown(); await store.close() } }
        let api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true, library: store, classes: store, lookalikes: LookalikeTable()
        )
        let made = await api.handle(.testRequest(
            method: .post, path: "/api/classes", headers: ["authorization": "Bearer admin-token"], body: Array(#"{"name": "1B", "children": [{"name": "Ada", "avatar": "owl"}]}"#.utf8)
        ))
        let id = try #require((try JSONSerialization.jsonObject(with: Data(made.body)) as? [String: Any])?["id"] as? String)
        let schoolClass = try #require(try await store.schoolClass(id))
        let room = try await registry.directory.createRoom(story: ServerFixtures.story, classRoster: ClassRoster(schoolClass))
        let other = try await registry.directory.createRoom(story: ServerFixtures.story)
        let tokens: [Credential: String] = [
            .wrong: "guess", .forged: "\(room.code).\(String(repeating: "0", count: 32)).\(String(repeating: "0", count: 64))", .admin: "admin-token", .teacher: room.teacherToken, .otherTeacher: other.teacherToken, .dashboard: room.dashboardToken,
        ]
        let values = ["code": room.code, "id": schoolClass.id, "member": "mem_nobody", "file": "0000.mp3"]
        for route in APIHandler.router.routes {
            let path = route.pattern.segments.map { segment in
                switch segment {
                case .literal(let text): text
                case .parameter(let name): values[name] ?? name
                }
            }.joined(separator: "/")
            for credential in Credential.allCases {
                let headers = tokens[credential].map { ["authorization": "Bearer \($0)"] } ?? [:]
                // Bodies that no handler acts on: what matters is whether the handler was reached.
                let response = await api.handle(.testRequest(method: route.method, path: "/" + path, headers: headers, body: Array("{}".utf8)))
                let shown = "\(route.method.rawValue) \(route.pattern) with \(credential)"
                if Self.admits(route.authority, credential) {
                    #expect(![401, 403].contains(response.status.code), "\(shown): \(response.status)")
                } else {
                    #expect(response.status == Self.refusal(route, credential), "\(shown): \(response.status)")
                }
            }
        }
        // Nothing an admitted request did removed what the matrix asked about.
        #expect(try await store.schoolClass(schoolClass.id) != nil)
    }

    @Test func aRefusedRequestNeverReachesItsHandler() async throws {
        let reached = Reached()
        let router = Router([Probe(reached: reached)])
        let clock = ManualClock()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: MemoryRoomStore(), clock: clock)
        let api = APIHandler(
            registry: registry, store: MemoryRoomStore(), clock: clock, metrics: ServerMetrics(), transportMetrics: nil,
            adminTokenHash: RoomCredentials.hash("admin-token"), publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true
        )
        let room = try await registry.directory.createRoom(story: ServerFixtures.story)
        for (path, token) in [("/probe", nil), ("/probe", "guess"), ("/probe/\(room.code)", room.dashboardToken), ("/probe/999999", "admin-token")] {
            let response = await router.respond(to: .testRequest(method: .post, path: path, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:]), with: api)
            #expect([401, 404].contains(response.status.code), "\(path)")
        }
        #expect(await reached.count == 0)
        #expect(await router.respond(to: .testRequest(method: .post, path: "/probe/\(room.code)", headers: ["authorization": "Bearer \(room.teacherToken)"]), with: api).status == 204)
        #expect(await reached.count == 1)
        // The path decides 405 before any token is looked at; HEAD goes wherever GET does.
        let wrongMethod = await router.respond(to: .testRequest(method: .put, path: "/probe"), with: api)
        #expect(wrongMethod.status == 405 && wrongMethod.header("allow") == "POST")
    }

    actor Reached {
        var count = 0
        func reach() { count += 1 }
    }

    struct Probe: RouteCollection {
        let reached: Reached
        var routes: [Route] {
            [
                Route(.post, "/probe", .admin) { _, _ in await reached.reach(); return HTTPResponse(status: 204) },
                Route(.post, "/probe/:code", .teacher) { _, _ in await reached.reach(); return HTTPResponse(status: 204) },
            ]
        }
    }
}
