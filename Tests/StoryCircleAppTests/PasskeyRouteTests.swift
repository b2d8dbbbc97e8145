import Foundation
import Testing
import TransportCore
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// The passkey routes' rules that need no authenticator: adding one asks for a recent sign-in or the password
/// (`confirmRecentSignIn`); an administrator lists and removes the passkeys of the accounts in their reach
/// (`AccountPasskeyRoutes`). Accounts in memory, a manual clock, a stand-in for Argon2id; the ceremonies
/// themselves run in Chromium (test_passkeys_browser.py).
@Suite("HTTP API: passkeys")
struct PasskeyRouteTests {
    let clock = ManualClock()
    let book: MemoryAccountBook
    let store = MemoryRoomStore()
    let sessions: SessionDesk
    let api: APIHandler

    init() throws {
        let clock = clock
        book = MemoryAccountBook(now: { clock.now() })
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        sessions = SessionDesk(book: book, clock: clock) { password, hash in hash == "plain:" + password }
        let passkeys = try #require(PasskeyDesk.make(publicURL: "https://school.example", book: book, clock: clock))
        api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "https://school.example", startedAt: clock.now(), audio: nil, qrCodes: true, accounts: book, sessions: sessions,
            auditTrail: AuditTrail(log: store.auditLog), passkeys: passkeys
        )
    }

    private func account(_ login: String, role: AccountRole = .teacher, password: String? = "correct horse", schoolID: String? = nil) async throws -> Account {
        var school = schoolID
        if school == nil { school = try await book.createSchool(name: "School \(login)").id }
        return try await book.createAccount(AccountDraft(login: login, displayName: login.capitalized, role: role, schoolID: school, passwordHash: password.map { "plain:" + $0 }))
    }

    /// The cookie header and CSRF token of a session of `account` started now (as any sign-in starts one).
    private func signedIn(_ account: Account, method: String = "password") async throws -> [String: String] {
        let started = try #require(try await sessions.start(account, method: method))
        return ["cookie": "\(SessionCookies.name)=\(started.token)", "x-csrf-token": started.record.csrfToken]
    }

    private func ask(_ method: HTTPMethod, _ path: String, _ headers: [String: String], body: [String: Any]? = nil) async -> HTTPResponse {
        let bytes = body.map { Array(try! JSONSerialization.data(withJSONObject: $0)) } ?? []
        return await api.handle(.testRequest(method: method, path: path, headers: headers, body: bytes, peer: "192.0.2.20"))
    }

    private func error(_ response: HTTPResponse) throws -> [String: Any] {
        try #require((try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["error"] as? [String: Any])
    }

    private func options(_ headers: [String: String], password: String? = nil) async -> HTTPResponse {
        await ask(.post, "/api/passkeys/options", headers, body: password.map { ["password": $0] } ?? [:])
    }

    @Test func aSignInOfTheLastFiveMinutesAddsAPasskeyAndAnOlderOneNeedsThePassword() async throws {
        let ada = try await account("ada")
        let headers = try await signedIn(ada)
        #expect(await options(headers).status == 200)
        clock.advance(by: PasskeyDesk.recentSignIn - 1)
        #expect(await options(headers).status == 200)
        clock.advance(by: 1)
        let refused = await options(headers)
        #expect(refused.status == 403)
        let words = try error(refused)
        #expect(words["code"] as? String == "recent_sign_in_needed" && words["reason"] as? String == "password_needed")
        #expect((words["params"] as? [String: String])?["minutes"] == "5")
        // No challenge was issued: the answer carries nothing a browser could register with.
        #expect(!String(decoding: refused.body, as: UTF8.self).contains("challenge"))

        let wrong = await options(headers, password: "wrong horse")
        #expect(try wrong.status == 403 && error(wrong)["reason"] as? String == "password_wrong")
        let right = await options(headers, password: "correct horse")
        #expect(right.status == 200)
        #expect(String(decoding: right.body, as: UTF8.self).contains("\"challenge\""))

        let rows = try await store.auditLog.entries(AuditQuery()).entries.map(\.event)
        #expect(rows.map(\.action) == [.signInFailed])
        #expect(rows.first?.detail == "password, before adding a passkey" && rows.first?.target == "account:\(ada.id)")
        #expect(!rows.map { "\($0)" }.joined().contains("horse"))
    }

    @Test func aWrongPasswordIsCheckedEvenWithinTheFiveMinutes() async throws {
        let bea = try await account("bea")
        let headers = try await signedIn(bea)
        #expect(try error(await options(headers, password: "guess"))["reason"] as? String == "password_wrong")
    }

    @Test func guessesSpendTheAccountsSignInAllowance() async throws {
        let cy = try await account("cy")
        let headers = try await signedIn(cy)
        clock.advance(by: PasskeyDesk.recentSignIn)
        for _ in 0..<SignInThrottle.Limits().accountBurst { #expect(await options(headers, password: "guess").status == 403) }
        let limited = await options(headers, password: "correct horse")
        #expect(try limited.status == 429 && error(limited)["code"] as? String == "rate_limited")
        #expect(limited.header("retry-after") != nil)
    }

    @Test func anAccountWithoutAPasswordAddsOneSoonAfterItsLinkAndOtherwiseSignsInAgain() async throws {
        let dee = try await account("dee", password: nil)
        let headers = try await signedIn(dee, method: "link")
        #expect(await options(headers).status == 200)
        clock.advance(by: PasskeyDesk.recentSignIn)
        for password: String? in [nil, "anything"] {
            let refused = await options(headers, password: password)
            #expect(try refused.status == 403 && error(refused)["reason"] as? String == "sign_in_again")
        }
        // Signed in again (the terminal's new link): a passkey can be added.
        #expect(await options(try await signedIn(dee, method: "link")).status == 200)
    }

    @Test func aPasswordLongerThanAnyIsABadRequestNotHashed() async throws {
        let eve = try await account("eve")
        let headers = try await signedIn(eve)
        let response = await options(headers, password: String(repeating: "x", count: APIHandler.maxPasswordBytes + 1))
        #expect(try response.status == 400 && error(response)["code"] as? String == "invalid_message")
    }

    // MARK: - An administrator and another account's passkeys

    private func passkey(_ id: String, of account: Account, name: String, usedAt: Int64? = nil) async throws {
        try await book.addPasskey(PasskeyRecord(
            credentialID: id, accountID: account.id, publicKey: [0xA5, 0x01, 0x02], algorithm: -7, signCount: 3, name: name,
            createdAt: clock.now(), lastUsedAt: usedAt.map(ServerTime.init(milliseconds:))), limit: PasskeyDesk.maxPerAccount)
    }

    private func listed(_ response: HTTPResponse) throws -> [[String: Any]] {
        try #require((try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["passkeys"] as? [[String: Any]])
    }

    @Test func aSchoolsAdministratorListsAndRemovesATeachersPasskeyAndTheTrailSaysWho() async throws {
        let fay = try await account("fay")
        let admin = try await account("gus", role: .schoolAdmin, schoolID: fay.schoolID)
        try await passkey("cred-phone", of: fay, name: "Phone", usedAt: 1_234)
        try await passkey("cred-laptop", of: fay, name: "Laptop")
        let headers = try await signedIn(admin)

        let list = await ask(.get, "/api/accounts/\(fay.id)/passkeys", headers)
        #expect(list.status == 200)
        let passkeys = try listed(list)
        #expect(Set(passkeys.compactMap { $0["name"] as? String }) == ["Phone", "Laptop"])
        let phone = try #require(passkeys.first { $0["id"] as? String == "cred-phone" })
        #expect(phone["lastUsedAt"] as? Int == 1_234 && phone["createdAt"] as? Int == Int(clock.now().milliseconds))
        #expect(passkeys.allSatisfy { $0["publicKey"] == nil && $0["signCount"] == nil }, "never a key")

        #expect(await ask(.delete, "/api/accounts/\(fay.id)/passkeys/cred-phone", headers).status == 200)
        #expect(try await book.passkeys(accountID: fay.id).map(\.credentialID) == ["cred-laptop"])
        let again = await ask(.delete, "/api/accounts/\(fay.id)/passkeys/cred-phone", headers)
        #expect(try again.status == 404 && error(again)["code"] as? String == "not_found")

        let rows = try await store.auditLog.entries(AuditQuery()).entries.map(\.event)
        #expect(rows.map(\.action) == [.passkeyRemoved])
        #expect(rows.first?.actor.accountID == admin.id && rows.first?.actor.role == .schoolAdmin, "who removed it")
        #expect(rows.first?.target == "account:\(fay.id)" && rows.first?.detail == "passkey Phone" && rows.first?.schoolID == fay.schoolID)
    }

    @Test func anotherSchoolsPasskeysAreOutOfReachAndAFellowAdministratorsAreOnlySeen() async throws {
        let hal = try await account("hal")
        let ivy = try await account("ivy", role: .schoolAdmin, schoolID: hal.schoolID)
        let other = try await account("jon", role: .schoolAdmin)
        try await passkey("cred-hal", of: hal, name: "Phone")
        try await passkey("cred-ivy", of: ivy, name: "Key")

        let stranger = try await signedIn(other)
        for response in [await ask(.get, "/api/accounts/\(hal.id)/passkeys", stranger), await ask(.delete, "/api/accounts/\(hal.id)/passkeys/cred-hal", stranger)] {
            #expect(try response.status == 404 && error(response)["code"] as? String == "account_not_found")
        }
        let fellow = try await signedIn(try await account("kim", role: .schoolAdmin, schoolID: hal.schoolID))
        #expect(try listed(await ask(.get, "/api/accounts/\(ivy.id)/passkeys", fellow)).count == 1)
        let refused = await ask(.delete, "/api/accounts/\(ivy.id)/passkeys/cred-ivy", fellow)
        #expect(try refused.status == 403 && error(refused)["code"] as? String == "wrong_role")
        // A teacher is no administrator, even of their own passkeys by this way (theirs is /api/passkeys).
        let teacher = try await signedIn(hal)
        #expect(await ask(.get, "/api/accounts/\(hal.id)/passkeys", teacher).status == 403)
        #expect(try await book.passkeys(accountID: hal.id).count == 1)
        #expect(try await book.passkeys(accountID: ivy.id).count == 1)
        #expect(try await store.auditLog.entries(AuditQuery()).entries.isEmpty)
    }

    @Test func theDistrictAndTheAdminTokenReachEveryAccount() async throws {
        let lea = try await account("lea")
        try await passkey("cred-lea", of: lea, name: "Phone")
        let district = try await signedIn(try await account("max", role: .districtAdmin))
        #expect(try listed(await ask(.get, "/api/accounts/\(lea.id)/passkeys", district)).count == 1)
        let token = ["authorization": "Bearer admin-token"]
        #expect(await ask(.delete, "/api/accounts/\(lea.id)/passkeys/cred-lea", token).status == 200)
        #expect(try await book.passkeys(accountID: lea.id).isEmpty)
        let row = try #require(try await store.auditLog.entries(AuditQuery()).entries.first?.event)
        #expect(row.action == .passkeyRemoved && row.actor.kind == .adminToken)
    }
}
