import Foundation
import RoomStoreSupport
import StoryCircleCore

/// Accounts, schools, sessions and passkeys in PostgreSQL, shared by every node. Reads (a session's lookup
/// on every request among them) use the reader connection; changes the library's connection, each one
/// transaction that first locks the account's row, so two administrators saving one version take turns and
/// the second finds the version moved. Two nodes creating one login, school or passkey at the same moment
/// meet on its unique index: one is refused as taken. Like the library's, changes are not tried again on a
/// lost connection.
extension PostgresRoomStore: AccountBook {
    // MARK: - Schools

    public func listSchools() async throws -> [School] {
        try await read { connection in
            let rows = try connection.query("SELECT \(Self.schoolColumns) FROM schools ORDER BY name_key, id")
            return (0..<rows.count).map { Self.school(rows, $0) }
        }
    }

    public func school(_ id: String) async throws -> School? {
        try await read { connection in
            let rows = try connection.query("SELECT \(Self.schoolColumns) FROM schools WHERE id = $1::text", [.text(id)])
            return rows.count == 1 ? Self.school(rows, 0) : nil
        }
    }

    public func createSchool(name: String, id: String) async throws -> School {
        let now = Self.now()
        return try await libraryChange("account", taken: AccountBookError.nameTaken(name: name)) { connection in
            try Self.insertSchool(name: name, id: id, at: now, on: connection)
        }
    }

    // MARK: - Accounts

    public func listAccounts(schoolID: String?) async throws -> [Account] {
        try await read { connection in
            let rows = if let schoolID {
                try connection.query("SELECT \(Self.accountColumns) FROM accounts WHERE school_id = $1::text ORDER BY login", [.text(schoolID)])
            } else {
                try connection.query("SELECT \(Self.accountColumns) FROM accounts ORDER BY login")
            }
            return (0..<rows.count).map { Self.account(rows, $0) }
        }
    }

    public func disabledAccountIDs() async throws -> Set<String> {
        try await read { connection in
            let rows = try connection.query("SELECT id FROM accounts WHERE disabled")
            return Set((0..<rows.count).map { rows.text($0, 0) })
        }
    }

    public func account(id: String) async throws -> Account? {
        try await read { try Self.loadAccount(id: id, from: $0) }
    }

    public func account(login: String) async throws -> Account? {
        try await read { connection in
            let rows = try connection.query("SELECT \(Self.accountColumns) FROM accounts WHERE login = $1::text", [.text(AccountKeys.login(login))])
            return rows.count == 1 ? Self.account(rows, 0) : nil
        }
    }

    public func createAccount(_ draft: AccountDraft) async throws -> Account {
        let now = Self.now()
        return try await libraryChange("account", taken: AccountBookError.loginTaken(login: AccountKeys.login(draft.login))) { connection in
            try Self.insertAccount(draft, at: now, on: connection)
        }
    }

    public func updateAccount(_ id: String, _ change: AccountChange, basedOn version: Int) async throws -> Account {
        try await libraryChange("account") { connection in
            try Self.changeAccount(id, change, basedOn: version, on: connection)
        }
    }

    public func setPasswordHash(_ id: String, _ hash: String?) async throws {
        try await libraryChange("account") { connection in
            let updated = try connection.query("UPDATE accounts SET password_hash = $1::text WHERE id = $2::text RETURNING 1", [hash.map { .text($0) } ?? .null, .text(id)])
            guard updated.count == 1 else { throw AccountBookError.notFound(id: id) }
            try connection.query("DELETE FROM sessions WHERE account_id = $1::text", [.text(id)])
        }
    }

    // MARK: - Setup codes

