/// One child's data, for a parent's request (`docs/privacy.md`): exported whole, then erased. SQLite and
/// PostgreSQL implement it (`SQLiteRoomStore+ChildData`, `PostgresRoomStore+ChildData`); a server without
/// a database keeps nothing to export. Every call runs its blocking work on the store's own threads, and
/// a change is durable (and, in SQLite, gone from the database's files) when it returns.
///
/// A child is either a member of a class (`ClassMember`: their name in the class and every room of the
/// class they played in) or a nickname typed in one room (a player of a room without a class).
public protocol ChildDataBook: AnyObject, Sendable {
    /// Everything stored about member `member` of class `id`: the member record and every room of the class
    /// they played in. Throws `ClassBookError.notFound` or `.memberNotFound` (never had them, or erased).
    func memberData(_ member: String, ofClass id: String) async throws -> ChildData
    /// Everything stored about player `player` of room `code`; nil when the room has no such player (or
    /// there is no such room).
    func playerData(_ player: String, inRoom code: String) async throws -> ChildData?
    /// Deletes player `player` of room `code` with their answers and released resume tokens. Throws
    /// `ChildDataError.notFound` when the room has no such player, `.roomRunning` while the room has not
    /// finished (it holds the child in memory, and would write them back).
    func erasePlayer(_ player: String, inRoom code: String) async throws
    /// Deletes room `code` with everything about it (players, answers, events). Throws
    /// `ChildDataError.notFound` when there is no such room, `.roomRunning` while it has not finished.
    func deleteRoom(_ code: String) async throws
    /// Deletes the data of class members taken out of their class before `cutoff` (the member record and
    /// everything of theirs in the class's rooms), as `ClassBook.eraseMember` does; skips members of a
    /// class with a room still running. Answers how many were erased.
    func purgeRemovedMembers(removedBefore cutoff: ServerTime) async throws -> Int
    /// Deletes classes neither changed nor used by a room since `cutoff` (with their rooms, all older),
    /// as `ClassBook.deleteClass` does. Answers how many.
    func purgeClasses(unusedSince cutoff: ServerTime) async throws -> Int
    /// Deletes library stories neither changed nor started by a room since `cutoff` (none while a room
    /// started from them runs). Answers how many. A teacher's work: only when a school asks for it.
    func purgeStories(unusedSince cutoff: ServerTime) async throws -> Int
    /// Deletes pictures stored before `cutoff` that no library story and no stored room names. Answers how
    /// many.
    func purgePictures(storedBefore cutoff: ServerTime) async throws -> Int
}

/// Why a child's data could not be erased.
public enum ChildDataError: Error, Sendable, Equatable {
    /// No such room, or no such player in it.
    case notFound(room: String, player: String?)
    /// The room has not finished.
    case roomRunning(room: String)
}

/// Everything a store keeps about one child, as stored (never a resume token or its hash: those are
/// credentials, not data about the child).
public struct ChildData: Sendable, Equatable {
    /// The child as a member of a class; nil for a nickname typed in a room.
    public var member: Membership?
    /// Every room the child played in, oldest first.
    public var rooms: [Appearance]

    public init(member: Membership?, rooms: [Appearance]) {
        self.member = member
        self.rooms = rooms
    }

    /// The class member record.
    public struct Membership: Sendable, Equatable {
        public var classID: String
        public var className: String
        public var memberID: String
        public var name: String
        public var avatar: String
        /// When the teacher took the child out of the class (nil: still a member).
        public var removedAt: ServerTime?

        public init(classID: String, className: String, memberID: String, name: String, avatar: String, removedAt: ServerTime?) {
            self.classID = classID
            self.className = className
            self.memberID = memberID
            self.name = name
            self.avatar = avatar
            self.removedAt = removedAt
        }
    }

    /// The child in one room: their player row and their answers.
    public struct Appearance: Sendable, Equatable {
        public var room: String
        /// The story the room played (for the questions' and options' words).
        public var story: Story
        public var roomCreatedAt: ServerTime
        public var roomPhase: PhaseName
        public var classID: String?
        public var player: PlayerID
        public var nickname: String
        public var member: MemberID?
        public var joinedAt: ServerTime
        /// When they last left (a closed page), if they did.
        public var leftAt: ServerTime?
        public var kickedAt: ServerTime?
        public var blocked: Bool
        /// When the teacher freed their name for another device (a class room), if not picked again.
        public var releasedAt: ServerTime?
        /// How many resume tokens of theirs were released (kept, as hashes, so they are refused).
        public var releasedTokens: Int
        public var answers: [AnswerRecord]

        public init(
            room: String, story: Story, roomCreatedAt: ServerTime, roomPhase: PhaseName, classID: String?, player: PlayerID, nickname: String, member: MemberID?,
            joinedAt: ServerTime, leftAt: ServerTime?, kickedAt: ServerTime?, blocked: Bool, releasedAt: ServerTime?, releasedTokens: Int, answers: [AnswerRecord]
        ) {
            self.room = room
            self.story = story
            self.roomCreatedAt = roomCreatedAt
            self.roomPhase = roomPhase
            self.classID = classID
            self.player = player
            self.nickname = nickname
            self.member = member
            self.joinedAt = joinedAt
            self.leftAt = leftAt
            self.kickedAt = kickedAt
            self.blocked = blocked
            self.releasedAt = releasedAt
            self.releasedTokens = releasedTokens
            self.answers = answers
        }
    }
}
