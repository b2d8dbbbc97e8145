import FoundationEssentials

/// The stories a school keeps (the library), in the room store beside the rooms, so that every node of a
/// cluster sees the same library and one backup keeps it. SQLite and PostgreSQL implement it
/// (`SQLiteRoomStore+Stories`, `PostgresRoomStore+Stories`); like the rest of a store, every call runs its
/// blocking work on the store's own threads and is durable when it returns.
///
/// A story is stored valid (a `Story`), in the file format (`Story.jsonValue()`), with a version that
/// every change raises by one. A change names the version it was based on: when another change came
/// first, it is refused with the current story (`StoryLibraryError.conflict`), so a teacher's work is
/// never overwritten silently. Rooms carry the id of the story they were started from
/// (`RoomHeader.storyID`), and a story that a room still running uses cannot be deleted.
public protocol StoryLibrary: AnyObject, Sendable {
    /// One page of the library, most recently changed first; `matching` keeps the stories whose title
    /// contains it (any case); `after` is the previous page's `next`.
    /// Only the stories in `scope` (`OwnerScope`: a teacher's own and their school's shared ones).
    func listStories(matching: String?, after: StoryCursor?, limit: Int, scope: OwnerScope) async throws -> StoryPage
    /// The story `id`, or nil.
    func story(_ id: String) async throws -> StoredStory?
    /// Stores a new story at version 1 under a new id, owned by `owner` (not shared).
    func createStory(_ story: Story, by author: String, owner: Owner?) async throws -> StoredStory
    /// Replaces story `id`, if it is still at `version`; throws `.conflict` with the current story if
    /// not, `.notFound` if there is none.
    func updateStory(_ id: String, to story: Story, basedOn version: Int, by author: String) async throws -> StoredStory
    /// Deletes story `id`; throws `.inUse` while a room that has not finished was started from it,
    /// `.notFound` if there is none.
    func deleteStory(_ id: String) async throws
    /// Adds each seed whose key was never seeded before (the sample stories, at start): a seed a teacher
    /// deleted stays deleted. Returns how many were added. Nodes seeding together add each seed once.
    func seedStories(_ seeds: [StorySeed]) async throws -> Int
}

extension StoryLibrary {
    /// Every story, owned or not.
    public func listStories(matching: String?, after: StoryCursor?, limit: Int) async throws -> StoryPage {
        try await listStories(matching: matching, after: after, limit: limit, scope: .everything)
    }

    /// A story nobody owns (the admin token's, or a sample).
    public func createStory(_ story: Story, by author: String) async throws -> StoredStory {
        try await createStory(story, by: author, owner: nil)
    }
}

/// Why the library refused a change.
public enum StoryLibraryError: Error, Sendable, Equatable {
    case notFound(id: String)
    /// The story changed since the version the change was based on; this is what it is now.
    case conflict(current: StoredStory)
    /// Rooms that have not finished were started from it.
    case inUse(id: String, rooms: [String])
}
