import FoundationEssentials

/// What an adult may do on this server. Children have no accounts: they hold a room's code and a resume
/// token, or tap their name in a class room.
public enum AccountRole: String, Sendable, Codable, CaseIterable, Comparable {
    /// Owns classes, rooms, stories and pictures of one school; sees only theirs and what is shared with them.
    case teacher
    /// Manages the teachers of one school and sees the school's reports.
    case schoolAdmin = "school_admin"
    /// Manages schools and accounts on a shared cluster; sees no children's data unless granted.
    case districtAdmin = "district_admin"

    private var rank: Int {
        switch self {
        case .teacher: 0
        case .schoolAdmin: 1
        case .districtAdmin: 2
        }
    }

    public static func < (lhs: AccountRole, rhs: AccountRole) -> Bool { lhs.rank < rhs.rank }
}

/// A school on the server (a laptop has one; a district cluster several).
public struct School: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var createdAt: ServerTime
    /// Raised by one on every change (two administrators editing one school: the stale save is refused).
    public var version: Int

    public init(id: String, name: String, createdAt: ServerTime, version: Int = 1) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.version = version
    }
}

/// An adult's account as stored.
public struct Account: Sendable, Equatable {
    public var id: String
    /// What the person types to sign in: case-folded, trimmed (`AccountLogins.normalised`), unique.
    public var login: String
    public var displayName: String
    public var role: AccountRole
    /// The school; nil only for a district administrator.
    public var schoolID: String?
    /// A disabled account cannot sign in, and its sessions are ended when it is disabled.
    public var disabled: Bool
    public var version: Int
    public var createdAt: ServerTime
    /// Argon2id in libsodium's encoded form (`$argon2id$v=19$m=…`), nil until a password is set.
    public var passwordHash: String?

    public init(
        id: String, login: String, displayName: String, role: AccountRole, schoolID: String?, disabled: Bool = false,
        version: Int = 1, createdAt: ServerTime, passwordHash: String? = nil
    ) {
        self.id = id
        self.login = login
        self.displayName = displayName
        self.role = role
        self.schoolID = schoolID
        self.disabled = disabled
        self.version = version
        self.createdAt = createdAt
        self.passwordHash = passwordHash
    }
}

/// A new account, before the store gives it an id.
public struct AccountDraft: Sendable, Equatable {
    /// Drawn before the account is stored, so its audit row can name it first (`APIHandler.audited`).
    public var id: String
    public var login: String
    public var displayName: String
    public var role: AccountRole
    public var schoolID: String?
    public var passwordHash: String?

    public init(id: String = AccountLogins.makeAccount(), login: String, displayName: String, role: AccountRole, schoolID: String?, passwordHash: String? = nil) {
        self.id = id
        self.login = login
        self.displayName = displayName
        self.role = role
        self.schoolID = schoolID
        self.passwordHash = passwordHash
    }
}

/// A change to an account; nil fields stay as they are.
public struct AccountChange: Sendable, Equatable {
    public var displayName: String?
    public var role: AccountRole?
    /// `.some(nil)` moves an account out of any school (a district administrator only).
    public var schoolID: String??
    public var disabled: Bool?

    public init(displayName: String? = nil, role: AccountRole? = nil, schoolID: String?? = nil, disabled: Bool? = nil) {
        self.displayName = displayName
        self.role = role
        self.schoolID = schoolID
        self.disabled = disabled
    }
}

/// A signed-in browser. The store keeps only a digest of the session's secret (the cookie's value), so a
/// copy of the database signs nobody in.
public struct SessionRecord: Sendable, Equatable {
    /// SHA-256 of the cookie's value, lowercase hex.
    public var tokenHash: String
    public var accountID: String
    /// The value every state-changing request of this session must echo in `X-CSRF-Token`.
    public var csrfToken: String
    public var createdAt: ServerTime
    public var expiresAt: ServerTime
    /// How the session began: "password", "passkey" or "link" (the laptop's one-time link).
    public var method: String

