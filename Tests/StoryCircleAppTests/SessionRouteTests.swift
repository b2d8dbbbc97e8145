import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// Password sign-in, the session cookie, CSRF, and who is asking, in process: accounts in memory, a manual
/// clock, and a stand-in for Argon2id (`SessionDesk` takes the check; the real one, `PasswordHasher`, is
/// driven over sockets in test_sessions.py).
@Suite("HTTP API: sessions")
struct SessionRouteTests {
    let clock = ManualClock()
    let book: MemoryAccountBook
    let api: APIHandler
    let desk: SignInDesk

    init() {
        let clock = clock
        book = MemoryAccountBook(now: { clock.now() })
        let store = MemoryRoomStore()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        desk = SignInDesk(clock: clock)
        let sessions = SessionDesk(book: book, clock: clock) { password, hash in hash == "plain:" + password }
        api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "https://192.0.2.1:8443", startedAt: clock.now(), audio: nil, qrCodes: true, refused: RefusedRequests(), signIns: desk, accounts: book,
            sessions: sessions
        )
    }

    @discardableResult
    private func account(_ login: String, role: AccountRole = .teacher, password: String? = "correct horse") async throws -> Account {
        let school = try await book.createSchool(name: "School \(login)")
        return try await book.createAccount(AccountDraft(login: login, displayName: login.capitalized, role: role, schoolID: school.id, passwordHash: password.map { "plain:" + $0 }))
    }

    private func signIn(_ login: String, _ password: String, peer: String = "192.0.2.20", headers: [String: String] = [:]) async -> HTTPResponse {
        let body = try! JSONSerialization.data(withJSONObject: ["login": login, "password": password])
        return await api.handle(.testRequest(method: .post, path: "/api/session", headers: headers, body: Array(body), peer: peer))
    }

    private func object(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// The cookie's value and the CSRF token of a signed-in browser.
    private func signedIn(_ login: String, _ password: String = "correct horse") async throws -> (cookie: String, csrf: String) {
        let response = await signIn(login, password)
        try #require(response.status == 200)
        let setCookie = try #require(response.header("set-cookie"))
        let cookie = String(try #require(setCookie.split(separator: ";").first))
        return (cookie, try #require(try object(response)["csrf"] as? String))
    }

    private func ask(_ method: HTTPMethod, _ path: String, _ headers: [String: String], body: String = "") async -> HTTPResponse {
        await api.handle(.testRequest(method: method, path: path, headers: headers, body: Array(body.utf8), peer: "192.0.2.20"))
    }

    @Test func aRightPasswordStartsASessionWithItsCookieAndCSRFToken() async throws {
        let ada = try await account("ada")
        let response = await signIn("  ADA ", "correct horse")
        #expect(response.status == 200)
        let cookie = try #require(response.header("set-cookie"))
        #expect(cookie.hasPrefix("storycircle_session="))
        #expect(cookie.hasSuffix("; HttpOnly; Secure; SameSite=Strict; Path=/"))
        #expect(response.header("cache-control") == "no-store")
        let answer = try object(response)
        let shown = try #require(answer["account"] as? [String: Any])
        #expect(shown["id"] as? String == ada.id && shown["login"] as? String == "ada" && shown["role"] as? String == "teacher")
        #expect(shown["passwordHash"] == nil)
        #expect(!String(decoding: response.body, as: UTF8.self).contains("plain:"))
        // The store keeps the digest only.
        #expect(book.sessionCount == 1)
        let (value, csrf) = try await signedIn("ada")
        let again = await ask(.get, "/api/session", ["cookie": value])
        #expect(again.status == 200)
        #expect(try object(again)["csrf"] as? String == csrf)
    }

    @Test func anUnknownLoginAWrongPasswordAndADisabledAccountGetOneAnswer() async throws {
        let bea = try await account("bea")
        _ = try await book.updateAccount(bea.id, AccountChange(disabled: true), basedOn: bea.version)
        try await account("cy")
        let answers = [await signIn("nobody", "correct horse"), await signIn("cy", "wrong"), await signIn("bea", "correct horse"), await signIn("not a login!", "x")]
        for response in answers {
            #expect(response.status == 401)
            #expect(response.header("set-cookie") == nil)
            let error = try #require(try object(response)["error"] as? [String: Any])
            #expect(error["code"] as? String == "sign_in_failed")
            #expect(error["message"] as? String == APIHandler.signInFailure.error.message)
        }
    }

    @Test func anAccountWithoutAPasswordCannotSignInWithOne() async throws {
        try await account("dee", password: nil)
        #expect(await signIn("dee", "").status == 401)
    }

    @Test func guessesAreThrottledWithRetryAfter() async throws {
        try await account("eve")
        for _ in 0..<SignInThrottle.Limits().accountBurst { #expect(await signIn("eve", "guess").status == 401) }
        let limited = await signIn("eve", "correct horse")
        #expect(limited.status == 429)
        let error = try #require(try object(limited)["error"] as? [String: Any])
        #expect(error["code"] as? String == "rate_limited")
        let wait = try #require(error["retryAfter"] as? Int)
        #expect(wait > 0 && limited.header("retry-after") == String(wait))
        clock.advance(by: wait * 1_000)
        #expect(await signIn("eve", "correct horse").status == 200)
    }

    @Test func aChangeNeedsTheCSRFTokenAndThisServersOrigin() async throws {
        try await account("fay")
        let (cookie, csrf) = try await signedIn("fay")
        for headers in [["cookie": cookie], ["cookie": cookie, "x-csrf-token": "wrong"], ["cookie": cookie, "x-csrf-token": csrf, "origin": "https://evil.example"]] {
            let refused = await ask(.delete, "/api/session", headers)
            #expect(refused.status == 403)
            #expect(try (object(refused)["error"] as? [String: Any])?["code"] as? String == "csrf_failed")
        }
        #expect(await ask(.get, "/api/session", ["cookie": cookie]).status == 200)
        let out = await ask(.delete, "/api/session", ["cookie": cookie, "x-csrf-token": csrf, "origin": "https://192.0.2.1:8443"])
        #expect(out.status == 200)
        #expect(out.header("set-cookie")?.contains("Max-Age=0") == true)
        #expect(await ask(.get, "/api/session", ["cookie": cookie]).status == 401)
    }

    @Test func aChangeWithoutACSRFTokenOrFromAnotherSiteIsRefusedFromItsHeadBeforeAnyLookup() async throws {
        try await account("mo", role: .districtAdmin)
        let (cookie, csrf) = try await signedIn("mo")
        let stranger = "storycircle_session=" + SessionCookies.newToken()
        let lookups = book.sessionLookups
        let crossSite: [[String: String]] = [
            ["cookie": cookie], ["cookie": cookie, "x-csrf-token": "short"], ["cookie": stranger],
            ["cookie": cookie, "x-csrf-token": csrf, "origin": "https://evil.example"],
            ["cookie": cookie, "x-csrf-token": csrf, "sec-fetch-site": "cross-site"],
            ["cookie": cookie, "x-csrf-token": csrf, "sec-fetch-site": "same-site", "origin": "https://192.0.2.1:8443"],
        ]
        for headers in crossSite {
            guard case .answer(let refused) = APIHandler.router.admitHead(.testRequest(method: .post, path: "/api/pictures", headers: headers), with: api, defaultBodyLimit: 1_000) else {
                Issue.record("a change with \(headers.keys.sorted()) was read")
                continue
            }
            #expect(refused.status == 403)
            #expect(try (object(refused)["error"] as? [String: Any])?["code"] as? String == "csrf_failed")
            let answered = await ask(.delete, "/api/session", headers)
            #expect(answered.status == 403, "\(headers.keys.sorted())")
        }
        #expect(book.sessionLookups == lookups, "refused before the session was looked up")
        // A page of this server passes the head; a well-formed token that is not the session's is found out after the lookup.
        let page = ["cookie": cookie, "x-csrf-token": csrf, "sec-fetch-site": "same-origin", "origin": "https://192.0.2.1:8443"]
        guard case .read = APIHandler.router.admitHead(.testRequest(method: .post, path: "/api/pictures", headers: page), with: api, defaultBodyLimit: 1_000) else {
            Issue.record("this server's page was answered from its head")
            return
        }
        #expect(await ask(.delete, "/api/session", ["cookie": cookie, "x-csrf-token": SessionCookies.newToken()]).status == 403)
        #expect(await ask(.delete, "/api/session", page).status == 200)
    }

    @Test func signingInEndsTheSessionTheBrowserStillCarries() async throws {
        try await account("ned")
        try await account("ola")
        // A session planted in the browser (someone else's, or the last person's at a shared computer).
        let planted = try await signedIn("ola")
        let sessions = book.sessionCount
        let response = await signIn("ned", "correct horse", headers: ["cookie": planted.cookie])
        #expect(response.status == 200)
        #expect(book.sessionCount == sessions, "one ended, one begun")
        #expect(await ask(.get, "/api/session", ["cookie": planted.cookie]).status == 401)
        let fresh = String(try #require(response.header("set-cookie")?.split(separator: ";").first))
        #expect(fresh != planted.cookie)
        #expect(await ask(.get, "/api/session", ["cookie": fresh]).status == 200)
        // The terminal's link does the same.
        let owner = try await account("pia", role: .districtAdmin, password: nil)
        let code = desk.issue(SignInGrant(adminToken: "admin-token", accountID: owner.id))
        let linked = await api.handle(.testRequest(method: .post, path: "/api/sign-in", headers: ["cookie": fresh], body: Array(#"{"code": "\#(code)"}"#.utf8)))
        #expect(linked.status == 200)
        #expect(await ask(.get, "/api/session", ["cookie": fresh]).status == 401)
    }

    @Test func aSignInFromAnotherSitesPageIsRefused() async throws {
        try await account("gus")
        let response = await signIn("gus", "correct horse", headers: ["origin": "https://evil.example"])
        #expect(response.status == 403)
        #expect(response.header("set-cookie") == nil)
    }

    @Test func signingOutEverywhereEndsEverySessionOfTheAccount() async throws {
        try await account("hal")
        let first = try await signedIn("hal")
        let second = try await signedIn("hal")
        let ended = await ask(.post, "/api/session/everywhere", ["cookie": first.cookie, "x-csrf-token": first.csrf])
        #expect(ended.status == 200)
        #expect(try object(ended)["ended"] as? Int == 2)
        #expect(await ask(.get, "/api/session", ["cookie": second.cookie]).status == 401)
    }

    @Test func aDisabledAccountsSessionIsRefusedWithinASecond() async throws {
        let ivy = try await account("ivy")
        let (cookie, _) = try await signedIn("ivy")
        #expect(await ask(.get, "/api/session", ["cookie": cookie]).status == 200)
        let lookups = book.sessionLookups
        #expect(await ask(.get, "/api/session", ["cookie": cookie]).status == 200)
        #expect(book.sessionLookups == lookups, "a lookup within the second comes from the cache")
        // Another node disables the account: the store ends its sessions.
        _ = try await book.updateAccount(ivy.id, AccountChange(disabled: true), basedOn: ivy.version)
        clock.advance(by: SessionDesk.cacheMilliseconds)
        #expect(await ask(.get, "/api/session", ["cookie": cookie]).status == 401)
    }

    @Test func roleDecidesTheAdministratorsRoutes() async throws {
        try await account("jo", role: .districtAdmin)
        try await account("kim", role: .teacher)
        let admin = try await signedIn("jo")
        let teacher = try await signedIn("kim")
        // An administrator's route: the district administrator passes (there is no such account), a teacher is refused.
        #expect(await ask(.post, "/api/accounts/nobody/adopt", ["cookie": admin.cookie, "x-csrf-token": admin.csrf]).status == 404)
        let refused = await ask(.post, "/api/accounts/nobody/adopt", ["cookie": teacher.cookie, "x-csrf-token": teacher.csrf])
        #expect(refused.status == 403)
        #expect(try (object(refused)["error"] as? [String: Any])?["code"] as? String == "wrong_role")
        // Rooms are teachers' (their own: `AuthorizationMatrixTests`); a district administrator sees no children's data.
        #expect(await ask(.get, "/api/rooms", ["cookie": admin.cookie]).status == 403)
        // A district administrator's session opens no room by role.
        #expect(await ask(.get, "/api/rooms/123456", ["cookie": admin.cookie]).status == 401)
        // The admin token works as it always did, and a bearer token is judged alone.
        #expect(await ask(.get, "/api/rooms", ["authorization": "Bearer admin-token"]).status == 200)
        #expect(await ask(.get, "/api/rooms", ["authorization": "Bearer guess", "cookie": admin.cookie]).status == 401)
        // A bearer token needs no CSRF token; a cookie does.
        #expect(await ask(.post, "/api/stories/validate", ["authorization": "Bearer admin-token"], body: "{}").status != 403)
        #expect(await ask(.post, "/api/stories/validate", ["cookie": teacher.cookie], body: "{}").status == 403)
        #expect(![401, 403].contains(await ask(.post, "/api/stories/validate", ["cookie": teacher.cookie, "x-csrf-token": teacher.csrf], body: "{}").status.code))
    }

    @Test func theRouteRequestCarriesWhoIsAsking() async throws {
        let jo = try await account("jo", role: .schoolAdmin)
        let (cookie, _) = try await signedIn("jo")
        let route = Route(.get, "/api/probe", .schoolAdmin) { _, _ in .json(200, [String: String]()) }
        let request = HTTPRequest.testRequest(method: .get, path: "/api/probe", headers: ["cookie": cookie])
        let admitted = try await api.admit(route, request, parameters: [:])
        #expect(admitted.principal?.account?.id == jo.id)
        let byToken = try await api.admit(route, .testRequest(method: .get, path: "/api/probe", headers: ["authorization": "Bearer admin-token"]), parameters: [:])
        #expect(byToken.principal == .adminToken)
        let open = try await api.admit(Route(.get, "/api/probe", .none) { _, _ in .json(200, [String: String]()) }, .testRequest(method: .get, path: "/api/probe"), parameters: [:])
        #expect(open.principal == nil)
    }

    @Test func aCookieThatSignsNobodyInIsAnsweredAsNoCredentialAndCounted() async throws {
        let stranger = "storycircle_session=" + SessionCookies.newToken()
        let first = await ask(.get, "/api/session", ["cookie": stranger])
        #expect(first.status == 401)
        var last = first
        for _ in 0..<30 { last = await ask(.get, "/api/session", ["cookie": stranger]) }
        #expect(last.status == 429)
    }

    @Test func theHeadStepReadsNoStoreForACookieAndGivesAnUnknownOneTheDefaultBody() async throws {
        try await account("lu", role: .districtAdmin)
        let (cookie, _) = try await signedIn("lu")
        let unknown = "storycircle_session=" + SessionCookies.newToken()
        let lookups = book.sessionLookups
        let upload = HTTPRequest.testRequest(method: .post, path: "/api/pictures", headers: ["cookie": unknown, "x-csrf-token": SessionCookies.newToken()])
        #expect(APIHandler.router.admitHead(upload, with: api, defaultBodyLimit: 1_000) == .read(bodyLimit: 1_000))
        let known = HTTPRequest.testRequest(method: .post, path: "/api/pictures", headers: ["cookie": cookie, "x-csrf-token": SessionCookies.newToken()])
        guard case .read(let limit) = APIHandler.router.admitHead(known, with: api, defaultBodyLimit: 1_000) else {
            Issue.record("a known session's upload was answered from its head")
            return
        }
        #expect(limit > 1_000)
        #expect(book.sessionLookups == lookups)
        // Without any credential the head step refuses as before.
        guard case .answer(let refused) = APIHandler.router.admitHead(.testRequest(method: .post, path: "/api/pictures"), with: api, defaultBodyLimit: 1_000) else {
            Issue.record("an upload without a credential was read")
            return
        }
        #expect(refused.status == 401)
    }

    @Test func aSessionChangedOnThisNodeLosesTheLargerBodyAtOnceAndAnyWithinAMinute() async throws {
        let quin = try await account("quin")
        try await account("rae")
        try await account("root", role: .districtAdmin)
        let admin = try await signedIn("root")
        func limit(_ session: (cookie: String, csrf: String)) -> Int? {
            let upload = HTTPRequest.testRequest(method: .post, path: "/api/pictures", headers: ["cookie": session.cookie, "x-csrf-token": session.csrf])
            guard case .read(let limit) = APIHandler.router.admitHead(upload, with: api, defaultBodyLimit: 1_000) else { return nil }
            return limit
        }
        let first = try await signedIn("quin")
        #expect(try #require(limit(first)) > 1_000)
        // An administrator disables the account on this node: its cookie is forgotten at once.
        let disabled = await ask(.patch, "/api/accounts/\(quin.id)", ["cookie": admin.cookie, "x-csrf-token": admin.csrf], body: #"{"version": \#(quin.version), "disabled": true}"#)
        #expect(disabled.status == 200)
        #expect(limit(first) == 1_000)
        // Ended on another node: known for at most a minute.
        let other = try await signedIn("rae")
        #expect(try #require(limit(other)) > 1_000)
        clock.advance(by: 60_000)
        #expect(limit(other) == 1_000)
    }

    @Test func theTerminalsLinkAlsoSignsTheLaptopsTeacherIn() async throws {
        let owner = try await account("teacher", role: .districtAdmin, password: nil)
        let code = desk.issue(SignInGrant(room: "123456", teacherToken: "teacher-token", dashboardToken: "board-token", adminToken: "admin-token", accountID: owner.id))
        let response = await api.handle(.testRequest(method: .post, path: "/api/sign-in", body: Array(#"{"code": "\#(code)"}"#.utf8)))
        #expect(response.status == 200)
        let answer = try object(response)
        #expect(answer["teacherToken"] as? String == "teacher-token")
        #expect((answer["account"] as? [String: Any])?["id"] as? String == owner.id)
        let cookie = String(try #require(response.header("set-cookie")?.split(separator: ";").first))
        #expect(await ask(.get, "/api/session", ["cookie": cookie]).status == 200)
        // A link without an account hands out its tokens only, as before.
        let plain = desk.issue(SignInGrant(adminToken: "admin-token"))
        let old = await api.handle(.testRequest(method: .post, path: "/api/sign-in", body: Array(#"{"code": "\#(plain)"}"#.utf8)))
        #expect(old.status == 200 && old.header("set-cookie") == nil)
    }
}
