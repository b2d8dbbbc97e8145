import Foundation
import Sodium
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// The router's check of a route's `Authority`, in two steps, before its handler runs:
///
/// 1. `proveFromHeaders`: what the request's token proves by itself, with nothing read, leased or loaded:
///    the admin token by its hash, a room's teacher or dashboard token by its MAC (`RoomTokens`), for the
///    room code the path names. A token that proves nothing is refused here, in the same time whether or
///    not the room exists. The transport asks this step too, before it reads a body (`admitHead`).
///    A request with `Authorization` is judged by its token alone. Without one, a well-formed session
///    cookie (`SessionCookies`) cannot be proved here (that needs the store): it passes this step for the
///    routes an account may call, and is looked up in step 2. A cookie's request other than GET or HEAD
///    without an `X-CSRF-Token`, or whose `Origin`/`Sec-Fetch-Site` name another site, is refused here
///    (403 `csrf_failed`): that needs no lookup.
/// 2. `admit`: only then the room or class the token must belong to is found (and, for a stored room,
///    loaded under its lease), and the store's hash of its tokens has the last word (a code drawn again
///    for a later room has other tokens). A session cookie is looked up (`SessionDesk`, at most a second
///    old), its account's role checked against the route, and a request other than GET or HEAD must carry
///    the session's own CSRF token (403 `csrf_failed`).
///
/// Every admitted request carries who proved it (`RouteRequest.principal`).
extension APIHandler {
    /// What a request's token proved from the headers alone.
    struct Proof: Sendable {
        var isAdmin = false
        /// The room the token was issued for and its role there (room and class authorities).
        var room: (code: String, role: Role)?
        /// A session cookie's secret, still to be looked up (no bearer token was sent).
        var session: String?

        /// Who the bearer token proved, if it proved anyone.
        var principal: Principal? {
            if isAdmin { return .adminToken }
            return room.map { .roomToken(code: $0.code, role: $0.role) }
        }
    }

    func admit(_ route: Route, _ request: HTTPRequest, parameters: [String: String]) async throws -> RouteRequest {
        let proof = try proveFromHeaders(route, request, parameters: parameters)
        var admitted = RouteRequest(http: request, parameters: parameters)
        admitted.principal = proof.principal
        if let token = proof.session {
            let (session, account) = try await signedIn(token, route, request, code: parameters["code"] ?? "")
            admitted.principal = .account(account)
            admitted.session = session
        }
        // An account on a route of owned things: their owner decides (`OwnedAdmission`), before any room is loaded.
        let asker = admitted.principal?.account
        switch route.authority {
        case .none, .admin, .schoolAdmin, .signedIn, .teaching:
            break
        case .teacher, .dashboard:
            var proved = proof
            if let asker {
                try await admitAccount(asker, toRoom: parameters["code"] ?? "", needs: route.authority)
                proved.isAdmin = true
            }
            admitted.room = try await room(parameters["code"] ?? "", token: Self.bearerToken(request) ?? "", proof: proved, needs: route.authority)
        case .classTeacher:
            if let asker {
                admitted.schoolClass = try await admitAccount(asker, toClass: parameters["id"] ?? "", access: .read)
            } else {
                admitted.schoolClass = try await schoolClass(parameters["id"] ?? "", token: Self.bearerToken(request) ?? "", proof: proof)
            }
        case .classOwner:
            if let asker { admitted.schoolClass = try await admitAccount(asker, toClass: parameters["id"] ?? "", access: .change) }
        case .storyReader, .storyOwner:
            if let asker { try await admitAccount(asker, toStory: parameters["id"] ?? "", access: route.authority == .storyReader ? .read : .change) }
        }
        return admitted
    }

