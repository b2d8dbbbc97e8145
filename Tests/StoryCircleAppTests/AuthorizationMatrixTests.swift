import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import SQLiteStorage
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer
@testable import StoryCircleServerTesting

/// Every route of the router × every kind of asker, against the room, class and story of teacher A: who
/// gets past the router and who is refused, as the route's authority and `OwnershipRules` say. The routes
/// are read from the router itself (`APIHandler.router.routes`): a new route without its line in
/// `expected` fails here. (`RouteTableTests` holds the bearer tokens to the same table; this adds accounts.)
@Suite("HTTP API: the authorization matrix")
struct AuthorizationMatrixTests {
    enum Asker: String, CaseIterable, CustomStringConvertible {
        case anonymous, dashboardToken, teacherToken, teacherA, teacherB, teacherC, schoolAdminA, schoolAdminOther, districtAdmin, adminToken
        var description: String { rawValue }
    }

    static let everyone = Set(Asker.allCases)
    static let accounts: Set<Asker> = [.teacherA, .teacherB, .teacherC, .schoolAdminA, .schoolAdminOther, .districtAdmin]
    /// Teachers and school administrators make their own rooms, classes, stories and pictures and list what
    /// they may see; a district administrator sees no children's data; the admin token sees everything.
    static let teaching: Set<Asker> = [.teacherA, .teacherB, .teacherC, .schoolAdminA, .schoolAdminOther, .adminToken]
    /// A's own things: A, the administrator of A's school, the admin token.
    static let ownersOfA: Set<Asker> = [.teacherA, .schoolAdminA, .adminToken]
    static let roomTeacher = ownersOfA.union([.teacherToken])
    static let roomDashboard = roomTeacher.union([.dashboardToken])
    static let admin: Set<Asker> = [.districtAdmin, .adminToken]
    /// Accounts and the audit trail: every school administrator (their own school's), and the district's.
    static let administrators = admin.union([.schoolAdminA, .schoolAdminOther])
    /// Teacher A's account: A's school administrator, and the district's.
    static let administratorsOfA = admin.union([.schoolAdminA])

    /// Who gets past the router, by route (teacher A's story is not shared here).
    static let expected: [String: Set<Asker>] = [
        "GET /healthz": everyone, "GET /metrics": everyone, "GET /api/join": everyone, "GET /pictures/:id": everyone,
        "GET /audio/:file": everyone, "POST /api/sign-in": everyone, "POST /api/session": everyone,
        "GET /api/session": accounts, "DELETE /api/session": accounts, "POST /api/session/everywhere": accounts,
        "POST /api/rooms": teaching, "GET /api/rooms": teaching,
        "GET /api/rooms/:code": roomDashboard, "POST /api/rooms/:code/commands": roomTeacher, "GET /api/rooms/:code/results": roomTeacher,
        "GET /api/rooms/:code/qr.svg": roomDashboard,
        "POST /api/stories/validate": teaching, "POST /api/stories/listen": teaching, "GET /api/stories/voices": teaching,
        "GET /api/stories": teaching, "POST /api/stories": teaching,
        "GET /api/stories/:id": ownersOfA, "PUT /api/stories/:id": ownersOfA, "DELETE /api/stories/:id": ownersOfA,
        "PUT /api/stories/:id/shared": ownersOfA,
        "GET /api/classes": teaching, "POST /api/classes": teaching,
        "GET /api/classes/:id": roomTeacher, "GET /api/classes/:id/report": roomTeacher, "GET /api/classes/:id/results.csv": roomTeacher,
        "PUT /api/classes/:id": ownersOfA, "DELETE /api/classes/:id": ownersOfA, "DELETE /api/classes/:id/members/:member/data": ownersOfA,
        "GET /api/classes/:id/members/:member/data": ownersOfA, "GET /api/rooms/:code/players/:player/data": roomTeacher,
        "DELETE /api/rooms/:code/players/:player/data": roomTeacher, "DELETE /api/rooms/:code": roomTeacher,
        "POST /api/pictures": teaching,
        "POST /api/accounts/:id/adopt": admin, "GET /api/audit": administrators, "POST /api/roster/import": admin,
        "GET /api/schools": admin, "POST /api/schools": admin, "GET /api/accounts": administrators, "POST /api/accounts": administrators,
        "GET /api/accounts/:id": administratorsOfA, "PATCH /api/accounts/:id": administratorsOfA, "POST /api/accounts/:id/reset": administratorsOfA,
        "GET /api/accounts/:id/passkeys": administratorsOfA, "DELETE /api/accounts/:id/passkeys/:passkey": administratorsOfA,
        // A's school's retention: its administrator's and the district's.
        "GET /api/schools/:id/retention": administratorsOfA, "PUT /api/schools/:id/retention": administratorsOfA,
        // The setup link's code is its authority: the router lets everyone through to the code's check.
        "POST /api/accounts/setup": everyone,
        // A passkey is the signed-in account's own; signing in with one is open to its signature's check.
        "POST /api/passkeys/options": accounts, "POST /api/passkeys": accounts, "GET /api/passkeys": accounts, "DELETE /api/passkeys/:id": accounts,
        "POST /api/session/passkey/options": everyone, "POST /api/session/passkey": everyone,
    ]

