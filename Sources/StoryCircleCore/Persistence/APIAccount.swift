/// An account as the API carries it, the one shape both sides use: the server answers it (`GET
/// /api/accounts`, a change, a conflict's `current`) and the command line reads it. Never a password's hash,
/// only whether there is a password. `schoolID` is always written, `null` for a district administrator
/// without a school; `setupLink` only when an account was just made without a password.
public struct APIAccount: Sendable, Equatable, Codable {
    public var id: String
    public var login: String
    public var displayName: String
    /// An `AccountRole`'s raw value, kept as text so that a client reads a role it does not know yet.
    public var role: String
    public var schoolID: String?
    public var disabled: Bool
    public var hasPassword: Bool
    public var version: Int
    /// ISO 8601, UTC, to the second.
    public var createdAt: String
    /// The one-time link to set a password, when the account was made without one.
    public var setupLink: String?

    public init(_ account: Account, setupLink: String? = nil) {
        id = account.id
        login = account.login
        displayName = account.displayName
        role = account.role.rawValue
        schoolID = account.schoolID
        disabled = account.disabled
        hasPassword = account.passwordHash != nil
        version = account.version
        createdAt = ClassReport.iso8601(account.createdAt)
        self.setupLink = setupLink
    }

    private enum Key: String, CodingKey { case id, login, displayName, role, schoolID, disabled, hasPassword, version, createdAt, setupLink }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        id = try container.decode(String.self, forKey: .id)
        login = try container.decode(String.self, forKey: .login)
        displayName = try container.decode(String.self, forKey: .displayName)
        role = try container.decode(String.self, forKey: .role)
        schoolID = try container.decodeIfPresent(String.self, forKey: .schoolID)
        disabled = try container.decode(Bool.self, forKey: .disabled)
        hasPassword = try container.decode(Bool.self, forKey: .hasPassword)
        version = try container.decode(Int.self, forKey: .version)
        createdAt = try container.decode(String.self, forKey: .createdAt)
        setupLink = try container.decodeIfPresent(String.self, forKey: .setupLink)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: .id)
        try container.encode(login, forKey: .login)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(role, forKey: .role)
        try container.encode(schoolID, forKey: .schoolID)
        try container.encode(disabled, forKey: .disabled)
        try container.encode(hasPassword, forKey: .hasPassword)
        try container.encode(version, forKey: .version)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(setupLink, forKey: .setupLink)
    }
}
