import StoryCircleCore
import StoryCircleServer
import TransportCore

/// Who may call a route. The router checks it before the handler runs, so a handler never looks at a token:
/// it is handed the room or class its authority was proved against.
enum Authority: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Anyone (health, metrics, audio, stored pictures).
    case none
    /// The admin token (the server printed where it keeps it), or a signed-in district administrator.
    case admin
    /// A signed-in school administrator or district administrator, or the admin token.
    case schoolAdmin
    /// Any signed-in, enabled account (a session cookie; the admin token is no account).
    case signedIn
    /// The teacher token of the room `:code`, or the admin token.
    case teacher
    /// The dashboard or teacher token of the room `:code`, or the admin token.
    case dashboard
    /// The teacher token of any room of the class `:id`, or the admin token.
    case classTeacher

    var description: String {
        switch self {
        case .none: "none"
        case .admin: "admin"
        case .schoolAdmin: "school admin"
        case .signedIn: "signed in"
        case .teacher: "teacher"
        case .dashboard: "dashboard"
        case .classTeacher: "class teacher"
        }
    }
}

/// What a request the router admitted carries to its handler.
struct RouteRequest: Sendable {
    var http: HTTPRequest
    /// The path's parameters by name (`:code` → `parameters["code"]`).
    var parameters: [String: String]
    /// Who is asking, as the request's credentials proved it (for what they are answered and the audit
    /// trail): the admin token, a room's token (for the room it names), or a signed-in account. Nil only on `.none` routes asked without a bearer token (the
    /// session cookie is looked up only where a route needs authority).
    var principal: Principal?
    /// The session the cookie proved, when a signed-in account is asking through its cookie.
    var session: SessionRecord?
    /// The room `:code`, for `.teacher` and `.dashboard` routes.
    var room: Room?
    /// The class `:id` with its rooms, for `.classTeacher` routes.
    var schoolClass: (found: SchoolClass, rooms: [RoomArchive])?

    subscript(parameter name: String) -> String { parameters[name] ?? "" }
    var body: [UInt8] { http.body }
    var query: [String: String] { http.query }
}

/// One route: method, path pattern, who may call it, how large a body it takes, and what answers it.
struct Route: Sendable {
    typealias Handler = @Sendable (APIHandler, RouteRequest) async throws -> HTTPResponse

    /// `HEAD` is answered wherever `GET` is (the transport leaves out the body), so no route declares it.
    var method: HTTPMethod
    var pattern: RoutePattern
    var authority: Authority
    /// The largest body the transport reads for this route (nil: the transport's default). A larger limit
    /// is given only to requests that carry a bearer token.
    var bodyLimit: Int?
    /// What a caller without the authority is told (the room and class authorities have their own words).
    var refusal: Refusal
    var handler: Handler

    init(_ method: HTTPMethod, _ pattern: RoutePattern, _ authority: Authority, bodyLimit: Int? = nil, refusal: Refusal = .standard, handler: @escaping Handler) {
        self.method = method
        self.pattern = pattern
        self.authority = authority
        self.bodyLimit = bodyLimit
        self.refusal = refusal
        self.handler = handler
    }

    /// How an `.admin` route refuses a caller without the admin token.
    enum Refusal: Sendable {
        case standard
        /// 401 `unauthorized` with these words.
        case unauthorized(String)
        /// 401 without a token; 403 `wrong_role` with another token (a room's token speaks for one room).
        case adminOnly(unauthorized: String, wrongRole: String)
    }
}

/// A path such as `/api/rooms/:code/results`: literal segments and named parameters.
struct RoutePattern: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    let segments: [Segment]

    init(_ text: String) {
        segments = text.split(separator: "/").map { $0.hasPrefix(":") ? .parameter(String($0.dropFirst())) : .literal(String($0)) }
    }

    init(stringLiteral value: String) { self.init(value) }

    var description: String {
        "/" + segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .parameter(let name): ":" + name
            }
        }.joined(separator: "/")
    }

    /// The first segment (`/api`): the transport hands every path under it to the application.
    var prefix: String { description.split(separator: "/").first.map { "/" + $0 } ?? "/" }

    /// A pattern without parameters is one exact path (the transport's body limits are by exact path).
    var exactPath: String? {
        segments.allSatisfy { if case .literal = $0 { true } else { false } } ? description : nil
    }

    /// More literal segments win: `/api/stories/validate` before `/api/stories/:id`.
    var specificity: Int {
        segments.filter { if case .literal = $0 { true } else { false } }.count
    }

    /// The parameters, when `path` (split into segments) matches.
    func match(_ path: [Substring]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, path) {
            switch segment {
            case .literal(let text): guard part == text else { return nil }
            case .parameter(let name): parameters[name] = String(part)
            }
        }
        return parameters
    }
}

/// Routes of one resource, declared together (`RoomRoutes`, `StoryRoutes`, …).
protocol RouteCollection {
    var routes: [Route] { get }
}
