import Foundation
import RoomStoreSupport
import StoryCircleCore

/// Accounts, schools, sessions and passkeys in SQLite. Reads use the reader connection; changes are turns
/// of the writer thread, each one transaction, so a check and the change it guards (a login free, the
/// last district administrator, a version) cannot be interleaved with another change.
extension SQLiteRoomStore: AccountBook {
    // MARK: - Schools

    public func listSchools() async throws -> [School] {
        try await read { database in
            let statement = try database.prepare("SELECT id, name, created_at, version FROM schools ORDER BY name_key, id")
            try statement.bind([])
            var schools: [School] = []
            while try statement.step() { schools.append(Self.school(statement)) }
            return schools
        }
    }

    public func school(_ id: String) async throws -> School? {
        try await read { try Self.loadSchool(id, from: $0) }
    }

    public func createSchool(name: String, id: String) async throws -> School {
        let now = Self.now()
        return try await writerChange("account") { database in
            try Self.insertSchool(name: name, id: id, at: now, in: database)
            return try Self.loadSchool(id, from: database)!
        }
    }

    // MARK: - Accounts

    public func listAccounts(schoolID: String?) async throws -> [Account] {
        try await read { database in
            let statement = try database.prepare(schoolID == nil
                ? "SELECT \(Self.accountColumns) FROM accounts ORDER BY login"
                : "SELECT \(Self.accountColumns) FROM accounts WHERE school_id = ? ORDER BY login")
            try statement.bind(schoolID.map { [.text($0)] } ?? [])
            var accounts: [Account] = []
            while try statement.step() { accounts.append(Self.account(statement)) }
            return accounts
        }
    }

    public func disabledAccountIDs() async throws -> Set<String> {
        try await read { database in
            let statement = try database.prepare("SELECT id FROM accounts WHERE disabled <> 0")
            var ids: Set<String> = []
            while try statement.step() { ids.insert(statement.text(0)) }
            return ids
        }
    }

    public func account(id: String) async throws -> Account? {
        try await read { try Self.loadAccount("id", id, from: $0) }
    }

    public func account(login: String) async throws -> Account? {
        try await read { try Self.loadAccount("login", AccountKeys.login(login), from: $0) }
    }

    public func createAccount(_ draft: AccountDraft) async throws -> Account {
        let now = Self.now()
        return try await writerChange("account") { database in
            try Self.insertAccount(draft, at: now, in: database)
            return try Self.loadAccount("id", draft.id, from: database)!
        }
    }

    public func updateAccount(_ id: String, _ change: AccountChange, basedOn version: Int) async throws -> Account {
        try await writerChange("account") { database in
            try Self.changeAccount(id, change, basedOn: version, in: database)
            return try Self.loadAccount("id", id, from: database)!
        }
    }

    public func setPasswordHash(_ id: String, _ hash: String?) async throws {
        try await writerChange("account") { database in
            try database.prepare("UPDATE accounts SET password_hash = ? WHERE id = ?").run(hash.map(SQLiteValue.text) ?? .null, .text(id))
            guard database.changes == 1 else { throw AccountBookError.notFound(id: id) }
            try database.prepare("DELETE FROM sessions WHERE account_id = ?").run(.text(id))
        }
    }

    // MARK: - Setup codes

    public func resetAccount(_ id: String, setupCodeHash: String, expiresAt: ServerTime) async throws {
        try await writerChange("account") { database in
            try database.prepare("UPDATE accounts SET password_hash = NULL WHERE id = ?").run(.text(id))
            guard database.changes == 1 else { throw AccountBookError.notFound(id: id) }
            try database.prepare("DELETE FROM sessions WHERE account_id = ?").run(.text(id))
            try database.prepare("DELETE FROM passkeys WHERE account_id = ?").run(.text(id))
            try database.prepare("DELETE FROM account_setup_codes WHERE account_id = ?").run(.text(id))
            try database.prepare("INSERT INTO account_setup_codes (code_hash, account_id, expires_at) VALUES (?, ?, ?)")
                .run(.text(setupCodeHash), .text(id), .integer(expiresAt.milliseconds))
        }
    }