    /// Step 1: the route's authority as far as the token alone proves it; throws the route's refusal.
    func proveFromHeaders(_ route: Route, _ request: HTTPRequest, parameters: [String: String]) throws -> Proof {
        let token = Self.bearerToken(request)
        var proof = Proof(isAdmin: token.map(isAdminToken) ?? false)
        // The cookie counts only without a bearer token, and only where accounts are kept.
        let cookie = token == nil && sessions != nil && route.authority != .none ? SessionCookies.token(fromCookieHeader: request.headers["cookie"]) : nil
        switch route.authority {
        case .none:
            break
        case .admin, .schoolAdmin:
            guard !proof.isAdmin else { break }
            guard let cookie else { throw route.refusal.error(hasToken: request.headers["authorization"] != nil) }
            proof.session = cookie
        case .signedIn:
            guard let cookie else { throw Self.signInNeeded }
            proof.session = cookie
        case .teacher, .dashboard:
            let code = parameters["code"] ?? ""
            guard !proof.isAdmin else { break }
            if let cookie {
                proof.session = cookie
                break
            }
            guard let token, let role = registry.directory.tokens.role(of: token, room: code), role == .teacher || route.authority == .dashboard else {
                throw Self.roomRefusal(code)
            }
            proof.room = (code, role)
        case .classTeacher:
            guard !proof.isAdmin else { break }
            if let cookie {
                proof.session = cookie
                break
            }
            guard let token, let claim = registry.directory.tokens.claim(of: token), claim.role == .teacher else { throw ClassRoutes.refusal }
            proof.room = (claim.room, claim.role)
        case .teaching, .storyReader, .storyOwner, .classOwner:
            guard !proof.isAdmin else { break }
            guard let cookie else { throw route.refusal.error(hasToken: request.headers["authorization"] != nil) }
            proof.session = cookie
        }
        if proof.session != nil, request.method != .get, request.method != .head {
            // What the headers alone tell of a cross-site request, refused before any store read or body.
            guard SessionCookies.hasCSRFToken(request.headers[SessionCookies.csrfHeader]), comesFromThisServer(request) else { throw Self.csrfRefusal }
        }
        return proof
    }

    /// Whether the request's `Origin` and `Sec-Fetch-Site` say a page of this server sent it.
    func comesFromThisServer(_ request: HTTPRequest) -> Bool {
        SessionCookies.comesFromThisServer(
            origin: request.headers["origin"], fetchSite: request.headers["sec-fetch-site"], host: request.headers["host"], publicURL: publicURL
        )
    }

    static let signInNeeded = HTTPError(.unauthorized, "Sign in first: this needs a signed-in account.")
    static let csrfRefusal = HTTPError(.csrfFailed, "This request did not come from a StoryCircle page of this server; reload the page and try again.")

    /// Step 2 for a session cookie: its live session and enabled account, the CSRF defence for a request that
    /// changes something, and the account's role against the route. A cookie that signs nobody in is
    /// answered as a missing credential is.
    private func signedIn(_ token: String, _ route: Route, _ request: HTTPRequest, code: String) async throws -> (SessionRecord, Account) {
        guard let sessions else { throw Self.signInNeeded }
        let found: (session: SessionRecord, account: Account)?
        do {
            found = try await sessions.session(token: token)
        } catch {
            throw HTTPError(.storageUnavailable, "Sessions cannot be read from storage just now (\(StoreFailure.from(error, record: "session").reason)).")
        }
        guard let (session, account) = found else {
            switch route.authority {
            case .admin, .schoolAdmin, .teaching, .storyReader, .storyOwner, .classOwner: throw route.refusal.error(hasToken: false)
            case .teacher, .dashboard: throw Self.roomRefusal(code)
            case .classTeacher: throw ClassRoutes.refusal
            case .none, .signedIn: throw Self.signInNeeded
            }
        }
        // The header's presence and the origin were checked from the head (`proveFromHeaders`); its value now.
        if request.method != .get && request.method != .head {
            guard SessionCookies.csrfMatches(request.headers[SessionCookies.csrfHeader], expected: session.csrfToken) else { throw Self.csrfRefusal }
        }
        guard Self.account(account, may: route.authority) else {
            switch route.authority {
            case .teacher, .dashboard: throw Self.roomRefusal(code)
            case .classTeacher: throw ClassRoutes.refusal
            default: throw HTTPError(.wrongRole, "Your account may not do this; an administrator can.")
            }
        }
        return (session, account)
    }

    /// What a signed-in account's role allows by itself. Rooms, classes and stories are a teacher's or a school
    /// administrator's to ask for; whose they are is decided next, by their owner (`OwnedAdmission`). A
    /// district administrator sees no children's data.
    static func account(_ account: Account, may authority: Authority) -> Bool {
        guard !account.disabled else { return false }
        switch authority {
        case .none, .signedIn: return true
        case .admin: return account.role == .districtAdmin
        case .schoolAdmin: return account.role >= .schoolAdmin
        case .teacher, .dashboard, .classTeacher, .teaching, .storyReader, .storyOwner, .classOwner: return accountMayOwn(account)
        }
    }

