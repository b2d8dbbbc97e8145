import Foundation
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// A school's retention rules (`docs/privacy.md`, "For how long"): `GET|PUT /api/schools/:id/retention`, for
/// the school's administrator and the district's (a school administrator asking about another school is
/// told, as for an unknown school, 404). A `PUT` replaces the school's rules whole: each kind a number of
/// days within its bounds (`RetentionKind.bounds`; 0, "kept until deleted", where the kind allows it), or
/// null or left out for the server's default. Every change is recorded (`retention_changed`, old → new)
/// before it is made.
struct RetentionRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.get, "/api/schools/:id/retention", .schoolAdmin) { try await $0.showRetention($1) },
            Route(.put, "/api/schools/:id/retention", .schoolAdmin) { try await $0.changeRetention($1) },
        ]
    }

    /// Six kinds and their numbers: a few hundred bytes.
    static let maximumBody = 1_024
    static let shape = "{\"rooms\": 30, \"removed_members\": 30, \"classes\": 0, \"stories\": 0, \"pictures\": 0, \"audit\": 400} (null or left out: the server's default)"

    /// The rules out of a body, or the first problem in the API's words.
    static func rules(_ body: [String: JSONValue]) throws -> SchoolRetention {
        if let unknown = body.keys.sorted().first(where: { RetentionKind(rawValue: $0) == nil }) {
            throw HTTPError(.invalidSettings, "There is no retention rule called \(unknown.prefix(40)). Send \(shape).", params: ["kind": String(unknown.prefix(40))])
        }
        var rules = SchoolRetention()
        for kind in RetentionKind.allCases {
            switch body[kind.rawValue] {
            case nil, .null?:
                continue
            case .number(let days)? where days == days.rounded() && kind.allows(Int(exactly: days) ?? -1):
                rules[kind] = Int(days)
            default:
                let params = ["kind": kind.rawValue, "min": String(kind.bounds.lowerBound), "max": String(kind.bounds.upperBound), "keep": kind.keepsForever ? "true" : "false"]
                throw HTTPError(.invalidSettings, "\(kind.boundsDescription) (or null for the server's default).", params: params)
            }
        }
        return rules
    }

    /// What a page needs to show the form: the school's choices, the defaults and the bounds.
    static func response(_ school: String, _ rules: SchoolRetention, defaults: RetentionDefaults) -> JSONValue {
        let kinds = RetentionKind.allCases
        return .object([
            "school": .string(school),
            "retention": .object(Dictionary(uniqueKeysWithValues: kinds.map { ($0.rawValue, rules[$0].map { .number(Double($0)) } ?? .null) })),
            "defaults": .object(Dictionary(uniqueKeysWithValues: kinds.map { ($0.rawValue, .number(Double(defaults.days[$0] ?? 0))) })),
            "bounds": .object(Dictionary(uniqueKeysWithValues: kinds.map { kind in
                (kind.rawValue, .object(["min": .number(Double(kind.bounds.lowerBound)), "max": .number(Double(kind.bounds.upperBound)), "keep": .bool(kind.keepsForever)]))
            })),
        ])
    }
}

extension APIHandler {
    /// School `id` when the caller may reach it (nothing read yet): its own administrator's, or any for
    /// the district's.
    private func reachableSchool(_ request: RouteRequest) throws -> String {
        let id = request[parameter: "id"]
        guard accounts != nil, retention != nil else { throw AccountRoutes.noAccounts }
        if case .school(let managed) = AccountReach(request.principal), managed != id { throw AccountRoutes.schoolNotFound(id) }
        return id
    }

    /// The retention book and school `id`, once it exists.
    private func retentionSchool(_ id: String) async throws -> (book: any RetentionBook, school: String) {
        guard let accounts, let retention else { throw AccountRoutes.noAccounts }
        do {
            guard try await accounts.school(id) != nil else { throw AccountRoutes.schoolNotFound(id) }
        } catch {
            throw AccountRoutes.storeRefusal(error)
        }
        return (retention, id)
    }

    fileprivate func showRetention(_ request: RouteRequest) async throws -> HTTPResponse {
        let (book, school) = try await retentionSchool(try reachableSchool(request))
        let rules = try await retentionCall { try await book.retention(ofSchool: school) }
        return .json(200, RetentionRoutes.response(school, rules, defaults: retentionDefaults))
    }

    fileprivate func changeRetention(_ request: RouteRequest) async throws -> HTTPResponse {
        let id = try reachableSchool(request)
        guard request.body.count <= RetentionRoutes.maximumBody else { throw HTTPError(.payloadTooLarge, "The body is larger than \(RetentionRoutes.maximumBody) bytes.") }
        let body: [String: JSONValue]
        do {
            body = try decodeObject(request.body)
        } catch let error as HTTPError {
            throw HTTPError(error.error.code, "\(error.error.message) Send \(RetentionRoutes.shape).")
        }
        let rules = try RetentionRoutes.rules(body)
        let (book, school) = try await retentionSchool(id)
        let old = try await retentionCall { try await book.retention(ofSchool: school) }
        try await audited(.retentionChanged, target: "school:\(school)", request, schoolID: school, detail: "\(old.summary) → \(rules.summary)") {
            _ = try await retentionCall { try await book.setRetention(rules, ofSchool: school) }
        }
        return .json(200, RetentionRoutes.response(school, rules, defaults: retentionDefaults))
    }

    private func retentionCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw HTTPError(.storageUnavailable, "The retention rules cannot be read or stored just now (\(StoreFailure.from(error, record: "retention").reason)).")
        }
    }
}
