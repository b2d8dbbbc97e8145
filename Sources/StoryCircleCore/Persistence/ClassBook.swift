/// The classes a school keeps, in the room store beside the rooms and the library (SQLite and PostgreSQL
/// implement it: `SQLiteRoomStore+Classes`, `PostgresRoomStore+Classes`). Every call runs its blocking work
/// on the store's own threads and is durable when it returns.
///
/// What the children did is not kept here: it lives in the rooms of the class (`RoomHeader.classID`,
/// `PlayerRecord.member`), and goes with them when the retention period deletes them. A member taken out
/// of the class keeps their results in those rooms; `eraseMember` deletes them everywhere.
public protocol ClassBook: AnyObject, Sendable {
    /// Every class, by name.
    func listClasses() async throws -> [ClassEntry]
    /// The classes in `scope` (`OwnerScope`), by name.
    func listClasses(scope: OwnerScope) async throws -> [ClassEntry]
    /// The class `id`, or nil.
    func schoolClass(_ id: String) async throws -> SchoolClass?
    /// Stores a new class at version 1, owned by `draft.owner`; throws `.nameTaken` when another class's name shares a key.
    func createClass(_ draft: ClassDraft) async throws -> SchoolClass
    /// Replaces class `id` if it is still at `version`: children with an id keep it, new ones get one,
    /// members left out leave the class. Throws `.conflict` with the current class if not at `version`,
    /// `.notFound`, `.nameTaken`, or `.memberNotFound` for an id the class does not have.
    func updateClass(_ id: String, to draft: ClassDraft, basedOn version: Int) async throws -> SchoolClass
    /// Deletes class `id` and its rooms with their results (players, answers, events): once the class is
    /// gone nobody could erase a child's data from them. Throws `.inUse` while a room of the class has not
    /// finished, `.notFound` when there is no such class.
    func deleteClass(_ id: String) async throws
    /// Deletes member `member` of class `id` and everything of theirs in every room: players, answers,
    /// released tokens. Throws `.memberNotFound` when the class has nothing of them (never had them, or
    /// they were erased already), `.inUse` while a room of the class has not finished (the room holds the child
    /// in memory, and would write them back).
    func eraseMember(_ member: String, ofClass id: String) async throws
    /// Every stored room of class `id`, newest first (for its reports).
    func classRooms(_ id: String) async throws -> [RoomArchive]
}

extension ClassBook {
    /// Filters the whole list: stores that keep many classes answer with a query of their own.
    public func listClasses(scope: OwnerScope) async throws -> [ClassEntry] {
        try await listClasses().filter { scope.admits($0.owner) }
    }
}

/// Why the class book refused a change.
public enum ClassBookError: Error, Sendable, Equatable {
    case notFound(id: String)
    /// The class changed since the version the change was based on; this is what it is now.
    case conflict(current: SchoolClass)
    /// Another class's name looks like this one's.
    case nameTaken(name: String)
    case memberNotFound(id: String)
    /// Rooms of the class have not finished.
    case inUse(id: String, rooms: [String])
}
