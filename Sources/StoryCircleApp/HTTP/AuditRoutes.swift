import Foundation
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// The audit trail (`docs/protocol.md`, "Audit trail"): `GET /api/audit` as JSON or CSV, newest first, a
/// bounded page at a time; a school administrator reads their school's rows only. The routes that read, export, erase or change record their row with
/// `APIHandler.audit` before they answer.
struct AuditRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.get, "/api/audit", .schoolAdmin, refusal: .unauthorized("The audit trail needs the admin token (Authorization: Bearer …) or an administrator's account.")) {
                try await $0.auditEntries($1)
            },
        ]
    }
}

/// Where the routes append their rows, and where a row that cannot be stored is reported.
struct AuditTrail: Sendable {
    let log: any AuditLog
    var logger: StoryCircleLog?
}

extension APIHandler {
    /// Records that the request's principal did `action` to `target` (`room:123456`, `class:cls_…`,
    /// `account:acc_…`), from the request's address. Call it before answering with children's data or
    /// making the change: when the row cannot be stored this throws 503 `storage_unavailable`, and the
    /// route must then answer nothing else, so nothing is read or erased unrecorded.
    func audit(_ action: AuditAction, target: String, _ request: RouteRequest, schoolID: String? = nil, detail: String = "") async throws {
        try await audit(action, target: target, actor: AuditActor(request.principal), address: request.http.peer, schoolID: schoolID, detail: detail)
    }

    /// The same, for a route whose actor is not the request's principal (a sign-in names the account that
    /// just proved itself, or the login that failed to).
    func audit(_ action: AuditAction, target: String, actor: AuditActor, address: String, schoolID: String? = nil, detail: String = "") async throws {
        guard let auditTrail else { return }
        do {
            try await auditTrail.log.append(AuditEvent(at: clock.now(), actor: actor, action: action, target: target, schoolID: schoolID, address: address, detail: detail))
        } catch {
            let reason = StoreFailure.from(error, record: "audit").reason
            auditTrail.logger?.error("Audit row could not be stored; the request is refused", ["audit.action": action.rawValue, "reason": reason])
            throw HTTPError(.storageUnavailable, "This cannot be done just now: the audit trail cannot be written (\(reason)).")
        }
    }

    /// Records `action`, then does it; when it then fails, a second row says it was not done (and why, as
    /// the API's error code), so the trail never claims an erasure that did not happen.
    func audited<T>(
        _ action: AuditAction, target: String, _ request: RouteRequest, schoolID: String? = nil, detail: String = "", _ body: () async throws -> T
    ) async throws -> T {
        try await audit(action, target: target, request, schoolID: schoolID, detail: detail)
        do {
            return try await body()
        } catch {
            let code = HTTPError(error).error.code.rawValue
            try? await audit(action, target: target, request, schoolID: schoolID, detail: (detail.isEmpty ? "" : detail + ", ") + "not done: \(code)")
            throw error
        }
    }

    /// The school of class `id`, for its rows: the class the router found, or else one small read (nil when
    /// it cannot be read: the row is then written without it rather than the request refused for it).
    func schoolOfClass(_ id: String, _ request: RouteRequest) async -> String? {
        if let found = request.schoolClass?.found, found.id == id { return found.owner?.schoolID }
        return try? await classes?.schoolClass(id)?.owner?.schoolID
    }

    // MARK: - GET /api/audit