    public func resetAccount(_ id: String, setupCodeHash: String, expiresAt: ServerTime) async throws {
        try await libraryChange("account") { connection in
            let updated = try connection.query("UPDATE accounts SET password_hash = NULL WHERE id = $1::text RETURNING 1", [.text(id)])
            guard updated.count == 1 else { throw AccountBookError.notFound(id: id) }
            try connection.query("DELETE FROM sessions WHERE account_id = $1::text", [.text(id)])
            try connection.query("DELETE FROM passkeys WHERE account_id = $1::text", [.text(id)])
            try connection.query("DELETE FROM account_setup_codes WHERE account_id = $1::text", [.text(id)])
            try connection.query(
                "INSERT INTO account_setup_codes (code_hash, account_id, expires_at) VALUES ($1::text, $2::text, $3::bigint)",
                [.text(setupCodeHash), .text(id), .integer(expiresAt.milliseconds)]
            )
        }
    }

    public func setupCodeAccount(codeHash: String, at now: ServerTime) async throws -> Account? {
        try await read { try Self.setupCodeAccount(codeHash, at: now, locking: false, on: $0) }
    }

    public func useSetupCode(codeHash: String, passwordHash: String, at now: ServerTime) async throws -> Account? {
        try await libraryChange("account") { connection in
            // The code's row locked: of two uses at once, the second finds it gone.
            guard let account = try Self.setupCodeAccount(codeHash, at: now, locking: true, on: connection) else { return nil }
            try connection.query("UPDATE accounts SET password_hash = $1::text WHERE id = $2::text", [.text(passwordHash), .text(account.id)])
            try connection.query("DELETE FROM account_setup_codes WHERE account_id = $1::text", [.text(account.id)])
            try connection.query("DELETE FROM sessions WHERE account_id = $1::text", [.text(account.id)])
            return try Self.loadAccount(id: account.id, from: connection)
        }
    }

    // MARK: - Sessions

    public func createSession(_ session: SessionRecord, ifPasswordHash passwordHash: String?) async throws -> Bool {
        try await libraryChange("account") { connection in
            // The row locked and read as last committed: a reset or a disabling either committed before
            // (and is seen here) or waits, and then deletes this session.
            let rows = try connection.query("SELECT disabled, password_hash FROM accounts WHERE id = $1::text FOR SHARE", [.text(session.accountID)])
            guard rows.count == 1 else { throw AccountBookError.notFound(id: session.accountID) }
            guard !rows.bool(0, 0), passwordHash == nil || (!rows.isNull(0, 1) && rows.text(0, 1) == passwordHash) else { return false }
            try connection.query("""
                INSERT INTO sessions (token_hash, account_id, csrf_token, created_at, expires_at, method)
                VALUES ($1::text, $2::text, $3::text, $4::bigint, $5::bigint, $6::text)
                """, [
                    .text(session.tokenHash), .text(session.accountID), .text(session.csrfToken), .integer(session.createdAt.milliseconds),
                    .integer(session.expiresAt.milliseconds), .text(session.method),
                ])
            return true
        }
    }

    public func session(tokenHash: String, at now: ServerTime) async throws -> (session: SessionRecord, account: Account)? {
        try await read { connection in
            let rows = try connection.query("""
                SELECT s.token_hash, s.account_id, s.csrf_token, s.created_at, s.expires_at, s.method, \(Self.accountColumns("a."))
                FROM sessions s JOIN accounts a ON a.id = s.account_id
                WHERE s.token_hash = $1::text AND s.expires_at > $2::bigint AND NOT a.disabled
                """, [.text(tokenHash), .integer(now.milliseconds)])
            guard rows.count == 1 else { return nil }
            let session = SessionRecord(
                tokenHash: rows.text(0, 0), accountID: rows.text(0, 1), csrfToken: rows.text(0, 2), createdAt: ServerTime(milliseconds: rows.int64(0, 3)),
                expiresAt: ServerTime(milliseconds: rows.int64(0, 4)), method: rows.text(0, 5)
            )
            return (session, Self.account(rows, 0, from: 6))
        }
    }

