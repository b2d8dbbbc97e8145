import StoryCircleCore

/// The audit trail in SQLite (`audit_rows`, schema version 10). A row is appended in a turn of the writer
/// thread of its own, one transaction, so it is durable (`synchronous=FULL`) before the read it records is
/// answered. Nothing here updates a row (a trigger refuses it); the retention rule deletes old ones.
extension SQLiteRoomStore: AuditLog {
    @discardableResult
    public func append(_ event: AuditEvent) async throws -> AuditEntry {
        let sequence: Int64 = try await auditTurn { database in
            let statement = try database.prepare("""
                INSERT INTO audit_rows (at, actor_kind, actor_account, actor_login, actor_role, actor_room, action, target, school_id, address, detail)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq
                """)
            try statement.bind([
                .integer(event.at.milliseconds), .text(event.actor.kind.rawValue), Self.optionalText(event.actor.accountID), Self.optionalText(event.actor.login),
                Self.optionalText(event.actor.role?.rawValue), Self.optionalText(event.actor.room), .text(event.action.rawValue), .text(event.target),
                Self.optionalText(event.schoolID), .text(event.address), .text(event.detail),
            ])
            guard try statement.step() else { throw StoreFailure(.unavailable, record: "audit", reason: "the row was not given a number") }
            let sequence = statement.int64(0)
            // Step to the end, so the statement is finished before the transaction commits.
            while try statement.step() {}
            return sequence
        }
        return AuditEntry(sequence: sequence, event: event)
    }

    public func entries(_ query: AuditQuery) async throws -> AuditPage {
        do {
            return try await read { database in
                var conditions: [String] = []
                var values: [SQLiteValue] = []
                if let since = query.since { conditions.append("at >= ?"); values.append(.integer(since.milliseconds)) }
                if let until = query.until { conditions.append("at < ?"); values.append(.integer(until.milliseconds)) }
                if let action = query.action { conditions.append("action = ?"); values.append(.text(action.rawValue)) }
                if let school = query.schoolID { conditions.append("school_id = ?"); values.append(.text(school)) }
                if let before = query.before { conditions.append("seq < ?"); values.append(.integer(before)) }
                let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
                let statement = try database.prepare("""
                    SELECT seq, at, actor_kind, actor_account, actor_login, actor_role, actor_room, action, target, school_id, address, detail
                    FROM audit_rows \(filter) ORDER BY seq DESC LIMIT ?
                    """)
                // One more than asked: whether there is a next page.
                try statement.bind(values + [.int(query.limit + 1)])
                var entries: [AuditEntry] = []
                var rows = 0
                var last: Int64?
                var more = false
                while try statement.step() {
                    // The row after the page: there is a next page.
                    if rows == query.limit { more = true; break }
                    rows += 1
                    last = statement.int64(0)
                    // An action this version has no name for (a newer server wrote it) is left out, not misnamed.
                    guard let action = AuditAction(rawValue: statement.text(7)) else { continue }
                    entries.append(AuditEntry(sequence: statement.int64(0), event: AuditEvent(
                        at: ServerTime(milliseconds: statement.int64(1)),
                        actor: AuditActor(
                            kind: AuditActor.Kind(rawValue: statement.text(2)) ?? .nobody, accountID: Self.optionalText(statement, 3),
                            login: Self.optionalText(statement, 4), role: Self.optionalText(statement, 5).flatMap(AccountRole.init(rawValue:)),
                            room: Self.optionalText(statement, 6)
                        ),
                        action: action, target: statement.text(8), schoolID: Self.optionalText(statement, 9), address: statement.text(10),
                        detail: statement.text(11)
                    )))
                }
                return AuditPage(entries: entries, next: more ? last : nil)
            }
        } catch let error as SQLiteError {
            throw StoreFailure(.unavailable, record: "audit", reason: error.reason)
        }
    }

    @discardableResult
    public func prune(before cutoff: ServerTime) async throws -> Int {
        try await auditTurn { database in
            let statement = try database.prepare("DELETE FROM audit_rows WHERE at < ?")
            try statement.run(.integer(cutoff.milliseconds))
            return statement.changes
        }
    }

    private func auditTurn<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        do {
            return try await writer.turn(as: SQLiteCommitter.self) { committer in
                try committer.database.transaction { try body(committer.database) }
            }
        } catch let error as SQLiteError {
            // A row that cannot be stored is a store that cannot record: the caller refuses what it records.
            throw StoreFailure(.unavailable, record: "audit", reason: error.reason)
        }
    }

    private static func optionalText(_ text: String?) -> SQLiteValue {
        text.map(SQLiteValue.text) ?? .null
    }

    private static func optionalText(_ statement: SQLiteStatement, _ column: Int32) -> String? {
        statement.isNull(column) ? nil : statement.text(column)
    }
}
