import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

@Suite("HTTP API")
struct APITests {
    let transport = RecordingTransport()
    let store = MemoryRoomStore()
    let clock = ManualClock()
    let registry: RoomRegistry
    let api: APIHandler

    init() {
        (registry, _) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
        api = APIHandler(registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"), publicURL: "http://192.168.1.20:8080", startedAt: clock.now(), audio: nil, qrCodes: true)
    }

    private func request(_ method: HTTPMethod, _ path: String, token: String? = nil, body: String? = nil, query: [String: String] = [:]) async -> HTTPResponse {
        await api.handle(.testRequest(method: method, path: path, query: query, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:], body: Array((body ?? "").utf8)))
    }

    private func json(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    private func createRoom() async throws -> [String: Any] {
        let story = String(decoding: try Fixtures.sampleStoryData(), as: UTF8.self)
        let response = await request(.post, "/api/rooms", token: "admin-token", body: #"{"story": \#(story), "settings": {"timer": false}}"#)
        #expect(response.status == 201)
        return try json(response)
    }

    @Test func creatingARoomAnswersItsCodeTokensAndURLs() async throws {
        let room = try await createRoom()
        let code = try #require(room["code"] as? String)
        #expect(code.count == 6)
        // The link carries the room's language (Pip is read in English), so the child's first screen speaks it.
        #expect(room["joinURL"] as? String == "http://192.168.1.20:8080/?room=\(code)&lang=en")
        #expect((room["dashboardURL"] as? String)?.hasPrefix("http://192.168.1.20:8080/dashboard#room=\(code)&token=") == true)
        // `<code>.<random>.<MAC>`: the token proves itself for this room (`RoomTokens`).
        let teacherToken = try #require(room["teacherToken"] as? String)
        #expect(teacherToken.hasPrefix(code + ".") && teacherToken.count == code.count + 1 + 32 + 1 + 64)
        #expect(registry.directory.tokens.role(of: teacherToken, room: code) == .teacher)
        #expect(await registry.directory.room(code)?.report().settings.timer == false)
    }

    @Test func creatingARoomNeedsTheAdminToken() async throws {
        #expect(await request(.post, "/api/rooms", body: "{}").status == 401)
        #expect(await request(.post, "/api/rooms", token: "guess", body: "{}").status == 401)
        #expect(await request(.get, "/api/rooms", token: "guess").status == 401)
    }

    @Test func anInvalidStoryIsRefusedWithEveryIssue() async throws {
        let response = await request(.post, "/api/rooms", token: "admin-token", body: #"{"story": {"title": "T", "text": "One.", "quiz": {"question": "Q?", "options": ["A"], "answer": "B"}}}"#)
        #expect(response.status == 422)
        let error = try #require(try json(response)["error"] as? [String: Any])
        #expect(error["code"] as? String == "invalid_story")
        let issues = try #require(error["issues"] as? [[String: Any]])
        #expect(issues.map { $0["path"] as? String } == ["quiz.options"])
        #expect(issues.map { $0["code"] as? String } == ["too_few_options"])
        #expect(issues.first?["params"] as? [String: String] == ["count": "1", "min": "2"])
        #expect(await request(.post, "/api/rooms", token: "admin-token", body: "not json").status == 400)
    }

    @Test func statusCommandsAndResultsNeedTheRoomsToken() async throws {
        let room = try await createRoom()
        let code = room["code"] as! String
        let teacher = room["teacherToken"] as! String
        let dashboard = room["dashboardToken"] as! String

        #expect(await request(.get, "/api/rooms/\(code)", token: dashboard).status == 200)
        #expect(await request(.get, "/api/rooms/\(code)", token: "wrong").status == 401)
        // A wrong token and a missing room look the same: codes cannot be probed.
        let missing = await request(.get, "/api/rooms/999999", token: "wrong")
        #expect(missing.status == 401)
        #expect(await request(.get, "/api/rooms/999999", token: "admin-token").status == 404)

        #expect(await request(.post, "/api/rooms/\(code)/commands", token: dashboard, body: #"{"command":"start"}"#).status == 401, "a dashboard cannot control")
        let started = await request(.post, "/api/rooms/\(code)/commands", token: teacher, body: #"{"command":"start"}"#)
        #expect(started.status == 200)
        #expect(try json(started)["phase"] as? String == "preparing")
        let again = await request(.post, "/api/rooms/\(code)/commands", token: teacher, body: #"{"command":"start"}"#)
        #expect(again.status == 409)
        #expect(try json(again)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } == "invalid_command")
        #expect(await request(.post, "/api/rooms/\(code)/commands", token: teacher, body: #"{"command":"dance"}"#).status == 409)
        #expect(await request(.post, "/api/rooms/\(code)/commands", token: teacher, body: #"{"nope":1}"#).status == 400)
        #expect(await request(.post, "/api/rooms/\(code)/commands", token: teacher, body: #"{"command":"kick","player":"nobody"}"#).status == 404)

        let results = await request(.get, "/api/rooms/\(code)/results", token: teacher)
        #expect(results.status == 200)
        #expect(try json(results)["title"] as? String == "Pip the Robot and the Lost Gear")
        let csv = await request(.get, "/api/rooms/\(code)/results", token: teacher, query: ["format": "csv"])
        #expect(csv.contentType == "text/csv; charset=utf-8")
        #expect(String(decoding: csv.body, as: UTF8.self).hasPrefix("\u{FEFF}child,question,question_text"))
        #expect(await request(.get, "/api/rooms/\(code)/results", token: dashboard).status == 401, "results are the teacher's")
        #expect(await request(.get, "/api/rooms/\(code)/results", token: teacher, query: ["format": "xml"]).status == 400)
    }

    @Test func theQRCodeIsTheJoinURL() async throws {
        let room = try await createRoom()
        let svg = await request(.get, "/api/rooms/\(room["code"] as! String)/qr.svg", token: room["dashboardToken"] as? String)
        #expect(svg.status == 200)
        #expect(svg.contentType == "image/svg+xml")
        #expect(String(decoding: svg.body, as: UTF8.self).hasPrefix("<svg"))
        let code = room["code"] as! String
        // The encoder is deterministic: the same drawing is the same text, the join URL with the language.
        #expect(String(decoding: svg.body, as: UTF8.self) == JoinCode.qrSVG(for: "http://192.168.1.20:8080/?room=\(code)&lang=en"))
        #expect(svg.headers.contains { $0.0 == "cache-control" && $0.1 == "no-store" }, "it changes with the language")

        // The teacher switches the room to Spanish: the QR code's link follows.
        let changed = await request(.post, "/api/rooms/\(code)/commands", token: room["teacherToken"] as? String, body: #"{"command":"settings","settings":{"language":"es"}}"#)
        #expect(changed.status == 200)
        let spanish = await request(.get, "/api/rooms/\(code)/qr.svg", token: room["dashboardToken"] as? String)
        #expect(String(decoding: spanish.body, as: UTF8.self) == JoinCode.qrSVG(for: "http://192.168.1.20:8080/?room=\(code)&lang=es"))
    }

    @Test func resultsOfARoomNoLongerInMemoryComeFromStorage() async throws {
        let room = try await createRoom()
        let code = room["code"] as! String
        _ = await request(.post, "/api/rooms/\(code)/commands", token: room["teacherToken"] as? String, body: #"{"command":"end"}"#)
        let evicted = await registry.directory.sweep(finishedBefore: clock.now() + 1, createdBefore: ServerTime(milliseconds: 0))
        #expect(evicted.evicted == 1)
        #expect(await registry.directory.room(code) == nil)
        let results = await request(.get, "/api/rooms/\(code)/results", token: room["teacherToken"] as? String)
        #expect(results.status == 200)
        #expect(try json(results)["phase"] as? String == "finished")
        let list = await request(.get, "/api/rooms", token: "admin-token")
        #expect((try json(list)["rooms"] as? [[String: Any]])?.count == 1)
    }

    @Test func roomsPastTheRetentionPeriodAreForgottenEverywhere() async throws {
        let old = try await createRoom()
        clock.advance(by: 31 * 86_400_000)
        let recent = try await createRoom()
        let retentionCutoff = clock.now() + -(30 * 86_400_000)
        let swept = await registry.directory.sweep(finishedBefore: ServerTime(milliseconds: 0), createdBefore: retentionCutoff)
        #expect(swept.purged == 1)
        #expect(await registry.directory.room(old["code"] as! String) == nil)
        #expect(try await store.archive(room: old["code"] as! String) == nil, "the children's data is gone from storage")
        #expect(await request(.get, "/api/rooms/\(old["code"] as! String)/results", token: old["teacherToken"] as? String).status == 401)
        #expect(await registry.directory.room(recent["code"] as! String) != nil)
        #expect(await request(.get, "/api/rooms/\(recent["code"] as! String)/results", token: recent["teacherToken"] as? String).status == 200)
    }

    @Test func healthMetricsAndUnknownRoutes() async throws {
        let health = await request(.get, "/healthz")
        #expect(health.status == 200)
        #expect(try json(health)["status"] as? String == "ok")
        // What the child's page asks before a code is typed: how long codes are, and nothing else.
        let join = await request(.get, "/api/join")
        #expect(join.status == 200)
        #expect(try json(join) as NSDictionary == ["roomCodeDigits": 6] as NSDictionary)
        let metrics = await request(.get, "/metrics")
        #expect(metrics.contentType.hasPrefix("text/plain; version=0.0.4"))
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("# TYPE storycircle_rooms gauge"))
        #expect(text.contains("storycircle_answers_accepted_total 0"))
        // The process's own figures, in every Prometheus client's names.
        for name in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds"] {
            #expect(text.contains("\n# TYPE \(name) "), "\(name)")
        }
        #expect(await request(.get, "/nothing").status == 404)
        let wrongMethod = await request(.delete, "/api/rooms")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("allow") == "GET, HEAD, POST")
        // HEAD is answered as GET wherever GET is (the transport leaves out the body).
        #expect(await request(.head, "/api/rooms", token: "admin-token").status == 200)
        #expect(await request(.post, "/healthz").header("allow") == "GET, HEAD")
    }
}

extension Fixtures {
    static func sampleStoryData() throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/stories/pip-the-robot.json"))
    }
}

enum Fixtures {}