    public func deleteSession(tokenHash: String) async throws {
        try await libraryChange("account") { connection in
            _ = try connection.query("DELETE FROM sessions WHERE token_hash = $1::text", [.text(tokenHash)])
        }
    }

    @discardableResult
    public func deleteSessions(accountID: String) async throws -> Int {
        try await libraryChange("account") { connection in
            try connection.query("DELETE FROM sessions WHERE account_id = $1::text RETURNING 1", [.text(accountID)]).count
        }
    }

    @discardableResult
    public func pruneSessions(before now: ServerTime) async throws -> Int {
        try await libraryChange("account") { connection in
            let sessions = try connection.query("WITH gone AS (DELETE FROM sessions WHERE expires_at <= $1::bigint RETURNING 1) SELECT count(*) FROM gone", [.integer(now.milliseconds)]).int(0, 0)
            try connection.query("DELETE FROM account_setup_codes WHERE expires_at <= $1::bigint", [.integer(now.milliseconds)])
            return sessions
        }
    }

    // MARK: - Passkeys

    public func addPasskey(_ passkey: PasskeyRecord, limit: Int) async throws {
        try await libraryChange("account", taken: AccountBookError.credentialTaken) { connection in
            // The account's row locked: two registrations at once are counted one after the other.
            guard try connection.query("SELECT 1 FROM accounts WHERE id = $1::text FOR UPDATE", [.text(passkey.accountID)]).count == 1 else {
                throw AccountBookError.notFound(id: passkey.accountID)
            }
            let count = try connection.query("SELECT count(*)::bigint FROM passkeys WHERE account_id = $1::text", [.text(passkey.accountID)])
            guard count.int64(0, 0) < Int64(limit) else { throw AccountBookError.tooManyPasskeys }
            guard try connection.query("SELECT 1 FROM passkeys WHERE credential_id = $1::text", [.text(passkey.credentialID)]).count == 0 else {
                throw AccountBookError.credentialTaken
            }
            try connection.query("""
                INSERT INTO passkeys (credential_id, account_id, public_key, algorithm, sign_count, name, created_at, last_used_at)
                VALUES ($1::text, $2::text, $3::text::bytea, $4::integer, $5::bigint, $6::text, $7::bigint, $8::bigint)
                """, [
                    .text(passkey.credentialID), .text(passkey.accountID), .text(Self.byteaHex(passkey.publicKey)), .int(passkey.algorithm),
                    .integer(Int64(passkey.signCount)), .text(passkey.name), .integer(passkey.createdAt.milliseconds),
                    passkey.lastUsedAt.map { .integer($0.milliseconds) } ?? .null,
                ])
        }
    }

    public func passkeys(accountID: String) async throws -> [PasskeyRecord] {
        try await read { connection in
            let rows = try connection.query(
                "SELECT \(Self.passkeyColumns) FROM passkeys p WHERE p.account_id = $1::text ORDER BY p.created_at, p.credential_id", [.text(accountID)]
            )
            return try (0..<rows.count).map { try Self.passkey(rows, $0) }
        }
    }

    public func passkey(credentialID: String) async throws -> (passkey: PasskeyRecord, account: Account)? {
        try await read { connection in
            let rows = try connection.query("""
                SELECT \(Self.passkeyColumns), \(Self.accountColumns("a.")) FROM passkeys p JOIN accounts a ON a.id = p.account_id
                WHERE p.credential_id = $1::text
                """, [.text(credentialID)])
            guard rows.count == 1 else { return nil }
            return (try Self.passkey(rows, 0), Self.account(rows, 0, from: 8))
        }
    }

    public func recordPasskeyUse(credentialID: String, signCount: UInt32, at time: ServerTime) async throws -> Bool {
        try await libraryChange("account") { connection in
            try connection.query(
                """
                UPDATE passkeys SET sign_count = $1::bigint, last_used_at = $2::bigint
                WHERE credential_id = $3::text AND (sign_count < $1::bigint OR ($1::bigint = 0 AND sign_count = 0)) RETURNING 1
                """,
                [.integer(Int64(signCount)), .integer(time.milliseconds), .text(credentialID)]
            ).count == 1
        }
    }