    /// The codes the router and the owners' check refuse with; an admitted asker gets none of them.
    static let refusalCodes: Set<String> = ["unauthorized", "wrong_role", "csrf_failed", "story_not_found", "rate_limited"]
    /// The routes of a room, or of a class opened through one of its rooms: a stranger is told what a wrong
    /// token is told (401), so that the answers say nothing about which codes and classes exist.
    static let roomRoutes: Set<String> = ["GET /api/classes/:id", "GET /api/classes/:id/report", "GET /api/classes/:id/results.csv"]
    static func peers(_ asker: Asker) -> Set<Asker> {
        switch asker {
        case .teacherA, .teacherB, .teacherC: [.teacherA, .teacherB, .teacherC]
        case .schoolAdminA, .schoolAdminOther: [.schoolAdminA, .schoolAdminOther]
        default: [asker]
        }
    }

    /// The exact refusal of an asker the route does not admit: no credential, or a credential of another
    /// kind, is 401; a room's token on the library's and the administrators' routes, and an account whose
    /// role never may, 403 `wrong_role`; an account whose role may, but not for A's things, 404 for a story,
    /// an account or a school (as a missing one) and 401 for a room or class (as a wrong token).
    static func refusal(_ line: String, _ asker: Asker, admitted: Set<Asker>) -> (status: Int, code: String) {
        let unauthorized = (401, "unauthorized")
        switch asker {
        case .anonymous, .adminToken:
            return unauthorized
        case .dashboardToken, .teacherToken:
            return line.contains("/api/stories") || ["POST /api/accounts/:id/adopt", "POST /api/roster/import"].contains(line) ? (403, "wrong_role") : unauthorized
        default:
            if line.contains("/api/rooms/:code") || roomRoutes.contains(line) { return unauthorized }
            guard !admitted.isDisjoint(with: peers(asker)) else { return (403, "wrong_role") }
            if line.contains("/api/stories/:id") { return (404, "story_not_found") }
            // Another school's account, to its school's administrator: as unknown as a missing one.
            if line.contains("/api/accounts/:id") { return (404, "account_not_found") }
            if line.contains("/api/schools/:id") { return (404, "school_not_found") }
            return unauthorized
        }
    }

    @Test func everyRouteOfTheRouterHasItsLine() {
        let routes = Set(APIHandler.router.routes.map { "\($0.method.rawValue) \($0.pattern)" })
        #expect(routes.subtracting(Self.expected.keys).isEmpty, "routes without a line: \(routes.subtracting(Self.expected.keys).sorted())")
        #expect(Set(Self.expected.keys).subtracting(routes).isEmpty, "lines without a route: \(Set(Self.expected.keys).subtracting(routes).sorted())")
    }

    @Test func everyRouteAnswersEveryAskerAsTheRulesSay() async throws {
        let world = try await World()
        defer { world.close() }
        for route in APIHandler.router.routes {
            let line = "\(route.method.rawValue) \(route.pattern)"
            let admitted = try #require(Self.expected[line], "\(line) has no line")
            for asker in Asker.allCases {
                let response = await world.ask(asker, route.method, world.path(route.pattern), body: "{}")
                let code = World.code(response) ?? "-"
                if admitted.contains(asker) {
                    // Past the router: whatever the handler answers, it is not a refusal of the asker.
                    #expect(![401, 403].contains(response.status.code) && !Self.refusalCodes.contains(code), "\(line) as \(asker): \(response.status) \(code)")
                } else {
                    let refusal = Self.refusal(line, asker, admitted: admitted)
                    #expect(response.status.code == refusal.status && code == refusal.code, "\(line) as \(asker): \(response.status) \(code), not \(refusal)")
                }
            }
        }
        // Nothing any request did removed what the matrix asked about.
        #expect(try await world.store.story(world.story.entry.id) != nil)
        #expect(try await world.store.schoolClass(world.schoolClass.id) != nil)
        #expect(try await world.store.archive(room: world.room.code) != nil)
    }

