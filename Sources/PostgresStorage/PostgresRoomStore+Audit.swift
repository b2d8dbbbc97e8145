import Foundation
import StoryCircleCore

/// The audit trail in PostgreSQL (`audit_rows`, step 10), shared by every node. A row is one INSERT,
/// committed on its own on the library's connection before the read it records is answered. Triggers make
/// the table append-only for this role: UPDATE and TRUNCATE are refused, and DELETE too unless the
/// transaction names the retention cutoff (`storycircle.audit_prune_before`), as `prune` does, and then
/// only for the rows older than it.
extension PostgresRoomStore: AuditLog {
    @discardableResult
    public func append(_ event: AuditEvent) async throws -> AuditEntry {
        // Tried once more on a lost connection: a row stored twice says a read happened twice; a row
        // missing would hide it.
        let sequence = try await auditCall(retrying: true) { connection in
            try connection.query("""
                INSERT INTO audit_rows (at, actor_kind, actor_account, actor_login, actor_role, actor_room, action, target, school_id, address, detail)
                VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text, $11::text) RETURNING seq
                """, [
                .integer(event.at.milliseconds), .text(event.actor.kind.rawValue), Self.optionalText(event.actor.accountID), Self.optionalText(event.actor.login),
                Self.optionalText(event.actor.role?.rawValue), Self.optionalText(event.actor.room), .text(event.action.rawValue), .text(event.target),
                Self.optionalText(event.schoolID), .text(event.address), .text(event.detail),
            ]).int64(0, 0)
        }
        return AuditEntry(sequence: sequence, event: event)
    }

    public func entries(_ query: AuditQuery) async throws -> AuditPage {
        var conditions: [String] = []
        var values: [PostgresValue] = []
        func condition(_ sql: String, _ value: PostgresValue) {
            values.append(value)
            conditions.append(sql.replacingOccurrences(of: "$", with: "$\(values.count)"))
        }
        if let since = query.since { condition("at >= $::bigint", .integer(since.milliseconds)) }
        if let until = query.until { condition("at < $::bigint", .integer(until.milliseconds)) }
        if let action = query.action { condition("action = $::text", .text(action.rawValue)) }
        if let school = query.schoolID { condition("school_id = $::text", .text(school)) }
        if let before = query.before { condition("seq < $::bigint", .integer(before)) }
        values.append(.int(query.limit + 1))
        let sql = """
            SELECT seq, at, actor_kind, actor_account, actor_login, actor_role, actor_room, action, target, school_id, address, detail
            FROM audit_rows \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")) ORDER BY seq DESC LIMIT $\(values.count)::integer
            """
        let parameters = values
        return try await auditCall(retrying: true) { connection in
            let rows = try connection.query(sql, parameters)
            // One more than asked was read: whether there is a next page.
            let shown = min(rows.count, query.limit)
            var entries: [AuditEntry] = []
            for row in 0..<shown {
                // An action this version has no name for (a newer server wrote it) is left out, not misnamed.
                guard let action = AuditAction(rawValue: rows.text(row, 7)) else { continue }
                entries.append(AuditEntry(sequence: rows.int64(row, 0), event: AuditEvent(
                    at: ServerTime(milliseconds: rows.int64(row, 1)),
                    actor: AuditActor(
                        kind: AuditActor.Kind(rawValue: rows.text(row, 2)) ?? .nobody, accountID: Self.optionalText(rows, row, 3),
                        login: Self.optionalText(rows, row, 4), role: Self.optionalText(rows, row, 5).flatMap(AccountRole.init(rawValue:)),
                        room: Self.optionalText(rows, row, 6)
                    ),
                    action: action, target: rows.text(row, 8), schoolID: Self.optionalText(rows, row, 9), address: rows.text(row, 10), detail: rows.text(row, 11)
                )))
            }
            return AuditPage(entries: entries, next: rows.count > query.limit && shown > 0 ? rows.int64(shown - 1, 0) : nil)
        }
    }

    @discardableResult
    public func prune(before cutoff: ServerTime) async throws -> Int {
        try await auditCall(retrying: false) { connection in
            try connection.execute("BEGIN")
            do {
                try connection.query("SELECT set_config('storycircle.audit_prune_before', $1::text, true)", [.text(String(cutoff.milliseconds))])
                let deleted = try connection.query("WITH gone AS (DELETE FROM audit_rows WHERE at < $1::bigint RETURNING 1) SELECT count(*) FROM gone", [.integer(cutoff.milliseconds)]).int(0, 0)
                try connection.execute("COMMIT")
                return deleted
            } catch {
                Self.rollBack(connection)
                throw error
            }
        }
    }

    private func auditCall<T: Sendable>(retrying: Bool, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        do {
            return try await threads.run { [self] in
                guard !isClosed.withLock({ $0 }) else { throw StoreFailure(.unavailable, record: "audit", reason: "the room store is closed") }
                return try libraryConnection.withLock { connection in
                    try Self.withConnection(&connection, settings, retrying: retrying, what: "audit", body)
                }
            }
        } catch let error as PostgresError {
            // A row that cannot be stored is a store that cannot record: the caller refuses what it records.
            throw StoreFailure(.unavailable, record: "audit", reason: error.description)
        }
    }

    private static func optionalText(_ text: String?) -> PostgresValue {
        text.map(PostgresValue.text) ?? .null
    }

    private static func optionalText(_ rows: PostgresRows, _ row: Int, _ column: Int) -> String? {
        rows.isNull(row, column) ? nil : rows.text(row, column)
    }
}
