import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// The sign-in page (`/sign-in#code=…`) hands its one-time code here and is given the tokens it stands for,
/// and where to go. The code is the caller's authority, so the route needs no other: it is checked first,
/// against codes in this node's memory (`SignInCodes`), before anything else is done, and never logged.
struct SignInRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.post, "/api/sign-in", .none) { try await $0.signIn($1) },
        ]
    }
}

/// What the sign-in page is handed: the tokens it keeps in the tab's session, and the page to go to.
struct SignInAnswer: Encodable {
    var room: String?
    var teacherToken: String?
    var dashboardToken: String?
    var adminToken: String?
    /// A path on this server, without any token: the page keeps the tokens in the tab's session.
    var go: String
    /// When the link also signed the browser in (its cookie is set with this answer): the account, and the
    /// session's CSRF token.
    var account: APIAccount?
    var csrf: String?
}

extension APIHandler {
    /// Loopback, or one of this computer's own addresses (a browser on the laptop opening its LAN address).
    static func isThisComputer(_ peer: String) -> Bool {
        peer.hasPrefix("127.") || peer == "::1" || NetworkAddress.ipv4Addresses().contains(peer)
    }

    static let signInRefusal = HTTPError(.unauthorized, "This sign-in link has been used or is too old; the terminal makes a new one.")

    fileprivate func signIn(_ request: RouteRequest) async throws -> HTTPResponse {
        struct Body: Decodable { var code: String }
        guard let signIns else { throw HTTPError.notFound }
        guard request.body.count <= 1_024, let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            throw HTTPError(.invalidMessage, "Send {\"code\": \"…\"} from the sign-in link.")
        }
        // The link is for the laptop's own browser: a device in the room that read it off a mirrored screen
        // is refused, and the code stays for the teacher.
        guard Self.isThisComputer(request.http.peer) else {
            throw HTTPError(.wrongRole, "Open the sign-in link on the computer that runs StoryCircle.")
        }
        switch signIns.redeem(body.code, from: request.http.peer) {
        case .refused:
            throw Self.signInRefusal
        case .rateLimited(let wait):
            let seconds = (wait + 999) / 1_000
            throw HTTPError(.rateLimited, "Too many wrong sign-in links from here; try again in \(seconds) seconds.", params: ["seconds": String(seconds)], headers: [("retry-after", String(seconds))])
        case .granted(let grant):
            let go = grant.room.map { "/teacher#room=\($0)" } ?? "/stories"
            var answer = SignInAnswer(room: grant.room, teacherToken: grant.teacherToken, dashboardToken: grant.dashboardToken, adminToken: grant.adminToken, go: go)
            var headers: [(name: String, value: String)] = []
            if let (account, token, csrf) = await linkSession(grant, replacing: SessionCookies.token(fromCookieHeader: request.http.headers["cookie"])) {
                answer.account = APIAccount(account)
                answer.csrf = csrf
                headers.append(("set-cookie", SessionCookies.setCookie(token)))
            }
            return .json(200, answer, headers: headers)
        }
    }

    /// The session the link starts for its account, if it names one that is there and enabled: the laptop's
    /// teacher is signed in with nothing to type. The code is used up by now, so its tokens are handed out
    /// whatever happens here: a store that cannot keep the session leaves the browser with them alone.
    private func linkSession(_ grant: SignInGrant, replacing old: String?) async -> (Account, token: String, csrf: String)? {
        guard let accountID = grant.accountID, let sessions else { return nil }
        guard let account = try? await sessions.book.account(id: accountID), !account.disabled,
              let started = try? await sessions.start(account, method: "link", replacing: old) else { return nil }
        return (account, started.token, started.record.csrfToken)
    }
}
