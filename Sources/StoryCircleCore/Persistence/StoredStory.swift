import FoundationEssentials

/// What the library lists about a story.
public struct StoryEntry: Sendable, Equatable, Codable {
    public var id: String
    public var title: String
    public var voice: String
    /// The pages' language for the voice (`RoomLanguage.of(voice:)`), nil when there is no catalog for it.
    public var language: String?
    public var questions: Int
    public var sentences: Int
    public var updatedAt: ServerTime
    public var updatedBy: String
    public var version: Int
    /// The teacher who made the story and their school; nil for a story stored before accounts or seeded.
    public var owner: Owner?
    /// Shared with the owner's school: its teachers read and duplicate it (`OwnershipBook.setStoryShared`).
    public var shared: Bool

    public init(
        id: String, title: String, voice: String, questions: Int, sentences: Int, updatedAt: ServerTime, updatedBy: String, version: Int,
        owner: Owner? = nil, shared: Bool = false
    ) {
        self.id = id
        self.title = title
        self.voice = voice
        language = RoomLanguage.of(voice: voice)
        self.questions = questions
        self.sentences = sentences
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.version = version
        self.owner = owner
        self.shared = shared
    }
}

/// A story of the library with what the list shows of it.
public struct StoredStory: Sendable, Equatable {
    public var entry: StoryEntry
    public var story: Story

    public init(entry: StoryEntry, story: Story) {
        self.entry = entry
        self.story = story
    }

    public init(id: String, story: Story, version: Int, updatedAt: ServerTime, updatedBy: String, owner: Owner? = nil, shared: Bool = false) {
        self.init(entry: StoryEntry(
            id: id, title: story.title, voice: story.narration.voice, questions: story.quiz.questions.count,
            sentences: story.sentences.count, updatedAt: updatedAt, updatedBy: updatedBy, version: version, owner: owner, shared: shared
        ), story: story)
    }

    /// The story in the file format, as the stores keep it.
    public var documentText: String {
        String(decoding: (try? JSONEncoder().encode(story.jsonValue())) ?? Data(), as: UTF8.self)
    }
}

/// Where a page of the list ends: the (changed at, id) of its last story. Opaque to clients as a string.
public struct StoryCursor: Sendable, Equatable {
    public var updatedAt: ServerTime
    public var id: String

    public init(updatedAt: ServerTime, id: String) {
        self.updatedAt = updatedAt
        self.id = id
    }

    /// `"<milliseconds>.<id>"`.
    public var token: String { "\(updatedAt.milliseconds).\(id)" }

    public init?(token: String) {
        guard let dot = token.firstIndex(of: "."), let milliseconds = Int64(token[..<dot]) else { return nil }
        let id = String(token[token.index(after: dot)...])
        guard StoryLibraryIDs.isWellFormed(id) else { return nil }
        self.init(updatedAt: ServerTime(milliseconds: milliseconds), id: id)
    }
}

/// One page of the list, and the cursor of the next when there is more.
public struct StoryPage: Sendable, Equatable {
    public var stories: [StoryEntry]
    public var next: StoryCursor?

    public init(stories: [StoryEntry], next: StoryCursor?) {
        self.stories = stories
        self.next = next
    }

    /// The page from `limit + 1` rows: the extra row only says that there is more.
    public init(rows: [StoryEntry], limit: Int) {
        stories = Array(rows.prefix(limit))
        next = rows.count > limit ? stories.last.map { StoryCursor(updatedAt: $0.updatedAt, id: $0.id) } : nil
    }
}

/// A sample story to put in the library once.
public struct StorySeed: Sendable, Equatable {
    /// What marks it as seeded (the file's name).
    public var key: String
    public var story: Story

    public init(key: String, story: Story) {
        self.key = key
        self.story = story
    }
}

/// Ids of library stories, and the bounds of the list.
public enum StoryLibraryIDs {
    /// A page holds at most this many stories.
    public static let maxPage = 500
    public static let defaultPage = 100

    /// A new id: 16 lower-case hex digits.
    public static func make() -> String {
        String(UUID().uuidString.lowercased().filter { $0 != "-" }.prefix(16))
    }

    /// Ids are short and plain (they travel in URLs and the CLI's arguments).
    public static func isWellFormed(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || $0 == 0x5f }
    }

    /// `text` as a LIKE pattern that matches it literally anywhere (escape character `\`).
    public static func likePattern(_ text: String) -> String {
        var pattern = "%"
        for character in text {
            if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
            pattern.append(character)
        }
        return pattern + "%"
    }
}
