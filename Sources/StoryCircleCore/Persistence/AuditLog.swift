/// What an audit row records that someone did. The raw values are the stable names the API, the CSV and
/// the stores use: never rename one (add a new case instead).
public enum AuditAction: String, Sendable, Codable, CaseIterable {
    // Signing in and out.
    case signIn = "sign_in"
    case signInFailed = "sign_in_failed"
    case signOut = "sign_out"
    case signOutEverywhere = "sign_out_everywhere"
    // Reading children's data.
    case readRoomResults = "read_room_results"
    case readClassReport = "read_class_report"
    /// A CSV of results downloaded (a room's or a class's; the target says which).
    case exportCSV = "export_csv"
    /// Everything stored about one child exported on a request.
    case exportChild = "export_child"
    // Erasing and deleting.
    /// A child who typed a nickname in a room erased.
    case eraseChild = "erase_child"
    /// A member of a class erased, with everything of theirs in every room.
    case eraseMember = "erase_member"
    case deleteRoom = "delete_room"
    case deleteClass = "delete_class"
    // Accounts and schools.
    case accountCreated = "account_created"
    case accountChanged = "account_changed"
    case roleChanged = "role_changed"
    case accountDisabled = "account_disabled"
    case accountEnabled = "account_enabled"
    case passwordReset = "password_reset"
    case passwordSet = "password_set"
    case passkeyAdded = "passkey_added"
    case passkeyRemoved = "passkey_removed"
    case schoolCreated = "school_created"
    case ownerAdopted = "owner_adopted"
    // Retention.
    /// A school's retention rules changed (the detail: old → new).
    case retentionChanged = "retention_changed"
    /// The sweep deleted what a retention rule let go (the detail: the kind and the count).
    case retentionDeleted = "retention_deleted"
    /// A OneRoster bundle imported (its counts in the detail).
    case rosterImported = "roster_imported"
}

/// Who did it, as they were at the time (a login changed later does not change the row). Never a token:
/// the admin token is named as such, and a room's token by its room.
public struct AuditActor: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The server's admin token (the CLI's).
        case adminToken = "admin_token"
        /// A signed-in account.
        case account
        /// A room's teacher token, for `room`.
        case roomTeacher = "room_teacher"
        /// A room's dashboard token, for `room`.
        case roomDashboard = "room_dashboard"
        /// Nobody proved who they are (a failed sign-in).
        case nobody
        /// The server's retention sweep.
        case retention
    }

    public var kind: Kind
    public var accountID: String?
    /// The login as it was; for a failed sign-in, the login tried when it names an account.
    public var login: String?
    public var role: AccountRole?
    /// The room whose token it was.
    public var room: String?

    public init(kind: Kind, accountID: String? = nil, login: String? = nil, role: AccountRole? = nil, room: String? = nil) {
        self.kind = kind
        self.accountID = accountID.map { AuditEvent.bounded($0, 64) }
        self.login = login.map { AuditEvent.bounded($0, 128) }
        self.role = role
        self.room = room.map { AuditEvent.bounded($0, 16) }
    }

    /// The principal a request proved.
    public init(_ principal: Principal?) {
        switch principal {
        case .adminToken?: self.init(kind: .adminToken)
        case .account(let account)?: self.init(kind: .account, accountID: account.id, login: account.login, role: account.role)
        case .roomToken(let code, let role)?: self.init(kind: role == .teacher ? .roomTeacher : .roomDashboard, room: code)
        case nil: self.init(kind: .nobody)
        }
    }

    /// One word for a CSV cell or a log: `admin token`, `account acc_… (login)`, `room 123456 (teacher)`.
    public var summary: String {
        switch kind {
        case .adminToken: "admin token"
        case .account: "account \(accountID ?? "?")" + (login.map { " (\($0))" } ?? "")
        case .roomTeacher: "room \(room ?? "?") teacher token"
        case .roomDashboard: "room \(room ?? "?") dashboard token"
        case .nobody: login.map { "nobody (tried \($0))" } ?? "nobody"
        case .retention: "retention"
        }
    }
}