    public func setupCodeAccount(codeHash: String, at now: ServerTime) async throws -> Account? {
        try await read { try Self.setupCodeAccount(codeHash, at: now, in: $0) }
    }

    public func useSetupCode(codeHash: String, passwordHash: String, at now: ServerTime) async throws -> Account? {
        try await writerChange("account") { database in
            guard let account = try Self.setupCodeAccount(codeHash, at: now, in: database) else { return nil }
            try database.prepare("UPDATE accounts SET password_hash = ? WHERE id = ?").run(.text(passwordHash), .text(account.id))
            try database.prepare("DELETE FROM account_setup_codes WHERE account_id = ?").run(.text(account.id))
            try database.prepare("DELETE FROM sessions WHERE account_id = ?").run(.text(account.id))
            return try Self.loadAccount("id", account.id, from: database)
        }
    }

    // MARK: - Sessions

    public func createSession(_ session: SessionRecord, ifPasswordHash passwordHash: String?) async throws -> Bool {
        try await writerChange("account") { database in
            guard let account = try Self.loadAccount("id", session.accountID, from: database) else {
                throw AccountBookError.notFound(id: session.accountID)
            }
            guard !account.disabled, passwordHash == nil || account.passwordHash == passwordHash else { return false }
            try database.prepare("INSERT INTO sessions (token_hash, account_id, csrf_token, created_at, expires_at, method) VALUES (?, ?, ?, ?, ?, ?)").run(
                .text(session.tokenHash), .text(session.accountID), .text(session.csrfToken), .integer(session.createdAt.milliseconds),
                .integer(session.expiresAt.milliseconds), .text(session.method)
            )
            return true
        }
    }

    public func session(tokenHash: String, at now: ServerTime) async throws -> (session: SessionRecord, account: Account)? {
        try await read { database in
            let statement = try database.prepare("""
                SELECT token_hash, account_id, csrf_token, created_at, expires_at, method FROM sessions
                WHERE token_hash = ? AND expires_at > ?
                """)
            try statement.bind([.text(tokenHash), .integer(now.milliseconds)])
            guard try statement.step() else { return nil }
            let session = SessionRecord(
                tokenHash: statement.text(0), accountID: statement.text(1), csrfToken: statement.text(2),
                createdAt: ServerTime(milliseconds: statement.int64(3)), expiresAt: ServerTime(milliseconds: statement.int64(4)), method: statement.text(5)
            )
            guard let account = try Self.loadAccount("id", session.accountID, from: database), !account.disabled else { return nil }
            return (session, account)
        }
    }

    public func deleteSession(tokenHash: String) async throws {
        try await writerChange("account") { database in
            try database.prepare("DELETE FROM sessions WHERE token_hash = ?").run(.text(tokenHash))
        }
    }

    @discardableResult
    public func deleteSessions(accountID: String) async throws -> Int {
        try await writerChange("account") { database in
            try database.prepare("DELETE FROM sessions WHERE account_id = ?").run(.text(accountID))
            return database.changes
        }
    }

    @discardableResult
    public func pruneSessions(before now: ServerTime) async throws -> Int {
        try await writerChange("account") { database in
            try database.prepare("DELETE FROM sessions WHERE expires_at <= ?").run(.integer(now.milliseconds))
            let sessions = database.changes
            try database.prepare("DELETE FROM account_setup_codes WHERE expires_at <= ?").run(.integer(now.milliseconds))
            return sessions
        }
    }

    // MARK: - Passkeys

