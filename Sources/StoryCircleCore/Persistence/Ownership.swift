/// Who owns a class, room, story or picture: the teacher's account that made it and the school it belongs
/// to. Things stored before accounts existed have none (`nil` where an `Owner?` is carried) until an
/// administrator names their owner (`OwnershipBook.adoptUnowned`, `storycircle account adopt LOGIN`).
public struct Owner: Sendable, Equatable, Hashable, Codable {
    /// The owning account (`Account.id`).
    public var accountID: String
    /// The school; nil for what a district administrator made (they belong to no school).
    public var schoolID: String?

    public init(accountID: String, schoolID: String?) {
        self.accountID = accountID
        self.schoolID = schoolID
    }

    /// What `account` makes is owned by it, in its school.
    public init(_ account: Account) {
        self.init(accountID: account.id, schoolID: account.schoolID)
    }
}

/// Which owned things a list answers. Stores turn it into a condition on their owner, school and (for
/// stories) shared columns, so a teacher's page of the library is one query, not a filter of everything.
public enum OwnerScope: Sendable, Equatable {
    /// Everything, owned or not (the admin token).
    case everything
    /// What this account owns within its school `schoolID`, and the stories that school shares (`shared`).
    /// What it made in a school it has since left stays that school's (`OwnershipRules`).
    case account(String, schoolID: String?)
    /// What is owned within this school.
    case school(String)
    /// What nobody owns yet (stored before accounts; `adoptUnowned` names their owner).
    case unowned

    /// Whether a thing with `owner` (and `shared`, for a story) is in the scope: the one rule the stores'
    /// conditions and the in-memory filters follow.
    public func admits(_ owner: Owner?, shared: Bool = false) -> Bool {
        switch self {
        case .everything:
            return true
        case .account(let id, let schoolID):
            guard let owner, owner.schoolID == schoolID else { return false }
            return owner.accountID == id || (shared && schoolID != nil)
        case .school(let id):
            return owner?.schoolID == id
        case .unowned:
            return owner == nil
        }
    }
}

/// How many things `adoptUnowned` gave an owner.
public struct AdoptedCounts: Sendable, Equatable, Codable {
    public var classes: Int
    public var rooms: Int
    public var stories: Int
    public var pictures: Int

    public init(classes: Int = 0, rooms: Int = 0, stories: Int = 0, pictures: Int = 0) {
        self.classes = classes
        self.rooms = rooms
        self.stories = stories
        self.pictures = pictures
    }
}

/// Ownership across the room store's classes, rooms, stories and pictures (SQLite and PostgreSQL implement
/// it: `SQLiteRoomStore+Ownership`, `PostgresRoomStore+Ownership`). The owner itself is carried by the
/// models (`SchoolClass.owner`, `RoomHeader.owner`, `StoryEntry.owner`, `StoredPicture.owner`) and stored
/// when they are created; this is what changes it afterwards or asks about it on its own.
public protocol OwnershipBook: AnyObject, Sendable {
    /// Names `owner` the owner of every class, room, story and picture that has none, in one transaction;
    /// what has an owner keeps it. Returns how many of each it named.
    func adoptUnowned(by owner: Owner) async throws -> AdoptedCounts
    /// Shares story `id` with its school's teachers (they read and duplicate it), or stops sharing it.
    /// Throws `StoryLibraryError.notFound`.
    func setStoryShared(_ id: String, _ shared: Bool) async throws -> StoryEntry
    /// The owner of picture `id`: `.some(nil)` for an unowned picture, nil when there is no such picture.
    func pictureOwner(_ id: String) async throws -> Owner??
    /// The owner of room `code` (`.some(nil)`: unowned; nil: no such room), without loading the room.
    func roomOwner(_ code: String) async throws -> Owner??
}

extension OwnerScope {
    /// The scope's condition on a table's `owner_id`, `school_id` (and `shared`, when `sharedColumn` names
    /// it) columns, with its values in order; `placeholder` writes the n-th value's placeholder (SQLite `?`,
    /// PostgreSQL `$n::text`), `first` is the number of the first. nil for `.everything` (no condition).
    public func condition(alias: String, sharedColumn: Bool, first: Int = 1, placeholder: (Int) -> String) -> (sql: String, values: [String])? {
        let column = { (name: String) in alias.isEmpty ? name : "\(alias).\(name)" }
        switch self {
        case .everything:
            return nil
        case .unowned:
            return ("\(column("owner_id")) IS NULL", [])
        case .school(let id):
            return ("\(column("school_id")) = \(placeholder(first))", [id])
        case .account(let id, let schoolID):
            // Within the account's school only: what it made in a school it has left is that school's.
            guard let schoolID else { return ("(\(column("owner_id")) = \(placeholder(first)) AND \(column("school_id")) IS NULL)", [id]) }
            let mine = sharedColumn ? "(\(column("owner_id")) = \(placeholder(first)) OR \(column("shared")))" : "\(column("owner_id")) = \(placeholder(first))"
            return ("(\(mine) AND \(column("school_id")) = \(placeholder(first + 1)))", [id, schoolID])
        }
    }
}

/// The one rule for who may see and change an owned class, room, story or picture. The router asks it
/// (`APIHandler.admit`) once it knows the thing's owner, and the list routes ask `scope(for:)`.
///
/// - The admin token: everything (the CLI, and a laptop's own server).
/// - A teacher: what they own within their school; a story their school shares, to read and duplicate only.
///   A teacher moved to another school leaves what they made with the school they left (its classes, rooms,
///   stories and pictures keep that school, and its administrator keeps them): children's records stay
///   with the school that holds them, and the teacher starts afresh in the new one.
/// - A school administrator: everything owned within their school.
/// - A district administrator: nothing owned (they manage schools and accounts; children's data is not
///   theirs to see, and no grant exists yet beyond the admin token).
/// - A room's token: nothing here (its own room is decided by the room authorities).
/// - Nobody but the admin token: what has no owner yet (until `adoptUnowned`).
public enum OwnershipRules {
    public enum Access: Sendable, Equatable {
        /// See it, read its report, start a room from it, duplicate it.
        case read
        /// Change it, control it, delete it, erase a child of it.
        case change
    }

    public static func allows(_ principal: Principal, _ access: Access, owner: Owner?, shared: Bool = false) -> Bool {
        switch principal {
        case .adminToken:
            return true
        case .roomToken:
            return false
        case .account(let account):
            guard !account.disabled, let owner else { return false }
            switch account.role {
            case .districtAdmin:
                return false
            case .schoolAdmin:
                return account.schoolID != nil && owner.schoolID == account.schoolID
            case .teacher:
                guard account.schoolID != nil, owner.schoolID == account.schoolID else { return false }
                return owner.accountID == account.id || (access == .read && shared)
            }
        }
    }

    /// What a list answers `principal`; nil when it may list nothing owned.
    public static func scope(for principal: Principal) -> OwnerScope? {
        switch principal {
        case .adminToken:
            return .everything
        case .roomToken:
            return nil
        case .account(let account):
            guard !account.disabled else { return nil }
            switch account.role {
            case .districtAdmin: return nil
            case .schoolAdmin: return account.schoolID.map(OwnerScope.school)
            case .teacher: return .account(account.id, schoolID: account.schoolID)
            }
        }
    }

    /// The owner of what `principal` makes now: a signed-in teacher or school administrator owns it; the
    /// admin token's things have none.
    public static func owner(makingAs principal: Principal?) -> Owner? {
        guard case .account(let account)? = principal, account.schoolID != nil else { return nil }
        return Owner(account)
    }
}