    /// Every route that changes something and takes a session: a signed-in browser's request without the
    /// session's CSRF token, or with another one, is refused 403 `csrf_failed`, whoever the account is.
    @Test func everyChangeASessionMayMakeNeedsItsCSRFToken() async throws {
        let world = try await World()
        defer { world.close() }
        var tried = 0
        for route in APIHandler.router.routes where route.method != .get && route.method != .head {
            let line = "\(route.method.rawValue) \(route.pattern)"
            // Routes open to everyone take no session (signing in, the setup link): nothing to forge.
            guard let admitted = Self.expected[line], admitted != Self.everyone else { continue }
            for asker in Asker.allCases where Self.accounts.contains(asker) {
                for csrf in [World.CSRF.missing, .wrong] {
                    let response = await world.ask(asker, route.method, world.path(route.pattern), body: "{}", csrf: csrf)
                    #expect(response.status == 403 && World.code(response) == "csrf_failed", "\(line) as \(asker), CSRF \(csrf): \(response.status)")
                    tried += 1
                }
            }
        }
        #expect(tried >= 20 * Self.accounts.count * 2, "\(tried)")
        #expect(try await world.store.story(world.story.entry.id) != nil)
        #expect(try await world.store.schoolClass(world.schoolClass.id) != nil)
    }