    public func deletePasskey(credentialID: String, accountID: String) async throws {
        try await libraryChange("account") { connection in
            _ = try connection.query("DELETE FROM passkeys WHERE credential_id = $1::text AND account_id = $2::text", [.text(credentialID), .text(accountID)])
        }
    }

    // MARK: - Helpers

    /// Stores school `id`; throws `.nameTaken` when another school has the name (compared case-folded).
    @discardableResult
    static func insertSchool(name: String, id: String, at now: ServerTime, on connection: PostgresConnection) throws -> School {
        let key = AccountKeys.schoolName(name)
        guard try connection.query("SELECT 1 FROM schools WHERE name_key = $1::text", [.text(key)]).count == 0 else {
            throw AccountBookError.nameTaken(name: name)
        }
        let rows = try connection.query("""
            INSERT INTO schools (id, name, name_key, version, created_at) VALUES ($1::text, $2::text, $3::text, 1, $4::bigint)
            RETURNING \(Self.schoolColumns)
            """, [.text(id), .text(name), .text(key), .integer(now.milliseconds)])
        return Self.school(rows, 0)
    }

    /// Stores the draft's account; throws `.loginTaken`, `.schoolNotFound`.
    @discardableResult
    static func insertAccount(_ draft: AccountDraft, at now: ServerTime, on connection: PostgresConnection) throws -> Account {
        let login = AccountKeys.login(draft.login)
        guard try connection.query("SELECT 1 FROM accounts WHERE login = $1::text", [.text(login)]).count == 0 else {
            throw AccountBookError.loginTaken(login: login)
        }
        // Locked, so the school cannot go between this look and the insert.
        if let school = draft.schoolID, try connection.query("SELECT 1 FROM schools WHERE id = $1::text FOR SHARE", [.text(school)]).count == 0 {
            throw AccountBookError.schoolNotFound(id: school)
        }
        let rows = try connection.query("""
            INSERT INTO accounts (id, login, display_name, role, school_id, disabled, version, created_at, password_hash)
            VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, false, 1, $6::bigint, $7::text)
            RETURNING \(Self.accountColumns)
            """, [
                .text(draft.id), .text(login), .text(draft.displayName), .text(draft.role.rawValue), draft.schoolID.map { .text($0) } ?? .null,
                .integer(now.milliseconds), draft.passwordHash.map { .text($0) } ?? .null,
            ])
        return Self.account(rows, 0)
    }

    /// Applies `change` to account `id` if it is still at `version` (`updateAccount`).
    @discardableResult
    static func changeAccount(_ id: String, _ change: AccountChange, basedOn version: Int, on connection: PostgresConnection) throws -> Account {
        let locked = try connection.query("SELECT \(Self.accountColumns) FROM accounts WHERE id = $1::text FOR UPDATE", [.text(id)])
        guard locked.count == 1 else { throw AccountBookError.notFound(id: id) }
        let current = Self.account(locked, 0)
        guard current.version == version else { throw AccountBookError.conflict(current: current) }
        var next = current
        if let name = change.displayName { next.displayName = name }
        if let role = change.role { next.role = role }
        if let school = change.schoolID { next.schoolID = school }
        if let disabled = change.disabled { next.disabled = disabled }
        if let school = next.schoolID, school != current.schoolID,
           try connection.query("SELECT 1 FROM schools WHERE id = $1::text FOR SHARE", [.text(school)]).count == 0 {
            throw AccountBookError.schoolNotFound(id: school)
        }
        if current.role == .districtAdmin, !current.disabled, next.role != .districtAdmin || next.disabled {
            // Two administrators each demoting one of the last two on different nodes take turns here;
            // the second counts after the first has committed.
            try connection.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.storycircle.district_admins'))")
            let others = try connection.query(
                "SELECT count(*) FROM accounts WHERE role = 'district_admin' AND NOT disabled AND id <> $1::text", [.text(id)]
            ).int(0, 0)
            if others == 0 { throw AccountBookError.lastDistrictAdmin }
        }
        let rows = try connection.query("""
            UPDATE accounts SET display_name = $1::text, role = $2::text, school_id = $3::text, disabled = $4::boolean, version = version + 1
            WHERE id = $5::text RETURNING \(Self.accountColumns)
            """, [.text(next.displayName), .text(next.role.rawValue), next.schoolID.map { .text($0) } ?? .null, .bool(next.disabled), .text(id)])
        // In the same transaction: nobody is signed in to a disabled account for a moment.
        if next.disabled {
            try connection.query("DELETE FROM sessions WHERE account_id = $1::text", [.text(id)])
            try connection.query("DELETE FROM account_setup_codes WHERE account_id = $1::text", [.text(id)])
        }
        return Self.account(rows, 0)
    }