    /// The admin token, compared by its digest in constant time.
    func isAdminToken(_ token: String) -> Bool {
        Sodium.constantTimeEquals(Array(RoomCredentials.hash(token).utf8), Array(adminTokenHash.utf8))
    }

    /// The token of `Authorization: Bearer …`, if any.
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// One answer for a wrong token and a missing room, so the API does not tell a guesser which codes exist.
    static func roomRefusal(_ code: String) -> HTTPError {
        HTTPError(.unauthorized, "A valid token for room \(String(code.prefix(12))) is needed (Authorization: Bearer …).")
    }

    /// Step 2 for a room: the room `code`, found (a stored room that is not in memory is loaded) only for the
    /// admin or a token whose MAC proved it for this code, and kept only if the room's stored hashes agree.
    private func room(_ code: String, token: String, proof: Proof, needs: Authority) async throws -> Room {
        let shown = String(code.prefix(12))
        let refusal = Self.roomRefusal(code)
        let isAdmin = proof.isAdmin
        let admits: @Sendable (RoomCredentials) -> Bool = { credentials in
            if isAdmin { return true }
            switch credentials.watchRole(for: token) {
            case .teacher?: return true
            case .dashboard?: return needs == .dashboard
            default: return false
            }
        }
        let found: Room?
        do {
            found = try await registry.directory.findRoom(code, admitting: admits)
        } catch is RoomLeaseError {
            throw HTTPError(.tryAgain, "Room \(shown) is held by another server just now; try again in a moment.")
        } catch {
            throw HTTPError(.storageUnavailable, "The room cannot be read from storage just now (\(StoreFailure.from(error, record: "archive").reason)).")
        }
        guard let room = found else {
            throw isAdmin ? HTTPError(.roomNotFound, "There is no room \(shown).", params: ["code": shown]) : refusal
        }
        guard admits(room.credentials) else { throw refusal }
        // Its owner disabled: the token still shows the room (`dashboard`), but controls and reads nothing.
        if !isAdmin, needs == .teacher, room.controlsStopped { throw HTTPError(DisabledOwners.refusal(room: code)) }
        return room
    }

    /// Step 2 for a class: the class `id` and its rooms, for the admin or the teacher of one of its rooms (the
    /// room the token's MAC named, with its stored hash agreeing). A wrong token and a missing class get the
    /// same 401, as for rooms.
    private func schoolClass(_ id: String, token: String, proof: Proof) async throws -> (found: SchoolClass, rooms: [RoomArchive]) {
        guard let classes else { throw ClassRoutes.noClasses }
        let refusal = ClassRoutes.refusal
        let isAdmin = proof.isAdmin
        guard ClassIDs.isWellFormed(id) else { throw isAdmin ? ClassRoutes.notFound(id) : refusal }
        do {
            guard let found = try await classes.schoolClass(id) else { throw isAdmin ? ClassRoutes.notFound(id) : refusal }
            let rooms = try await classes.classRooms(id)
            let proving = rooms.first { $0.header.code == proof.room?.code && $0.header.credentials.watchRole(for: token) == .teacher }
            guard isAdmin || proving != nil else { throw refusal }
            // The teacher token of a disabled owner's room reads no class report.
            if !isAdmin, let proving, disabledOwners?.stops(proving.header.owner) == true { throw HTTPError(DisabledOwners.refusal(room: proving.header.code)) }
            return (found, rooms)
        } catch let error as HTTPError {
            throw error
        } catch {
            throw ClassRoutes.storeRefusal(error)
        }
    }
}

extension Route.Refusal {
    func error(hasToken: Bool) -> HTTPError {
        switch self {
        case .standard:
            HTTPError(.unauthorized, "This needs the admin token (Authorization: Bearer …); the server printed where it keeps it.")
        case .unauthorized(let message):
            HTTPError(.unauthorized, message)
        case .adminOnly(let unauthorized, let wrongRole):
            hasToken ? HTTPError(.wrongRole, wrongRole) : HTTPError(.unauthorized, unauthorized)
        }
    }
}
