import Foundation
import StoryCircleCore
import TransportCore

/// Classes from the school's roster (`docs/protocol.md`, "Roster import"): `POST /api/roster/import` takes a
/// OneRoster 1.2 CSV bundle (`{"files": {"manifest.csv": "…", "users.csv": "…"}, "check": false}`) from a
/// district administrator or the admin token. A school administrator is refused (`wrong_role`): the links
/// an import keeps are the district's, keyed by sourcedIds unique only within one export, so an import of
/// one school could reach another school's teachers and classes. The
/// roster is read and planned against the store before anything is written; every bad row is answered at
/// once (`invalid_roster`, `problems` with file, line and field), and a good one is imported in one
/// transaction, audited as `roster_imported` with its counts. `"check": true` answers the counts without
/// importing.
struct RosterRoutes: RouteCollection {
    /// A district's bundle: 5,000 children and their enrolments are under 2 MB of CSV; 32 MB leaves room
    /// for the columns StoryCircle reads past, and not for a file that is something else.
    static let maximumBody = 32 * 1024 * 1024
    /// The files a bundle may have (OneRoster 1.2's), by name; others are refused, not ignored, so a
    /// misnamed file is not silently left out.
    static let fileNames: Set<String> = Set(
        ["manifest", "academicSessions", "categories", "classes", "classResources", "courses", "courseResources", "demographics", "enrollments",
         "lineItemLearningObjectiveIds", "lineItems", "lineItemScoreScales", "orgs", "resources", "resultLearningObjectiveIds", "results",
         "resultScoreScales", "roles", "scoreScales", "userProfiles", "userResources", "users"].map { $0 + ".csv" })

    static let refusal = Route.Refusal.adminOnly(
        unauthorized: "Importing a roster needs an administrator: sign in, or send the admin token (Authorization: Bearer …).",
        wrongRole: "Importing a roster needs an administrator; a room's token speaks for one room."
    )

    var routes: [Route] {
        [Route(.post, "/api/roster/import", .admin, bodyLimit: Self.maximumBody, refusal: Self.refusal) { try await $0.importRoster($1) }]
    }

    static func invalid(_ problems: [RosterProblem]) -> HTTPError {
        let listed: [JSONValue] = problems.map { problem in
            .object([
                "file": .string(problem.file), "line": .number(Double(problem.line)), "field": .string(problem.field), "code": .string(problem.code),
                "params": .object(problem.params.mapValues(JSONValue.string)), "message": .string(problem.message),
            ])
        }
        let count = problems.count
        return HTTPError(.invalidRoster, "The roster cannot be imported as it is: \(problems.first?.description ?? "")\(count > 1 ? " (and \(count - 1) more)" : "")",
                         params: ["count": String(count)], extra: ["problems": .array(listed)])
    }

    static func storeRefusal(_ error: any Error) -> HTTPError {
        switch error {
        case RosterBookError.changed:
            return HTTPError(.conflict, "Something the roster changes was changed meanwhile; nothing was imported. Import it again.")
        case RosterBookError.classNameTaken(let name):
            return HTTPError(.nameTaken, "A teacher already has a class called \(name) that the roster did not make; nothing was imported. Rename one of them.", params: ["name": name])
        case RosterBookError.loginTaken(let login):
            return HTTPError(.loginTaken, "The login \(login) was taken meanwhile; nothing was imported.", params: ["login": login])
        case RosterBookError.schoolNameTaken(let name):
            return HTTPError(.schoolNameTaken, "There is a school called \(name) already; nothing was imported.", params: ["name": name])
        default:
            return HTTPError(.storageUnavailable, "The roster cannot be imported just now (\(StoreFailure.from(error, record: "roster").reason)); nothing was imported.")
        }
    }
}

extension APIHandler {
    fileprivate func importRoster(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let roster, let lookalikes else { throw HTTPError(.notFound, "This server keeps no classes from rosters (it runs without a database).") }
        guard request.body.count <= RosterRoutes.maximumBody else {
            throw HTTPError(.payloadTooLarge, "The roster is larger than \(RosterRoutes.maximumBody / 1_048_576) MB.")
        }
        let shape = "{\"files\": {\"manifest.csv\": \"…\", \"users.csv\": \"…\"}}"
        let body = try decodeObject(request.body)
        guard case .object(let sent)? = body["files"] else { throw HTTPError(.invalidMessage, "Send \(shape).") }
        var files: OneRoster.Files = [:]
        for (name, value) in sent {
            guard RosterRoutes.fileNames.contains(name) else {
                throw HTTPError(.invalidMessage, "\(name.prefix(64)) is not a file of a OneRoster 1.2 bundle.", params: ["name": String(name.prefix(64))])
            }
            guard case .string(let text) = value else { throw HTTPError(.invalidMessage, "Each file is its text. Send \(shape).") }
            files[name] = Array(text.utf8)
        }
        var check = false
        if case .bool(let asked)? = body["check"] { check = asked }
        // The router admits only the district's administrators (see the type's comment).
        let authority = RosterAuthority.district
        let parsed: OneRoster
        switch OneRoster.read(files) {
        case .success(let read): parsed = read
        case .failure(let refusal): throw RosterRoutes.invalid(refusal.problems)
        }
        let state: RosterState
        do {
            state = try await roster.rosterState()
        } catch {
            throw RosterRoutes.storeRefusal(error)
        }
        let plan: RosterPlan
        switch RosterPlanner.plan(parsed, state: state, authority: authority, unicode: lookalikes) {
        case .success(let planned): plan = planned
        case .failure(let refusal): throw RosterRoutes.invalid(refusal.problems)
        }
        if !check {
            try await audited(.rosterImported, target: "roster", request, detail: Self.auditDetail(plan.counts)) {
                do {
                    try await roster.applyRoster(plan)
                } catch {
                    throw RosterRoutes.storeRefusal(error)
                }
            }
        }
        return .json(200, RosterImportResponse(imported: !check, counts: plan.counts))
    }

    /// The counts as the audit row's detail (`teachersCreated=3, classesUpdated=1`): only what changed.
    static func auditDetail(_ counts: RosterCounts) -> String {
        let mirror = Mirror(reflecting: counts)
        return mirror.children.compactMap { child in
            guard let label = child.label, let value = child.value as? Int, value > 0 else { return nil }
            return "\(label)=\(value)"
        }.joined(separator: ", ")
    }
}

/// What an import answers.
struct RosterImportResponse: Encodable {
    /// False for a check (`"check": true`): the counts are what an import would do.
    var imported: Bool
    var counts: RosterCounts
}
