/// What a roster's record is here: the store keeps one link per imported record (`roster_links`), so a
/// re-import finds what the last one made and changes it in place instead of making it again.
public enum RosterKind: String, Sendable, Equatable, CaseIterable {
    /// An org of type school → `School.id`.
    case school
    /// A teacher user → `Account.id`.
    case teacher
    /// A class → `SchoolClass.id`.
    case schoolClass = "class"
    /// A child in a class, by `<class sourcedId>/<user sourcedId>` → `ClassMember.id` (one child in two
    /// classes is two members, as when a teacher types them).
    case member
    /// An enrolment's own sourcedId → `ClassMember.id` (a delta deletes an enrolment by its sourcedId alone).
    case enrollment
}

public struct RosterLink: Sendable, Equatable, Hashable {
    public var kind: RosterKind
    public var sourcedID: String
    public var localID: String

    public init(kind: RosterKind, sourcedID: String, localID: String) {
        self.kind = kind
        self.sourcedID = sourcedID
        self.localID = localID
    }
}

/// What the server holds that an import is planned against: its links, its schools and accounts (logins
/// and schools are matched by name before anything is made), and the classes earlier imports made.
public struct RosterState: Sendable, Equatable {
    public var links: [RosterLink]
    public var schools: [School]
    public var accounts: [Account]
    /// The linked classes (others are never touched).
    public var classes: [SchoolClass]

    public init(links: [RosterLink] = [], schools: [School] = [], accounts: [Account] = [], classes: [SchoolClass] = []) {
        self.links = links
        self.schools = schools
        self.accounts = accounts
        self.classes = classes
    }
}

/// Who imports: a district administrator (any school, and new schools), or a school administrator (only
/// their own school's org; any other is refused at its line).
public enum RosterAuthority: Sendable, Equatable {
    case district
    case school(String)
}

/// The counts an import reports (and audits as `roster_imported`).
public struct RosterCounts: Sendable, Equatable, Codable {
    public var schoolsCreated = 0
    public var schoolsRenamed = 0
    public var teachersCreated = 0
    public var teachersUpdated = 0
    public var teachersDisabled = 0
    public var classesCreated = 0
    public var classesUpdated = 0
    /// Classes gone from the roster: kept with their rooms and results (deleting a class deletes its
    /// results before the retention period would), emptied of the children the roster put in.
    public var classesLeft = 0
    public var childrenAdded = 0
    public var childrenRemoved = 0
    /// Teachers enrolled in a class besides the one who owns it: not kept (a class has one owner).
    public var otherTeachersNotKept = 0
    /// Users neither teacher nor enrolled student (administrators, guardians …): StoryCircle makes nothing of them.
    public var usersSkipped = 0

    public init() {}
}

/// What an import will do, worked out from the roster and the server's state before anything is written,
/// and carried out by the store in one transaction (`RosterBook.applyRoster`).
public struct RosterPlan: Sendable, Equatable {
    /// A school to make, or to rename.
    public struct SchoolName: Sendable, Equatable {
        public var id: String
        public var name: String
    }

    public struct AccountUpdate: Sendable, Equatable {
        public var id: String
        public var change: AccountChange
        public var version: Int
    }

    /// A class to create (`version` 0) or to replace if still at `version`. Every child has an id: the ones
    /// the class had keep theirs, new ones were drawn by the plan (so their links can name them); members
    /// not listed leave the class (their results stay in its rooms).
    public struct ClassWrite: Sendable, Equatable {
        public var id: String
        public var version: Int
        public var draft: ClassDraft
        /// Who owns the class: its primary teacher (set on an update too: a class moved to another teacher).
        public var owner: Owner?
    }

    public var newSchools: [SchoolName] = []
    public var renamedSchools: [SchoolName] = []
    public var newAccounts: [AccountDraft] = []
    public var accountUpdates: [AccountUpdate] = []
    public var classWrites: [ClassWrite] = []
    /// Links to store (replacing any of the same kind and sourcedId).
    public var links: [RosterLink] = []
    /// Links of children who left, to remove.
    public var unlinks: [RosterLink] = []
    public var counts = RosterCounts()

    public init() {}
}