    static let schoolColumns = "id, name, created_at, version"
    private static let passkeyColumns = "p.credential_id, p.account_id, p.public_key, p.algorithm, p.sign_count, p.name, p.created_at, p.last_used_at"
    static let accountColumns = accountColumns("")

    static func accountColumns(_ table: String) -> String {
        ["id", "login", "display_name", "role", "school_id", "disabled", "version", "created_at", "password_hash"].map { table + $0 }.joined(separator: ", ")
    }

    private static func loadAccount(id: String, from connection: PostgresConnection) throws -> Account? {
        let rows = try connection.query("SELECT \(accountColumns) FROM accounts WHERE id = $1::text", [.text(id)])
        return rows.count == 1 ? account(rows, 0) : nil
    }

    static func account(_ rows: PostgresRows, _ row: Int, from first: Int = 0) -> Account {
        Account(
            id: rows.text(row, first), login: rows.text(row, first + 1), displayName: rows.text(row, first + 2),
            role: AccountRole(rawValue: rows.text(row, first + 3)) ?? .teacher, schoolID: rows.isNull(row, first + 4) ? nil : rows.text(row, first + 4),
            disabled: rows.bool(row, first + 5), version: rows.int(row, first + 6), createdAt: ServerTime(milliseconds: rows.int64(row, first + 7)),
            passwordHash: rows.isNull(row, first + 8) ? nil : rows.text(row, first + 8)
        )
    }

    static func school(_ rows: PostgresRows, _ row: Int) -> School {
        School(id: rows.text(row, 0), name: rows.text(row, 1), createdAt: ServerTime(milliseconds: rows.int64(row, 2)), version: rows.int(row, 3))
    }

    private static func passkey(_ rows: PostgresRows, _ row: Int) throws -> PasskeyRecord {
        PasskeyRecord(
            credentialID: rows.text(row, 0), accountID: rows.text(row, 1), publicKey: try bytes(fromByteaHex: rows.text(row, 2)), algorithm: rows.int(row, 3),
            signCount: UInt32(truncatingIfNeeded: rows.int64(row, 4)), name: rows.text(row, 5), createdAt: ServerTime(milliseconds: rows.int64(row, 6)),
            lastUsedAt: rows.isNull(row, 7) ? nil : ServerTime(milliseconds: rows.int64(row, 7))
        )
    }

    private static func setupCodeAccount(_ codeHash: String, at now: ServerTime, locking: Bool, on connection: PostgresConnection) throws -> Account? {
        let rows = try connection.query("""
            SELECT \(accountColumns("a.")) FROM account_setup_codes c JOIN accounts a ON a.id = c.account_id
            WHERE c.code_hash = $1::text AND c.expires_at > $2::bigint AND NOT a.disabled\(locking ? " FOR UPDATE" : "")
            """, [.text(codeHash), .integer(now.milliseconds)])
        return rows.count == 1 ? account(rows, 0) : nil
    }
}
