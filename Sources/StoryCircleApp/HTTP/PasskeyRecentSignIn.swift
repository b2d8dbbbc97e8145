import Foundation
import StoryCircleCore
import StoryCircleServer

/// A passkey, once added, lets its holder in for good: someone who finds a teacher's laptop signed in must not
/// be able to add their own. So adding one asks for more than the session cookie: a sign-in within the last
/// `PasskeyDesk.recentSignIn` (any way: password, passkey, the terminal's link), or the account's password
/// typed with the request for the options. The challenge those options carry lives five minutes
/// (`ChallengeBook`) and is the only way to the registration, so the proof cannot be kept for later.
///
/// An account without a password (the laptop's teacher, signed in by the terminal's link) has nothing to type:
/// it adds a passkey within five minutes of signing in, and after that signs in again first.
extension APIHandler {
    func confirmRecentSignIn(_ account: Account, session: SessionRecord, request: RouteRequest, sessions: SessionDesk) async throws {
        struct Body: Decodable { var password: String? }
        let body: Body
        if request.body.isEmpty {
            body = Body()
        } else {
            guard request.body.count <= 8_192, let decoded = try? JSONDecoder().decode(Body.self, from: Data(request.body)),
                  (decoded.password?.utf8.count ?? 0) <= Self.maxPasswordBytes else {
                throw HTTPError(.invalidMessage, "Send {} or {\"password\": \"…\"}.")
            }
            body = decoded
        }
        guard let password = body.password, !password.isEmpty else {
            if sessions.clock.now() - session.createdAt < PasskeyDesk.recentSignIn { return }
            throw Self.recentSignInNeeded(account.passwordHash == nil ? "sign_in_again" : "password_needed")
        }
        guard let hash = account.passwordHash else { throw Self.recentSignInNeeded("sign_in_again") }
        // Guesses here spend the account's and the address's sign-in allowance, as at the sign-in page.
        let ticket = try Self.throttled(sessions.begin(login: account.login, address: request.http.peer))
        switch try await sessions.check(password, against: hash) {
        case .busy:
            throw HTTPError(.tryAgain, "Many people are signing in just now; try again in a moment.")
        case .wrong:
            try await auditFailedSignIn(account, request, detail: "password, before adding a passkey")
            throw Self.recentSignInNeeded("password_wrong")
        case .right:
            sessions.succeeded(ticket)
        }
    }

    private static func recentSignInNeeded(_ reason: String) -> HTTPError {
        let minutes = PasskeyDesk.recentSignIn / 60_000
        return HTTPError(
            .recentSignInNeeded, reason == "sign_in_again"
                ? "Adding a passkey needs a sign-in within the last \(minutes) minutes: sign in again, then add it."
                : "Adding a passkey needs this account's password (a sign-in more than \(minutes) minutes ago is not enough).",
            params: ["minutes": String(minutes)], extra: ["reason": .string(reason)])
    }
}
