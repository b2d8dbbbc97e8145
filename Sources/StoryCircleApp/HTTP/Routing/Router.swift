import StoryCircleCore
import StoryCircleServer
import TransportCore

/// The HTTP API's table of routes and the one place a request is matched against it: the path picks the
/// routes (the most literal pattern wins), the method picks one of them (405 with `Allow` otherwise), the
/// route's authority is checked (`APIHandler.admit`), and only then does its handler run.
struct Router: Sendable {
    let routes: [Route]

    init(_ collections: [any RouteCollection]) {
        routes = collections.flatMap(\.routes)
    }

    func respond(to request: HTTPRequest, with api: APIHandler) async -> HTTPResponse {
        let (route, parameters): (Route, [String: String])
        switch match(request) {
        case .success(let matched): (route, parameters) = matched
        case .failure(let refusal): return refusal.response
        }
        do {
            let admitted = try await api.admit(route, request, parameters: parameters)
            return try await route.handler(api, admitted)
        } catch {
            return api.counted(HTTPError(error).response, request, route)
        }
    }

    /// The route for a request: the path picks the routes (the most literal pattern wins), the method one
    /// of them; else 404, or 405 with `Allow`.
    func match(_ request: HTTPRequest) -> Result<(Route, [String: String]), HTTPError> {
        let path = request.path.split(separator: "/")
        let matches = routes.compactMap { route in route.pattern.match(path).map { (route: route, parameters: $0) } }
        guard let best = matches.map(\.route.pattern.specificity).max() else { return .failure(.notFound) }
        let candidates = matches.filter { $0.route.pattern.specificity == best }
        let method: HTTPMethod = request.method == .head ? .get : request.method
        guard let (route, parameters) = candidates.first(where: { $0.route.method == method }) else {
            return .failure(.methodNotAllowed(Self.allowed(candidates.map(\.route.method))))
        }
        return .success((route, parameters))
    }

    /// The transport's question before it reads a body (`HeadAdmission`): the route's authority from the
    /// headers alone (`APIHandler.proveFromHeaders`: a digest compared, a MAC checked). A request whose
    /// token proves nothing is answered now (401, or 429 once its address has been refused too often),
    /// its body unread; one that proves it may send its route's body limit, any other the transport's
    /// default. Synchronous and quick: it runs on the transport's service thread.
    ///
    /// A session cookie cannot be proved here (that is a store read): a request that brings only a cookie
    /// is let through to `admit`, which looks it up, with the transport's default body limit, or its
    /// route's when this node proved the same cookie in the last minute (`SessionDesk.isKnown`, memory
    /// only); from an address already refused too often it is answered 429 at once, before any store read.
    /// A cookie's change without an `X-CSRF-Token`, or from another site, is answered 403 here.
    func admitHead(_ request: HTTPRequest, with api: APIHandler, defaultBodyLimit: Int) -> HeadAdmission {
        guard case .success(let (route, parameters)) = match(request) else { return .read(bodyLimit: defaultBodyLimit) }
        let proof: APIHandler.Proof
        do {
            proof = try api.proveFromHeaders(route, request, parameters: parameters)
        } catch {
            return .answer(api.counted(HTTPError(error).response, request, route))
        }
        let routeLimit = route.authority == .none ? defaultBodyLimit : max(route.bodyLimit ?? 0, defaultBodyLimit)
        if let cookie = proof.session {
            if let limited = api.limitedNow(request) { return .answer(limited) }
            return .read(bodyLimit: api.sessions?.isKnown(token: cookie) == true ? routeLimit : defaultBodyLimit)
        }
        return .read(bodyLimit: routeLimit)
    }

    /// The `Allow` list: every method declared, and `HEAD` wherever `GET` is.
    static func allowed(_ methods: [HTTPMethod]) -> [HTTPMethod] {
        HTTPMethod.allCases.filter { methods.contains($0) || ($0 == .head && methods.contains(.get)) }
    }

    /// The prefixes the transport hands to the application (everything else is a static file).
    var prefixes: [String] {
        var seen: [String] = []
        for route in routes where !seen.contains(route.pattern.prefix) { seen.append(route.pattern.prefix) }
        return seen
    }

    /// The exact paths that take a larger body than the transport's default.
    var bodyLimits: [String: Int] {
        var limits: [String: Int] = [:]
        for route in routes {
            guard let limit = route.bodyLimit, let path = route.pattern.exactPath else { continue }
            limits[path] = max(limits[path] ?? 0, limit)
        }
        return limits
    }
}

/// Every refusal the HTTP API answers: an error code with words (and parameters a page words it with),
/// anything else the body carries, and extra headers. Handlers throw it; the router answers it.
struct HTTPError: Error, Sendable {
    var error: RoomError
    var extra: [String: JSONValue]
    var headers: [(name: String, value: String)]

    init(_ code: ErrorCode, _ message: String, params: [String: String]? = nil, extra: [String: JSONValue] = [:], headers: [(name: String, value: String)] = []) {
        self.init(RoomError(code, message, params: params), extra: extra, headers: headers)
    }

    init(_ error: RoomError, extra: [String: JSONValue] = [:], headers: [(name: String, value: String)] = []) {
        self.error = error
        self.extra = extra
        self.headers = headers
    }

    /// Any error a handler threw: ours as it is, a room's refusal with its code, anything else a 500.
    init(_ error: any Error) {
        switch error {
        case let error as HTTPError: self = error
        case let error as RoomError: self.init(error, extra: [:])
        default: self.init(.internalError, "Something went wrong on the server.")
        }
    }

    var response: HTTPResponse {
        var response = HTTPResponse.error(error, extra: extra)
        response.headers += headers
        return response
    }

    static let notFound = HTTPError(.notFound, "There is nothing here. Children join at /, dashboards are at /dashboard.")

    static func methodNotAllowed(_ allowed: [HTTPMethod]) -> HTTPError {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        return HTTPError(.methodNotAllowed, "Use \(list) here.", headers: [("allow", list)])
    }
}