    @Test func aSharedStoryIsReadAndDuplicatedByTheSchoolButChangedOnlyByItsOwner() async throws {
        let world = try await World()
        defer { world.close() }
        let path = "/api/stories/\(world.story.entry.id)"
        #expect(await world.ask(.teacherB, .get, path).status == 404, "not shared yet: as unknown as a missing story")
        #expect(await world.ask(.teacherA, .put, path + "/shared", body: #"{"shared": true}"#).status == 200)
        #expect(await world.ask(.teacherB, .get, path).status == 200)
        #expect(await world.ask(.teacherB, .put, path, body: "{}").status == 403)
        #expect(await world.ask(.teacherB, .delete, path).status == 403)
        #expect(await world.ask(.teacherC, .get, path).status == 404, "another school")
        // Duplicating: B reads it and saves a copy, which is B's.
        let read = try JSONSerialization.jsonObject(with: Data(await world.ask(.teacherB, .get, path).body)) as? [String: Any]
        let story = try #require(read?["story"])
        let copy = await world.ask(.teacherB, .post, "/api/stories", body: String(decoding: try JSONSerialization.data(withJSONObject: ["story": story]), as: UTF8.self))
        #expect(copy.status == 201)
        let copyID = try #require((try JSONSerialization.jsonObject(with: Data(copy.body)) as? [String: Any])?["id"] as? String)
        #expect(try await world.store.story(copyID)?.entry.owner == Owner(world.b))
        // And a room from A's shared story, owned by B.
        let room = await world.ask(.teacherB, .post, "/api/rooms", body: #"{"storyId": "\#(world.story.entry.id)"}"#)
        #expect(room.status == 201)
        let code = try #require((try JSONSerialization.jsonObject(with: Data(room.body)) as? [String: Any])?["code"] as? String)
        #expect(try await world.store.archive(room: code)?.header.owner == Owner(world.b))
    }

    @Test func listsShowEachAskerWhatTheyMaySeeAndWhatTheyMakeIsTheirs() async throws {
        let world = try await World()
        defer { world.close() }
        let made = await world.ask(.teacherB, .post, "/api/classes", body: #"{"name": "2C", "children": [{"name": "Kim", "avatar": "owl"}]}"#)
        #expect(made.status == 201)
        func ids(_ asker: Asker, _ path: String, _ key: String, _ field: String) async throws -> Set<String> {
            let body = try JSONSerialization.jsonObject(with: Data(await world.ask(asker, .get, path).body)) as? [String: Any]
            return Set(((body?[key] as? [[String: Any]]) ?? []).compactMap { $0[field] as? String })
        }
        let classOfB = try #require(try await world.store.listClasses(scope: .account(world.b.id, schoolID: world.b.schoolID)).first)
        #expect(classOfB.owner == Owner(world.b))
        #expect(try await ids(.teacherA, "/api/classes", "classes", "id") == [world.schoolClass.id])
        #expect(try await ids(.teacherB, "/api/classes", "classes", "id") == [classOfB.id])
        #expect(try await ids(.schoolAdminA, "/api/classes", "classes", "id") == [world.schoolClass.id, classOfB.id])
        #expect(try await ids(.schoolAdminOther, "/api/classes", "classes", "id") == [])
        #expect(try await ids(.teacherC, "/api/classes", "classes", "id") == [])
        #expect(try await ids(.adminToken, "/api/classes", "classes", "id") == [world.schoolClass.id, classOfB.id])
        #expect(try await ids(.teacherA, "/api/rooms", "rooms", "code") == [world.room.code])
        #expect(try await ids(.teacherB, "/api/rooms", "rooms", "code") == [])
        #expect(try await ids(.schoolAdminA, "/api/rooms", "rooms", "code") == [world.room.code])
        #expect(try await ids(.teacherA, "/api/stories", "stories", "id") == [world.story.entry.id])
        #expect(try await ids(.teacherB, "/api/stories", "stories", "id") == [])
        #expect(await world.ask(.districtAdmin, .get, "/api/rooms").status == 403)
    }

    /// A server with accounts in two schools, and teacher A's story, class and a room of both.
    final class World: @unchecked Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-matrix-\(UUID().uuidString)")
        let store: SQLiteRoomStore
        let registry: RoomRegistry
        let sessions: SessionDesk
        let api: APIHandler
        let a, b: Account
        let people: [Asker: Account]
        let story: StoredStory
        let schoolClass: SchoolClass
        let room: CreatedRoom

        init() async throws {
            store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
            let clock = ManualClock()
            (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
            let book = MemoryAccountBook(now: { clock.now() })
            sessions = SessionDesk(book: book, clock: clock) { _, _ in false }
            api = APIHandler(
                registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
                publicURL: "https://192.0.2.1:8443", startedAt: clock.now(), audio: nil, qrCodes: true, library: store, classes: store, pictures: store,
                childData: store, lookalikes: LookalikeTable(), accounts: book, ownership: store, sessions: sessions, auditTrail: AuditTrail(log: store),
                retention: store
            )
            let north = try await book.createSchool(name: "North")
            let south = try await book.createSchool(name: "South")
            func person(_ login: String, _ role: AccountRole, _ school: School?) async throws -> Account {
                try await book.createAccount(AccountDraft(login: login, displayName: login, role: role, schoolID: school?.id))
            }
            a = try await person("a", .teacher, north)
            b = try await person("b", .teacher, north)
            people = [
                .teacherA: a, .teacherB: b, .teacherC: try await person("c", .teacher, south), .schoolAdminA: try await person("n", .schoolAdmin, north),
                .schoolAdminOther: try await person("s", .schoolAdmin, south), .districtAdmin: try await person("d", .districtAdmin, nil),
            ]
            story = try await store.createStory(ServerFixtures.story, by: "A", owner: Owner(a))
            schoolClass = try await store.createClass(ClassDraft(name: "1B", nameKeys: ["1b"], children: [.init(name: "Ada", avatar: "owl")], owner: Owner(a)))
            room = try await registry.directory.createRoom(story: ServerFixtures.story, storyID: story.entry.id, classRoster: ClassRoster(schoolClass), owner: Owner(a))
        }

        func close() {
            let (registry, store, folder) = (registry, store, folder)
            Task {
                await registry.shutDown()
                await store.close()
                try? FileManager.default.removeItem(at: folder)
            }
        }

        /// The pattern with A's things in it (`:id` is the story, class or account its resource names).
        func path(_ pattern: RoutePattern) -> String {
            let id = switch pattern.description {
            case let text where text.hasPrefix("/api/stories"): story.entry.id
            case let text where text.hasPrefix("/api/classes"): schoolClass.id
            case let text where text.hasPrefix("/api/accounts"): a.id
            case let text where text.hasPrefix("/api/schools"): a.schoolID ?? ""
            default: String(repeating: "0", count: 64)
            }
            let values = ["code": room.code, "id": id, "member": "mem_nobody", "player": "p1", "file": "0000.mp3"]
            return "/" + pattern.segments.map { segment in
                switch segment {
                case .literal(let text): text
                case .parameter(let name): values[name] ?? name
                }
            }.joined(separator: "/")
        }

        enum CSRF { case right, missing, wrong }

        /// A refusal's error code (`error.code` of the body), if any.
        static func code(_ response: HTTPResponse) -> String? {
            let body = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            return (body?["error"] as? [String: Any])?["code"] as? String
        }

        /// A request as `asker` makes it: a bearer token, or a browser freshly signed in (cookie and CSRF
        /// token, or `csrf` without its token or with another).
        func ask(_ asker: Asker, _ method: HTTPMethod, _ path: String, body: String = "", csrf: CSRF = .right) async -> HTTPResponse {
            var headers: [String: String] = [:]
            switch asker {
            case .anonymous: break
            case .dashboardToken: headers["authorization"] = "Bearer \(room.dashboardToken)"
            case .teacherToken: headers["authorization"] = "Bearer \(room.teacherToken)"
            case .adminToken: headers["authorization"] = "Bearer admin-token"
            default:
                guard let account = people[asker], let (token, record) = try? await sessions.start(account, method: "password") else {
                    Issue.record("no session for \(asker)")
                    return HTTPResponse(status: 500, contentType: "text/plain", body: [])
                }
                headers["cookie"] = "__Host-storycircle_session=\(token)"
                switch csrf {
                case .right: headers["x-csrf-token"] = record.csrfToken
                case .missing: break
                case .wrong: headers["x-csrf-token"] = SessionCookies.newToken()
                }
            }
            return await api.handle(.testRequest(method: method, path: path, headers: headers, body: Array(body.utf8)))
        }
    }
}