    public init(tokenHash: String, accountID: String, csrfToken: String, createdAt: ServerTime, expiresAt: ServerTime, method: String) {
        self.tokenHash = tokenHash
        self.accountID = accountID
        self.csrfToken = csrfToken
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.method = method
    }
}

/// A passkey (WebAuthn credential) registered to an account.
public struct PasskeyRecord: Sendable, Equatable {
    /// The credential id, base64url without padding.
    public var credentialID: String
    public var accountID: String
    /// The credential's public key as the authenticator gave it (a COSE_Key, CBOR bytes).
    public var publicKey: [UInt8]
    /// The COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256).
    public var algorithm: Int
    public var signCount: UInt32
    /// What the teacher called it ("school laptop").
    public var name: String
    public var createdAt: ServerTime
    public var lastUsedAt: ServerTime?

    public init(
        credentialID: String, accountID: String, publicKey: [UInt8], algorithm: Int, signCount: UInt32, name: String,
        createdAt: ServerTime, lastUsedAt: ServerTime? = nil
    ) {
        self.credentialID = credentialID
        self.accountID = accountID
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// The accounts, schools, sessions and passkeys, in the room store (SQLite and PostgreSQL implement it:
/// `SQLiteRoomStore+Accounts`, `PostgresRoomStore+Accounts`). Every call runs its blocking work on the
/// store's own threads and is durable when it returns.
public protocol AccountBook: AnyObject, Sendable {
    // Schools
    func listSchools() async throws -> [School]
    func school(_ id: String) async throws -> School?
    /// Stores school `id` (`AccountLogins.makeSchool()`, drawn first so its audit row can name it); throws
    /// `.nameTaken` when another school has this name (compared case-folded).
    func createSchool(name: String, id: String) async throws -> School

    // Accounts
    /// Every account, or those of one school, by login.
    func listAccounts(schoolID: String?) async throws -> [Account]
    func account(id: String) async throws -> Account?
    /// The ids of the disabled accounts: what every node reads a second apart to stop their rooms' controls
    /// (`DisabledOwners`), so one small read, not every account.
    func disabledAccountIDs() async throws -> Set<String>
    /// By normalised login.
    func account(login: String) async throws -> Account?
    /// Throws `.loginTaken`, `.schoolNotFound`.
    func createAccount(_ draft: AccountDraft) async throws -> Account
    /// Applies `change` if the account is still at `version`; disabling also deletes its sessions in the same
    /// transaction. Throws `.notFound`, `.conflict(current:)`, `.schoolNotFound`, `.lastDistrictAdmin` (the
    /// change would leave no enabled district administrator).
    func updateAccount(_ id: String, _ change: AccountChange, basedOn version: Int) async throws -> Account
    /// Sets (or clears) the password's hash and deletes the account's sessions (a reset signs out everywhere).
    func setPasswordHash(_ id: String, _ hash: String?) async throws

    // Setup codes: the one-time link that sets a password (after a reset, or for a new account)
    /// Clears the account's password, ends its sessions and stores a new setup code (only its SHA-256, hex),
    /// replacing any earlier one, in one transaction. Throws `.notFound`.
    func resetAccount(_ id: String, setupCodeHash: String, expiresAt: ServerTime) async throws
    /// The enabled account a setup code is for, when the code exists and has not expired at `now`.
    func setupCodeAccount(codeHash: String, at now: ServerTime) async throws -> Account?
    /// Sets the password from a setup code and consumes the code, ending the account's sessions, in one
    /// transaction; nil (and nothing changed) when the code is unknown, used, expired at `now` or its
    /// account disabled.
    func useSetupCode(codeHash: String, passwordHash: String, at now: ServerTime) async throws -> Account?

    // Sessions
    /// Stores the session when, in the same transaction, its account is enabled and (unless
    /// `passwordHash` is nil) its password's hash is still the one the sign-in verified: a reset or a
    /// disabling that commits between the check and this call leaves no session. False when refused;
    /// throws `.notFound` when the account is not there.
    func createSession(_ session: SessionRecord, ifPasswordHash passwordHash: String?) async throws -> Bool
    /// The session with this token hash and its account, when it exists, has not expired at `now` and its
    /// account is enabled.
    func session(tokenHash: String, at now: ServerTime) async throws -> (session: SessionRecord, account: Account)?
    func deleteSession(tokenHash: String) async throws
    /// Deletes every session of the account; returns how many.
    @discardableResult func deleteSessions(accountID: String) async throws -> Int
    /// Deletes sessions that expired before `now`; returns how many.
    @discardableResult func pruneSessions(before now: ServerTime) async throws -> Int

    // Passkeys (a reset deletes the account's passkeys with its password: whoever took the account over
    // may have added one)
    /// Throws `.credentialTaken` when the credential id is registered already, `.tooManyPasskeys` when
    /// the account has `limit` already (counted in the same transaction).
    func addPasskey(_ passkey: PasskeyRecord, limit: Int) async throws
    func passkeys(accountID: String) async throws -> [PasskeyRecord]
    /// The passkey and its account.
    func passkey(credentialID: String) async throws -> (passkey: PasskeyRecord, account: Account)?
    /// Records a sign-in with the passkey, in one statement: only while it is still registered and its
    /// counter goes up (or both are 0: an authenticator that keeps none). False when it was removed, or
    /// another sign-in recorded a counter as high meanwhile (a clone, or the same answer twice).
    func recordPasskeyUse(credentialID: String, signCount: UInt32, at time: ServerTime) async throws -> Bool
    func deletePasskey(credentialID: String, accountID: String) async throws
}

/// Why the account book refused a change.
extension AccountBook {
    public func createSchool(name: String) async throws -> School {
        try await createSchool(name: name, id: AccountLogins.makeSchool())
    }

    /// A session for an enabled account, whatever its password (a passkey's or a link's sign-in).
    @discardableResult
    public func createSession(_ session: SessionRecord) async throws -> Bool {
        try await createSession(session, ifPasswordHash: nil)
    }
}

public enum AccountBookError: Error, Sendable, Equatable {
    case notFound(id: String)
    case loginTaken(login: String)
    case nameTaken(name: String)
    case schoolNotFound(id: String)
    case conflict(current: Account)
    case lastDistrictAdmin
    case credentialTaken
    case tooManyPasskeys
}

/// Logins and account ids.
public enum AccountLogins {
    /// What a login is compared as: trimmed, case-folded. Nil when it is not a login (1…128 characters of
    /// letters, digits and `.-_@+`).
    public static func normalised(_ text: String) -> String? {
        let login = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()).lowercased()
        guard (1...128).contains(login.count),
            login.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_@+".unicodeScalars.contains($0) })
        else { return nil }
        return login
    }

    public static func makeAccount() -> String { "acc_" + random() }
    public static func makeSchool() -> String { "sch_" + random() }

    private static func random() -> String {
        String(UUID().uuidString.lowercased().filter { $0 != "-" }.prefix(16))
    }
}

/// Who is asking: what a request's credentials proved (`APIHandler.admit`), handed to handlers that scope
/// what they answer by it.
public enum Principal: Sendable, Equatable {
    /// The server's admin token (the CLI's; a district administrator's authority).
    case adminToken
    /// A signed-in account.
    case account(Account)
    /// A room's teacher or dashboard token, for the room `code`.
    case roomToken(code: String, role: Role)

    /// The account, when an account is asking.
    public var account: Account? {
        if case .account(let account) = self { return account }
        return nil
    }

    /// The admin token or an enabled district administrator.
    public var isDistrictAdmin: Bool {
        switch self {
        case .adminToken: true
        case .account(let account): account.role == .districtAdmin && !account.disabled
        case .roomToken: false
        }
    }
}
