import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// `POST /api/sign-in`: a one-time code traded for the tokens it stands for, in process.
@Suite("HTTP API: sign-in links")
struct SignInRouteTests {
    let clock = ManualClock()
    let desk: SignInDesk
    let api: APIHandler

    init() {
        let store = MemoryRoomStore()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        desk = SignInDesk(clock: clock)
        api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true, signIns: desk
        )
    }

    private func signIn(_ code: String, peer: String = "127.0.0.1") async -> HTTPResponse {
        await api.handle(.testRequest(method: .post, path: "/api/sign-in", body: Array(#"{"code": "\#(code)"}"#.utf8), peer: peer))
    }

    private func object(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func aCodeIsTradedOnceForItsTokensAndThePageToGoTo() async throws {
        let code = desk.issue(SignInGrant(room: "123456", teacherToken: "teacher-token", dashboardToken: "board-token", adminToken: "admin-token"))
        let first = await signIn(code)
        #expect(first.status == 200)
        #expect(first.header("cache-control") == "no-store")
        let answer = try object(first)
        #expect(answer["teacherToken"] as? String == "teacher-token")
        #expect(answer["dashboardToken"] as? String == "board-token")
        #expect(answer["adminToken"] as? String == "admin-token")
        // Where to go carries no token: the page keeps them in the tab's session.
        #expect(answer["go"] as? String == "/teacher#room=123456")
        let again = await signIn(code)
        #expect(again.status == 401)
        #expect(String(decoding: again.body, as: UTF8.self).contains("used or is too old"))
        #expect(!String(decoding: again.body, as: UTF8.self).contains("teacher-token"))
    }

    @Test func anExpiredCodeIsRefused() async {
        let code = desk.issue(SignInGrant(adminToken: "admin-token"))
        clock.advance(by: SignInCodes.Limits().lifetimeMilliseconds)
        #expect(await signIn(code).status == 401)
    }

    @Test func theSchoolsPagesAreWhereACodeWithoutARoomGoes() async throws {
        let code = desk.issue(SignInGrant(adminToken: "admin-token"))
        #expect(try object(await signIn(code))["go"] as? String == "/stories")
    }

    @Test func wrongCodesAreRateLimitedPerAddress() async {
        let code = desk.issue(SignInGrant(adminToken: "admin-token"))
        for _ in 0..<SignInCodes.Limits().failuresPerWindow { #expect(await signIn("AAAAAAAAAAAAAAAAAAAAAA").status == 401) }
        let limited = await signIn(code)
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == "60")
        #expect(await signIn(code, peer: "127.0.0.2").status == 200)
    }

    @Test func aDeviceInTheRoomCannotTradeTheLaptopsCodeAndTheCodeStays() async throws {
        let code = desk.issue(SignInGrant(room: "123456", teacherToken: "teacher-token", dashboardToken: "board-token", adminToken: "admin-token"))
        let phone = await signIn(code, peer: "192.0.2.7")
        #expect(phone.status == 403)
        #expect(!String(decoding: phone.body, as: UTF8.self).contains("token\""))
        #expect(try object(await signIn(code))["teacherToken"] as? String == "teacher-token")
    }

    @Test func aBodyWithoutACodeIsABadRequest() async {
        let response = await api.handle(.testRequest(method: .post, path: "/api/sign-in", body: Array("{}".utf8)))
        #expect(response.status == 400)
        #expect(await api.handle(.testRequest(method: .get, path: "/api/sign-in")).status == 405)
    }
}
