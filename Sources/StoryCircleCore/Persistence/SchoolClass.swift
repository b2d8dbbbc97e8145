import FoundationEssentials

/// A child of a class (a "member"): the name they tap to join a class room, and their picture. The id is
/// made by the server and never reused, so a child's results add up across rooms even when a teacher
/// corrects the spelling of their name.
public struct ClassMember: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var avatar: String

    public init(id: String, name: String, avatar: String) {
        self.id = id
        self.name = name
        self.avatar = avatar
    }
}

/// A teacher's class as stored: its name, its children in the teacher's order, and a version that every
/// change raises by one (two teachers editing one class: the stale save is refused).
public struct SchoolClass: Sendable, Equatable {
    public var id: String
    public var name: String
    public var version: Int
    public var changedAt: ServerTime
    public var members: [ClassMember]
    /// Whether faster answers earn more points in the class's rooms (a room's `speedPoints` unless its
    /// creator sets one). Off unless the teacher turns it on: young children are not raced by default.
    public var speedPoints: Bool
    /// The teacher who made the class and their school; nil for a class stored before accounts.
    public var owner: Owner?

    public init(id: String, name: String, version: Int, changedAt: ServerTime, members: [ClassMember], speedPoints: Bool = false, owner: Owner? = nil) {
        self.id = id
        self.name = name
        self.version = version
        self.changedAt = changedAt
        self.members = members
        self.speedPoints = speedPoints
        self.owner = owner
    }

    public var entry: ClassEntry { ClassEntry(id: id, name: name, children: members.count, version: version, changedAt: changedAt, owner: owner) }

    public func member(_ id: String) -> ClassMember? { members.first { $0.id == id } }

    /// The settings a room of this class starts with: the class's `speedPoints` unless `patch` (what the
    /// room was asked for) sets it.
    public func roomSettings(_ patch: RoomSettingsPatch?) -> RoomSettingsPatch {
        var settings = patch ?? RoomSettingsPatch()
        if settings.speedPoints == nil { settings.speedPoints = speedPoints }
        return settings
    }
}

/// What the list of classes shows of one.
public struct ClassEntry: Sendable, Equatable {
    public var id: String
    public var name: String
    public var children: Int
    public var version: Int
    public var changedAt: ServerTime
    public var owner: Owner?

    public init(id: String, name: String, children: Int, version: Int, changedAt: ServerTime, owner: Owner? = nil) {
        self.id = id
        self.name = name
        self.children = children
        self.version = version
        self.changedAt = changedAt
        self.owner = owner
    }
}

/// A class as a teacher sends it, checked (`ClassRules.check`): names normalised, avatars known, no two
/// children with one name, the name keys worked out (the store keeps class names unique by them).
public struct ClassDraft: Sendable, Equatable {
    public struct Child: Sendable, Equatable {
        /// The member this child already is; nil for a new one.
        public var id: String?
        public var name: String
        public var avatar: String

        public init(id: String? = nil, name: String, avatar: String) {
            self.id = id
            self.name = name
            self.avatar = avatar
        }
    }

    public var name: String
    /// The keys the class's name is compared by (`Nickname.matchingKeys`).
    public var nameKeys: [String]
    public var children: [Child]
    /// The class's `speedPoints`; nil: as it was (false for a new class).
    public var speedPoints: Bool?
    /// Who a new class belongs to (ignored by an update: a class keeps its owner).
    public var owner: Owner?

    public init(name: String, nameKeys: [String], children: [Child], speedPoints: Bool? = nil, owner: Owner? = nil) {
        self.name = name
        self.nameKeys = nameKeys
        self.children = children
        self.speedPoints = speedPoints
        self.owner = owner
    }
}

/// Ids of classes and members.
public enum ClassIDs {
    public static func makeClass() -> String { "cls_" + random() }
    public static func makeMember() -> String { "mem_" + random() }

    private static func random() -> String {
        String(UUID().uuidString.lowercased().filter { $0 != "-" }.prefix(16))
    }

    /// Ids travel in URLs and the CLI's arguments: short and plain.
    public static func isWellFormed(_ id: String) -> Bool { StoryLibraryIDs.isWellFormed(id) }
}
