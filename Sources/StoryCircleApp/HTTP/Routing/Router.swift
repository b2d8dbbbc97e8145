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
        let path = request.path.split(separator: "/")
        let matches = routes.compactMap { route in route.pattern.match(path).map { (route: route, parameters: $0) } }
        guard let best = matches.map(\.route.pattern.specificity).max() else { return HTTPError.notFound.response }
        let candidates = matches.filter { $0.route.pattern.specificity == best }
        let method: HTTPMethod = request.method == .head ? .get : request.method
        guard let (route, parameters) = candidates.first(where: { $0.route.method == method }) else {
            return HTTPError.methodNotAllowed(Self.allowed(candidates.map(\.route.method))).response
        }
        do {
            let admitted = try await api.admit(route, request, parameters: parameters)
            return try await route.handler(api, admitted)
        } catch {
            return HTTPError(error).response
        }
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
