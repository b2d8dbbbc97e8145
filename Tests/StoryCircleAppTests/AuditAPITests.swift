import Foundation
import Testing
import TransportCore
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// An audit trail that cannot store a row (a full disk, a revoked grant): every read it would record is refused.
private final class RefusingAuditLog: AuditLog {
    func append(_ event: AuditEvent) async throws -> AuditEntry { throw StoreFailure(.unavailable, record: "audit", reason: "database or disk is full") }
    func entries(_ query: AuditQuery) async throws -> AuditPage { throw StoreFailure(.unavailable, record: "audit", reason: "database or disk is full") }
    func prune(before cutoff: ServerTime) async throws -> Int { 0 }
}

@Suite("Audit trail over the API")
struct AuditAPITests {
    let transport = RecordingTransport()
    let store = MemoryRoomStore()
    let clock = ManualClock()
    let registry: RoomRegistry

    init() {
        (registry, _) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
    }

    private func api(_ log: any AuditLog) -> APIHandler {
        APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "http://192.168.1.20:8080", startedAt: clock.now(), audio: nil, qrCodes: true, auditTrail: AuditTrail(log: log)
        )
    }

    private func request(_ api: APIHandler, _ method: HTTPMethod, _ path: String, token: String? = nil, body: String? = nil, query: [String: String] = [:]) async -> HTTPResponse {
        await api.handle(.testRequest(method: method, path: path, query: query, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:], body: Array((body ?? "").utf8), peer: "198.51.100.4"))
    }

    private func json(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// A room made with the admin token: its code and teacher token.
    private func createRoom(_ api: APIHandler) async throws -> (code: String, teacher: String) {
        let story = String(decoding: try Fixtures.sampleStoryData(), as: UTF8.self)
        let response = await request(api, .post, "/api/rooms", token: "admin-token", body: #"{"story": \#(story)}"#)
        #expect(response.status == 201)
        let room = try json(response)
        return (try #require(room["code"] as? String), try #require(room["teacherToken"] as? String))
    }

    @Test func readingResultsLeavesARowNamingTheRoomNeverTheToken() async throws {
        let api = api(store.auditLog)
        let room = try await createRoom(api)
        #expect(await request(api, .get, "/api/rooms/\(room.code)/results", token: room.teacher).status == 200)
        #expect(await request(api, .get, "/api/rooms/\(room.code)/results", token: "admin-token", query: ["format": "csv"]).status == 200)
        // A refused read and a bad format record nothing.
        #expect(await request(api, .get, "/api/rooms/\(room.code)/results", token: "wrong").status == 401)
        #expect(await request(api, .get, "/api/rooms/\(room.code)/results", token: room.teacher, query: ["format": "xml"]).status == 400)

        let rows = try await store.auditLog.entries(AuditQuery()).entries
        #expect(rows.map(\.event.action) == [.exportCSV, .readRoomResults])
        #expect(rows.map(\.event.target) == ["room:\(room.code)", "room:\(room.code)"])
        #expect(rows.map(\.event.actor) == [AuditActor(kind: .adminToken), AuditActor(kind: .roomTeacher, room: room.code)])
        #expect(rows.allSatisfy { $0.event.address == "198.51.100.4" && $0.event.at == clock.now() })

        let listed = await request(api, .get, "/api/audit", token: "admin-token")
        #expect(listed.status == 200)
        let text = String(decoding: listed.body, as: UTF8.self)
        #expect(!text.contains(room.teacher) && !text.contains(String(room.teacher.split(separator: ".")[1])), "no token, nor a part of one")
        let entries = try #require(try json(listed)["entries"] as? [[String: Any]])
        #expect(entries.map { $0["action"] as? String } == ["export_csv", "read_room_results"])
        #expect((entries[1]["actor"] as? [String: Any])?["kind"] as? String == "room_teacher")
        #expect((entries[1]["actor"] as? [String: Any])?["room"] as? String == room.code)
    }

    @Test func aReadThatCannotBeRecordedIsRefused() async throws {
        let working = api(store.auditLog)
        let room = try await createRoom(working)
        let refusing = api(RefusingAuditLog())
        for format in ["json", "csv"] {
            let response = await request(refusing, .get, "/api/rooms/\(room.code)/results", token: room.teacher, query: ["format": format])
            #expect(response.status == 503)
            #expect(try json(response)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } == "storage_unavailable")
            #expect(!String(decoding: response.body, as: UTF8.self).contains("Pip"), "nothing of the results")
        }
    }

    @Test func theTrailNeedsTheAdminToken() async throws {
        let api = api(store.auditLog)
        let room = try await createRoom(api)
        #expect(await request(api, .get, "/api/audit").status == 401)
        #expect(await request(api, .get, "/api/audit", token: "guess").status == 401)
        #expect(await request(api, .get, "/api/audit", token: room.teacher).status == 401)
        #expect(await request(api, .post, "/api/audit", token: "admin-token").status == 405)
    }

    @Test func pagesAreBoundedAndFollowTheirCursor() async throws {
        let api = api(store.auditLog)
        for index in 0..<5 {
            try await store.auditLog.append(AuditEvent(at: ServerTime(milliseconds: Int64(index)), actor: AuditActor(kind: .adminToken), action: .readClassReport, target: "class:cls_\(index)", address: "x"))
        }
        let first = await request(api, .get, "/api/audit", token: "admin-token", query: ["limit": "2"])
        let body = try json(first)
        #expect((body["entries"] as? [[String: Any]])?.map { $0["target"] as? String } == ["class:cls_4", "class:cls_3"])
        let next = try #require(body["next"] as? Int)
        #expect(first.header("x-audit-next") == String(next))
        let last = try json(await request(api, .get, "/api/audit", token: "admin-token", query: ["limit": "2", "before": "2"]))
        #expect((last["entries"] as? [[String: Any]])?.map { $0["target"] as? String } == ["class:cls_0"])
        #expect(last["next"] is NSNull)

        for bad in [["limit": "0"], ["limit": "1001"], ["limit": "x"], ["before": "-1"], ["action": "read_everything"], ["since": "yesterday"], ["format": "xml"]] {
            #expect(await request(api, .get, "/api/audit", token: "admin-token", query: bad).status == 400, "\(bad)")
        }
        let since = try json(await request(api, .get, "/api/audit", token: "admin-token", query: ["since": "1970-01-01T00:00:00.003Z", "action": "read_class_report"]))
        #expect((since["entries"] as? [[String: Any]])?.count == 2)
    }

    @Test func theTrailAsCSVIsASpreadsheetsText() async throws {
        let api = api(store.auditLog)
        try await store.auditLog.append(AuditEvent(
            at: ServerTime(milliseconds: 0), actor: AuditActor(kind: .account, accountID: "acc_1", login: "=cmd"), action: .signIn, target: "account:acc_1", address: "203.0.113.9", detail: "password"
        ))
        let response = await request(api, .get, "/api/audit", token: "admin-token", query: ["format": "csv"])
        #expect(response.status == 200)
        #expect(response.contentType == "text/csv; charset=utf-8")
        #expect(response.header("content-disposition")?.contains("StoryCircle audit trail") == true)
        let text = String(decoding: response.body.dropFirst(3), as: UTF8.self)
        #expect(text == """
            sequence,at,actor,actor_account,actor_login,actor_room,action,target,school,address,detail\r
            1,1970-01-01T00:00:00Z,account,acc_1,'=cmd,,sign_in,account:acc_1,,203.0.113.9,password\r

            """)
    }
}
