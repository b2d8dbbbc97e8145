import Foundation
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// Signing in with a password, and out (docs/protocol.md, "Sessions"; docs/operations.md, "Signing in").
/// A session is a cookie (`SessionCookies`); the answer carries the account and the session's CSRF token,
/// which a page keeps in memory and sends as `X-CSRF-Token` with everything it changes.
struct SessionRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.post, "/api/session", .none) { try await $0.signInWithPassword($1) },
            Route(.get, "/api/session", .signedIn) { try await $0.currentSession($1) },
            Route(.delete, "/api/session", .signedIn) { try await $0.signOut($1) },
            Route(.post, "/api/session/everywhere", .signedIn) { try await $0.signOutEverywhere($1) },
        ]
    }
}

/// A signed-in page's account (the API's one shape: never a password's hash) and its session's CSRF token.
struct SessionAnswer: Encodable {
    var account: APIAccount
    var csrf: String
}

extension APIHandler {
    /// The longest password looked at (as `Sodium.passwordMaximumBytes`): a longer one is a bad request,
    /// never hashed.
    static let maxPasswordBytes = 4_096

    static let httpsNeeded = HTTPError(.httpsNeeded, "Signing in needs this server's https:// address: over plain HTTP the browser drops the session cookie.")

    static let signInFailure = HTTPError(.signInFailed, "The login or password is not right, or the account is not open.")

    fileprivate func signInWithPassword(_ request: RouteRequest) async throws -> HTTPResponse {
        struct Body: Decodable {
            var login: String
            var password: String
        }
        guard let sessions else { throw HTTPError.notFound }
        // A sign-in from another site's page would sign this browser into someone else's account.
        guard comesFromThisServer(request.http) else { throw Self.csrfRefusal }
        // Said before the password is looked at: the cookie would be dropped and the teacher left wondering.
        guard SessionCookies.browserKeepsCookie(host: request.http.headers["host"], publicURL: publicURL) else { throw Self.httpsNeeded }
        guard request.body.count <= 8_192, let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)),
              body.login.utf8.count <= 256, body.password.utf8.count <= Self.maxPasswordBytes else {
            throw HTTPError(.invalidMessage, "Send {\"login\": \"…\", \"password\": \"…\"}.")
        }
        // A login that cannot exist is tried as one that does not: the same throttle, the same work.
        let login = AccountLogins.normalised(body.login) ?? "\u{0}"
        let ticket = try Self.throttled(sessions.begin(login: login, address: request.http.peer))
        let account: Account?
        do {
            account = try await sessions.book.account(login: login)
        } catch {
            throw HTTPError(.storageUnavailable, "Accounts cannot be read from storage just now (\(StoreFailure.from(error, record: "account").reason)).")
        }
        // The account's own hash even when it is disabled, so that a disabled account takes as long to refuse.
        switch try await sessions.check(body.password, against: account?.passwordHash) {
        case .busy:
            throw HTTPError(.tryAgain, "Many people are signing in just now; try again in a moment.")
        case .wrong:
            try await auditFailedSignIn(account, request, detail: "password")
            throw Self.signInFailure
        case .right:
            guard let account, !account.disabled else {
                try await auditFailedSignIn(account, request, detail: "password, account disabled")
                throw Self.signInFailure
            }
            sessions.succeeded(ticket)
            try await audit(.signIn, target: "account:\(account.id)", actor: AuditActor(.account(account)), address: request.http.peer, schoolID: account.schoolID, detail: "password")
            // Only while the password just checked is still the account's and it is still enabled.
            return try await startSession(account, method: "password", ifPasswordHash: account.passwordHash, sessions: sessions, request: request.http)
        }
    }

    /// The throttle's ticket for a sign-in that may go on; 429 `rate_limited` with `Retry-After` otherwise.
    static func throttled(_ decision: SignInThrottle.Decision) throws -> SignInThrottle.Ticket {
        switch decision {
        case .go(let ticket):
            return ticket
        case .limited(let milliseconds):
            let seconds = (milliseconds + 999) / 1_000
            throw HTTPError(
                .rateLimited, "Too many sign-ins that did not work, for this account or from here; try again in \(seconds) seconds.",
                params: ["seconds": String(seconds)], extra: ["retryAfter": .number(Double(seconds))], headers: [("retry-after", String(seconds))]
            )
        }
    }

    /// A sign-in that did not work, named by the login only when it is an account's (a password typed in
    /// the login field is never written).
    func auditFailedSignIn(_ account: Account?, _ request: RouteRequest, detail: String) async throws {
        try await audit(
            .signInFailed, target: account.map { "account:\($0.id)" } ?? "", actor: AuditActor(kind: .nobody, accountID: account?.id, login: account?.login),
            address: request.http.peer, schoolID: account?.schoolID, detail: detail
        )
    }

    /// A new session for `account`: its cookie, and the answer a page keeps (the account and the CSRF token).
    /// `sign_in_failed` when the account was disabled or its password changed since it was checked. The
    /// session of the cookie `request` still carries, if any, is ended (`SessionDesk.start`).
    func startSession(_ account: Account, method: String, ifPasswordHash passwordHash: String? = nil, sessions: SessionDesk, request: HTTPRequest) async throws -> HTTPResponse {
        let started: (token: String, record: SessionRecord)?
        do {
            started = try await sessions.start(
                account, method: method, ifPasswordHash: passwordHash, replacing: SessionCookies.token(fromCookieHeader: request.headers["cookie"])
            )
        } catch {
            throw HTTPError(.storageUnavailable, "The session cannot be stored just now (\(StoreFailure.from(error, record: "session").reason)).")
        }
        guard let started else { throw Self.signInFailure }
        return .json(200, SessionAnswer(account: APIAccount(account), csrf: started.record.csrfToken), headers: [("set-cookie", SessionCookies.setCookie(started.token))])
    }

    fileprivate func currentSession(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let account = request.principal?.account, let session = request.session else { throw Self.signInNeeded }
        return .json(200, SessionAnswer(account: APIAccount(account), csrf: session.csrfToken))
    }

    fileprivate func signOut(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let sessions, let session = request.session else { throw Self.signInNeeded }
        do {
            try await audited(.signOut, target: "account:\(session.accountID)", request) { try await sessions.end(session) }
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(.storageUnavailable, "The session cannot be ended in storage just now (\(StoreFailure.from(error, record: "session").reason)).")
        }
        return .json(200, ["signedOut": true], headers: [("set-cookie", SessionCookies.clearCookie)])
    }

    fileprivate func signOutEverywhere(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let sessions, let account = request.principal?.account else { throw Self.signInNeeded }
        let ended: Int
        do {
            ended = try await audited(.signOutEverywhere, target: "account:\(account.id)", request, schoolID: account.schoolID) {
                try await sessions.endAll(accountID: account.id)
            }
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(.storageUnavailable, "The sessions cannot be ended in storage just now (\(StoreFailure.from(error, record: "session").reason)).")
        }
        return .json(200, ["ended": ended], headers: [("set-cookie", SessionCookies.clearCookie)])
    }
}
