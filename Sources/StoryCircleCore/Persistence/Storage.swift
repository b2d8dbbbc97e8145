/// What a store offers, named once when a server is put together (`RoomStore.offers`) and handed as it is
/// to everything that uses a part of it: nothing asks a store later what else it might be.
///
/// The rooms always. The classes, the story library and the pictures when the store keeps them (SQLite and
/// PostgreSQL do; memory does not). Leases when other nodes may share the store (PostgreSQL): "shared"
/// means exactly "has leases", and then a room runs on a node only under its lease (`RoomLeases`).
public struct Storage: Sendable {
    public let rooms: any RoomStore
    public let classes: (any ClassBook)?
    public let library: (any StoryLibrary)?
    public let pictures: (any PictureStore)?
    /// Room ownership among the nodes that share the store. `nil` for a store that serves one server: it
    /// has nobody to hand a room to, and a lease there could only lapse while the process is starved or
    /// the laptop sleeps, and bounce every child of its rooms for nothing.
    public let leases: (any RoomLeases)?
    /// The adults' accounts, schools, sessions and passkeys (SQLite and PostgreSQL keep them).
    public let accounts: (any AccountBook)?
    /// One child's data exported and erased, rooms deleted early, and the retention of classes and
    /// their removed members, stories and pictures (SQLite and PostgreSQL).
    public let childData: (any ChildDataBook)?
    /// Who owns the classes, rooms, stories and pictures, asked or changed on its own (SQLite and PostgreSQL).
    public let ownership: (any OwnershipBook)?
    /// The audit trail (`AuditLog`): every store keeps one, memory too.
    public let audit: (any AuditLog)?
    /// The schools' retention rules and the purges per school (SQLite and PostgreSQL); without it one rule,
    /// the server's, applies everywhere.
    public let retention: (any RetentionBook)?
    /// What OneRoster imports made, and the one transaction an import is (SQLite and PostgreSQL).
    public let roster: (any RosterBook)?

    public init(
        rooms: any RoomStore, classes: (any ClassBook)? = nil, library: (any StoryLibrary)? = nil, pictures: (any PictureStore)? = nil,
        leases: (any RoomLeases)? = nil, accounts: (any AccountBook)? = nil, ownership: (any OwnershipBook)? = nil, childData: (any ChildDataBook)? = nil,
        audit: (any AuditLog)? = nil, retention: (any RetentionBook)? = nil, roster: (any RosterBook)? = nil
    ) {
        self.rooms = rooms
        self.classes = classes
        self.library = library
        self.pictures = pictures
        self.leases = leases
        self.accounts = accounts
        self.childData = childData
        self.ownership = ownership
        self.audit = audit
        self.retention = retention
        self.roster = roster
    }

    /// Whether other nodes may share the store: then no room is restored at start or run at creation,
    /// only loaded, under its lease, by the node the proxy sends it to.
    public var isShared: Bool { leases != nil }
}