    public func addPasskey(_ passkey: PasskeyRecord, limit: Int) async throws {
        try await writerChange("account") { database in
            guard try database.integer("SELECT 1 FROM accounts WHERE id = ?", .text(passkey.accountID)) != nil else {
                throw AccountBookError.notFound(id: passkey.accountID)
            }
            guard try database.integer("SELECT count(*) FROM passkeys WHERE account_id = ?", .text(passkey.accountID)) ?? 0 < limit else {
                throw AccountBookError.tooManyPasskeys
            }
            guard try database.integer("SELECT 1 FROM passkeys WHERE credential_id = ?", .text(passkey.credentialID)) == nil else {
                throw AccountBookError.credentialTaken
            }
            try database.prepare("""
                INSERT INTO passkeys (credential_id, account_id, public_key, algorithm, sign_count, name, created_at, last_used_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).run(
                    .text(passkey.credentialID), .text(passkey.accountID), .blob(passkey.publicKey), .int(passkey.algorithm),
                    .integer(Int64(passkey.signCount)), .text(passkey.name), .integer(passkey.createdAt.milliseconds),
                    passkey.lastUsedAt.map { .integer($0.milliseconds) } ?? .null
                )
        }
    }

    public func passkeys(accountID: String) async throws -> [PasskeyRecord] {
        try await read { database in
            let statement = try database.prepare("SELECT \(Self.passkeyColumns) FROM passkeys WHERE account_id = ? ORDER BY created_at, credential_id")
            try statement.bind([.text(accountID)])
            var passkeys: [PasskeyRecord] = []
            while try statement.step() { passkeys.append(Self.passkey(statement)) }
            return passkeys
        }
    }

    public func passkey(credentialID: String) async throws -> (passkey: PasskeyRecord, account: Account)? {
        try await read { database in
            let statement = try database.prepare("SELECT \(Self.passkeyColumns) FROM passkeys WHERE credential_id = ?")
            try statement.bind([.text(credentialID)])
            guard try statement.step() else { return nil }
            let passkey = Self.passkey(statement)
            guard let account = try Self.loadAccount("id", passkey.accountID, from: database) else { return nil }
            return (passkey, account)
        }
    }

    public func recordPasskeyUse(credentialID: String, signCount: UInt32, at time: ServerTime) async throws -> Bool {
        try await writerChange("account") { database in
            try database.prepare("UPDATE passkeys SET sign_count = ?1, last_used_at = ?2 WHERE credential_id = ?3 AND (sign_count < ?1 OR (?1 = 0 AND sign_count = 0))")
                .run(.integer(Int64(signCount)), .integer(time.milliseconds), .text(credentialID))
            return database.changes == 1
        }
    }

    public func deletePasskey(credentialID: String, accountID: String) async throws {
        try await writerChange("account") { database in
            try database.prepare("DELETE FROM passkeys WHERE credential_id = ? AND account_id = ?").run(.text(credentialID), .text(accountID))
        }
    }

    // MARK: - Helpers

    /// Stores school `id`; throws `.nameTaken` when another school has the name (compared case-folded).
    static func insertSchool(name: String, id: String, at now: ServerTime, in database: SQLiteDatabase) throws {
        let key = AccountKeys.schoolName(name)
        guard try database.integer("SELECT 1 FROM schools WHERE name_key = ?", .text(key)) == nil else {
            throw AccountBookError.nameTaken(name: name)
        }
        try database.prepare("INSERT INTO schools (id, name, name_key, version, created_at) VALUES (?, ?, ?, 1, ?)")
            .run(.text(id), .text(name), .text(key), .integer(now.milliseconds))
    }

    /// Stores the draft's account; throws `.loginTaken`, `.schoolNotFound`.
    static func insertAccount(_ draft: AccountDraft, at now: ServerTime, in database: SQLiteDatabase) throws {
        let login = AccountKeys.login(draft.login)
        guard try database.integer("SELECT 1 FROM accounts WHERE login = ?", .text(login)) == nil else {
            throw AccountBookError.loginTaken(login: login)
        }
        if let school = draft.schoolID, try database.integer("SELECT 1 FROM schools WHERE id = ?", .text(school)) == nil {
            throw AccountBookError.schoolNotFound(id: school)
        }
        let id = draft.id
        try database.prepare("""
            INSERT INTO accounts (id, login, display_name, role, school_id, disabled, version, created_at, password_hash)
            VALUES (?, ?, ?, ?, ?, 0, 1, ?, ?)
            """).run(
                .text(id), .text(login), .text(draft.displayName), .text(draft.role.rawValue), draft.schoolID.map(SQLiteValue.text) ?? .null,
                .integer(now.milliseconds), draft.passwordHash.map(SQLiteValue.text) ?? .null
            )
    }

    /// Applies `change` to account `id` if it is still at `version` (`updateAccount`).
    static func changeAccount(_ id: String, _ change: AccountChange, basedOn version: Int, in database: SQLiteDatabase) throws {
        guard let current = try Self.loadAccount("id", id, from: database) else { throw AccountBookError.notFound(id: id) }
        guard current.version == version else { throw AccountBookError.conflict(current: current) }
        var next = current
        if let name = change.displayName { next.displayName = name }
        if let role = change.role { next.role = role }
        if let school = change.schoolID { next.schoolID = school }
        if let disabled = change.disabled { next.disabled = disabled }
        if let school = next.schoolID, school != current.schoolID, try database.integer("SELECT 1 FROM schools WHERE id = ?", .text(school)) == nil {
            throw AccountBookError.schoolNotFound(id: school)
        }
        let wasAdministering = current.role == .districtAdmin && !current.disabled
        let administers = next.role == .districtAdmin && !next.disabled
        if wasAdministering, !administers,
           try database.integer("SELECT count(*) FROM accounts WHERE role = 'district_admin' AND disabled = 0 AND id <> ?", .text(id)) == 0 {
            throw AccountBookError.lastDistrictAdmin
        }
        try database.prepare("UPDATE accounts SET display_name = ?, role = ?, school_id = ?, disabled = ?, version = version + 1 WHERE id = ?")
            .run(.text(next.displayName), .text(next.role.rawValue), next.schoolID.map(SQLiteValue.text) ?? .null, .bool(next.disabled), .text(id))
        // In the same transaction: nobody is signed in to a disabled account for a moment.
        if next.disabled {
            try database.prepare("DELETE FROM sessions WHERE account_id = ?").run(.text(id))
            try database.prepare("DELETE FROM account_setup_codes WHERE account_id = ?").run(.text(id))
        }
    }

    static let accountColumns = "id, login, display_name, role, school_id, disabled, version, created_at, password_hash"
    private static let passkeyColumns = "credential_id, account_id, public_key, algorithm, sign_count, name, created_at, last_used_at"

    /// `column` is one of this file's own names ("id", "login"), never a caller's text.
    private static func loadAccount(_ column: StaticString, _ value: String, from database: SQLiteDatabase) throws -> Account? {
        let statement = try database.prepare("SELECT \(accountColumns) FROM accounts WHERE \(column) = ?")
        try statement.bind([.text(value)])
        return try statement.step() ? account(statement) : nil
    }

    static func account(_ row: SQLiteStatement) -> Account {
        Account(
            id: row.text(0), login: row.text(1), displayName: row.text(2), role: AccountRole(rawValue: row.text(3)) ?? .teacher,
            schoolID: row.isNull(4) ? nil : row.text(4), disabled: row.int(5) != 0, version: row.int(6),
            createdAt: ServerTime(milliseconds: row.int64(7)), passwordHash: row.isNull(8) ? nil : row.text(8)
        )
    }

    static func loadSchool(_ id: String, from database: SQLiteDatabase) throws -> School? {
        let statement = try database.prepare("SELECT id, name, created_at, version FROM schools WHERE id = ?")
        try statement.bind([.text(id)])
        return try statement.step() ? school(statement) : nil
    }

    static func school(_ row: SQLiteStatement) -> School {
        School(id: row.text(0), name: row.text(1), createdAt: ServerTime(milliseconds: row.int64(2)), version: row.int(3))
    }

    private static func passkey(_ row: SQLiteStatement) -> PasskeyRecord {
        PasskeyRecord(
            credentialID: row.text(0), accountID: row.text(1), publicKey: row.blob(2), algorithm: row.int(3), signCount: UInt32(truncatingIfNeeded: row.int64(4)),
            name: row.text(5), createdAt: ServerTime(milliseconds: row.int64(6)), lastUsedAt: row.isNull(7) ? nil : ServerTime(milliseconds: row.int64(7))
        )
    }

    private static func setupCodeAccount(_ codeHash: String, at now: ServerTime, in database: SQLiteDatabase) throws -> Account? {
        let statement = try database.prepare("SELECT account_id FROM account_setup_codes WHERE code_hash = ? AND expires_at > ?")
        try statement.bind([.text(codeHash), .integer(now.milliseconds)])
        guard try statement.step(), let account = try loadAccount("id", statement.text(0), from: database), !account.disabled else { return nil }
        return account
    }
}
