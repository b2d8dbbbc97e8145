import Foundation
import Testing
import TransportCore
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// Signing in, failing to and signing out leave audit rows naming the account (never the password, nor a
/// login that is no account's: it may be a password typed in the wrong field).
@Suite("Audit trail: signing in and out")
struct SessionAuditTests {
    let clock = ManualClock()
    let book: MemoryAccountBook
    let store = MemoryRoomStore()
    let api: APIHandler

    init() {
        let clock = clock
        book = MemoryAccountBook(now: { clock.now() })
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        let sessions = SessionDesk(book: book, clock: clock) { password, hash in hash == "plain:" + password }
        api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "https://192.0.2.1:8443", startedAt: clock.now(), audio: nil, qrCodes: true, sessions: sessions, auditTrail: AuditTrail(log: store.auditLog)
        )
    }

    private func signIn(_ login: String, _ password: String) async -> HTTPResponse {
        let body = try! JSONSerialization.data(withJSONObject: ["login": login, "password": password])
        return await api.handle(.testRequest(method: .post, path: "/api/session", body: Array(body), peer: "192.0.2.20"))
    }

    @Test func signInsFailuresAndSignOutsAreRecorded() async throws {
        let school = try await book.createSchool(name: "North")
        let ada = try await book.createAccount(AccountDraft(login: "ada", displayName: "Ada", role: .teacher, schoolID: school.id, passwordHash: "plain:correct horse"))
        #expect(await signIn("ada", "wrong horse").status == 401)
        #expect(await signIn("hunter2-typed-as-login", "x").status == 401)
        let signedIn = await signIn("ada", "correct horse")
        #expect(signedIn.status == 200)
        let cookie = String(try #require(signedIn.header("set-cookie")?.split(separator: ";").first))
        let csrf = try #require((try JSONSerialization.jsonObject(with: Data(signedIn.body)) as? [String: Any])?["csrf"] as? String)
        let out = await api.handle(.testRequest(method: .delete, path: "/api/session", headers: ["cookie": cookie, "x-csrf-token": csrf], peer: "192.0.2.20"))
        #expect(out.status == 200)

        let rows = try await store.auditLog.entries(AuditQuery()).entries.map(\.event)
        #expect(rows.map(\.action) == [.signOut, .signIn, .signInFailed, .signInFailed])
        #expect(rows[0].target == "account:\(ada.id)" && rows[0].actor.accountID == ada.id)
        #expect(rows[1].actor == AuditActor(kind: .account, accountID: ada.id, login: "ada", role: .teacher) && rows[1].schoolID == school.id)
        #expect(rows[2].actor == AuditActor(kind: .nobody) && rows[2].target == "", "a login that is no account's is not written")
        #expect(rows[3].actor.login == "ada" && rows[3].target == "account:\(ada.id)")
        #expect(rows.allSatisfy { $0.address == "192.0.2.20" })
        let written = rows.map { "\($0)" }.joined()
        #expect(!written.contains("horse") && !written.contains("hunter2") && !written.contains(cookie))
    }
}