/// One thing done, as it is appended. Every text is bounded and stripped of control characters, so a row
/// stays one line of a log or a CSV whatever a caller sends.
public struct AuditEvent: Sendable, Equatable {
    public var at: ServerTime
    public var actor: AuditActor
    public var action: AuditAction
    /// What it was done to: `room:123456`, `class:cls_…`, `member:mem_…`, `account:acc_…`, `school:sch_…`.
    public var target: String
    public var schoolID: String?
    /// The caller's address (the first `X-Forwarded-For` hop behind a trusted proxy).
    public var address: String
    /// A few words more (`csv`, `not done: class_in_use`); never a token, a password or a child's answer.
    public var detail: String

    public init(at: ServerTime, actor: AuditActor, action: AuditAction, target: String, schoolID: String? = nil, address: String, detail: String = "") {
        self.at = at
        self.actor = actor
        self.action = action
        self.target = Self.bounded(target, 200)
        self.schoolID = schoolID.map { Self.bounded($0, 64) }
        self.address = Self.bounded(address, 64)
        self.detail = Self.bounded(detail, 200)
    }

    static func bounded(_ text: String, _ limit: Int) -> String {
        String(String(text.unicodeScalars.filter { !$0.properties.generalCategory.isControlOrFormat }).prefix(limit))
    }
}

/// A stored row: its event and its place in the trail.
public struct AuditEntry: Sendable, Equatable {
    /// Given by the store, rising: newer rows have larger numbers.
    public var sequence: Int64
    public var event: AuditEvent

    public init(sequence: Int64, event: AuditEvent) {
        self.sequence = sequence
        self.event = event
    }
}

/// Which rows to read, newest first, a page at a time.
public struct AuditQuery: Sendable, Equatable {
    public static let maxLimit = 1_000
    public static let defaultLimit = 100

    /// Rows at or after this time.
    public var since: ServerTime?
    /// Rows before this time.
    public var until: ServerTime?
    public var action: AuditAction?
    public var schoolID: String?
    /// Rows older than this sequence number (the `next` of the page before).
    public var before: Int64?
    /// 1…`maxLimit`.
    public var limit: Int

    public init(since: ServerTime? = nil, until: ServerTime? = nil, action: AuditAction? = nil, schoolID: String? = nil, before: Int64? = nil, limit: Int = defaultLimit) {
        self.since = since
        self.until = until
        self.action = action
        self.schoolID = schoolID
        self.before = before
        self.limit = min(max(limit, 1), Self.maxLimit)
    }
}

/// A page of rows, newest first, and where the next (older) page starts when there is one.
public struct AuditPage: Sendable, Equatable {
    public var entries: [AuditEntry]
    public var next: Int64?

    public init(entries: [AuditEntry], next: Int64?) {
        self.entries = entries
        self.next = next
    }
}

/// The audit trail: who read, exported, erased or changed what, and who signed in or failed to. In the
/// room store (SQLite and PostgreSQL: `SQLiteRoomStore+Audit`, `PostgresRoomStore+Audit`; memory:
/// `MemoryAuditLog`). Append-only: nothing changes a row, and rows leave only by the retention rule.
/// Every call is durable when it returns, and throws `StoreFailure` when the store cannot do it.
public protocol AuditLog: AnyObject, Sendable {
    /// Stores `event` and returns its row.
    @discardableResult func append(_ event: AuditEvent) async throws -> AuditEntry
    func entries(_ query: AuditQuery) async throws -> AuditPage
    /// Deletes the rows from before `cutoff` (the retention rule); returns how many.
    @discardableResult func prune(before cutoff: ServerTime) async throws -> Int
}

extension AuditEntry {
    public static let csvHeader = ["sequence", "at", "actor", "actor_account", "actor_login", "actor_room", "action", "target", "school", "address", "detail"]

    /// The rows for a spreadsheet (`CSVFile` adds the byte order mark), in the order given.
    public static func csv(_ entries: [AuditEntry]) -> String {
        var lines = [csvHeader.joined(separator: ",")]
        for entry in entries {
            let event = entry.event
            let cells = [
                String(entry.sequence), ClassReport.iso8601(event.at), event.actor.kind.rawValue, event.actor.accountID ?? "", event.actor.login ?? "",
                event.actor.room ?? "", event.action.rawValue, event.target, event.schoolID ?? "", event.address, event.detail,
            ]
            lines.append(cells.map(RoomResults.csvCell).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