    fileprivate func auditEntries(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let auditTrail else { throw HTTPError(.notFound, "This server keeps no audit trail.") }
        var query = try Self.auditQuery(request.query)
        // A school administrator sees their school's rows only, whatever they ask for.
        if let account = request.principal?.account, account.role == .schoolAdmin {
            query.schoolID = account.schoolID ?? ""
        }
        let page: AuditPage
        do {
            page = try await auditTrail.log.entries(query)
        } catch {
            throw HTTPError(.storageUnavailable, "The audit trail cannot be read just now (\(StoreFailure.from(error, record: "audit").reason)).")
        }
        let next: [(name: String, value: String)] = page.next.map { [("x-audit-next", String($0))] } ?? []
        switch request.query["format"] ?? "json" {
        case "json":
            return .json(200, AuditPageResponse(page), headers: next)
        case "csv":
            let file = CSVFile(naming: ["StoryCircle audit trail"], day: clock.now(), text: AuditEntry.csv(page.entries))
            return HTTPResponse(
                status: 200, contentType: "text/csv; charset=utf-8",
                headers: [("cache-control", "no-store"), ("content-disposition", file.contentDisposition)] + next, body: file.body
            )
        default:
            throw HTTPError(.invalidMessage, "format must be json or csv.")
        }
    }

    /// `since`, `until` (ISO 8601: `2026-12-07` or `2026-12-07T08:30:00Z`), `action` (a name of
    /// `AuditAction`), `school`, `before` (the `next` of the page before) and `limit` (1…1000).
    static func auditQuery(_ parameters: [String: String]) throws -> AuditQuery {
        func time(_ name: String) throws -> ServerTime? {
            guard let text = parameters[name] else { return nil }
            guard let time = parseAuditTime(text) else {
                throw HTTPError(.invalidMessage, "\(name) must be a date (2026-12-07) or a time (2026-12-07T08:30:00Z).")
            }
            return time
        }
        var query = AuditQuery(since: try time("since"), until: try time("until"))
        if let name = parameters["action"] {
            guard let action = AuditAction(rawValue: name) else {
                throw HTTPError(.invalidMessage, "action must be one of: \(AuditAction.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            query.action = action
        }
        if let school = parameters["school"] {
            guard (1...64).contains(school.count) else { throw HTTPError(.invalidMessage, "school must be a school's id.") }
            query.schoolID = school
        }
        if let before = parameters["before"] {
            guard let sequence = Int64(before), sequence > 0 else { throw HTTPError(.invalidMessage, "before must be the next of the page before (a positive number).") }
            query.before = sequence
        }
        if let limit = parameters["limit"] {
            guard let count = Int(limit), (1...AuditQuery.maxLimit).contains(count) else {
                throw HTTPError(.invalidMessage, "limit must be a whole number from 1 to \(AuditQuery.maxLimit).")
            }
            query.limit = count
        }
        return query
    }

    static func parseAuditTime(_ text: String) -> ServerTime? {
        guard text.count <= 40 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.count == 10 ? [.withFullDate] : [.withInternetDateTime]
        var date = formatter.date(from: text)
        if date == nil, text.count > 10 {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            date = formatter.date(from: text)
        }
        return date.map { ServerTime(milliseconds: Int64(($0.timeIntervalSince1970 * 1_000).rounded())) }
    }
}

/// A page of the audit trail as the API answers it.
struct AuditPageResponse: Encodable {
    struct Actor: Encodable {
        var kind: String
        var accountId: String?
        var login: String?
        var role: String?
        var room: String?
    }

    struct Entry: Encodable {
        var sequence: Int64
        var at: String
        var actor: Actor
        var action: String
        var target: String
        var schoolId: String?
        var address: String
        var detail: String
    }

    var entries: [Entry]
    /// The `before` of the next (older) page, when there is one.
    var next: Int64?

    init(_ page: AuditPage) {
        entries = page.entries.map { entry in
            let event = entry.event
            return Entry(
                sequence: entry.sequence, at: ClassReport.iso8601(event.at),
                actor: Actor(kind: event.actor.kind.rawValue, accountId: event.actor.accountID, login: event.actor.login, role: event.actor.role?.rawValue, room: event.actor.room),
                action: event.action.rawValue, target: event.target, schoolId: event.schoolID, address: event.address, detail: event.detail
            )
        }
        next = page.next
    }

    func encode(to encoder: any Encoder) throws {
        enum Keys: String, CodingKey { case entries, next }
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(entries, forKey: .entries)
        // `next: null` on the last page, so a client need not tell a missing key from the end.
        try container.encode(next, forKey: .next)
    }
}
