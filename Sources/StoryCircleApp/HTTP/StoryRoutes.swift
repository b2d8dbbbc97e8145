import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// The story library's routes (`docs/protocol.md`, "Story library"): `GET|POST /api/stories`,
/// `GET|PUT|DELETE /api/stories/{id}`, `POST /api/stories/validate`, and rooms started from a library
/// story (`POST /api/rooms` with `storyId`). All of them need the admin token; a room's teacher token is
/// refused with 403 (`wrong_role`), since it speaks for one room, not for the school's library.
struct StoryRoutes: RouteCollection {
    static let refusal = Route.Refusal.adminOnly(
        unauthorized: "The story library needs the admin token (Authorization: Bearer …); the server printed where it keeps it.",
        wrongRole: "The story library needs the admin token; a room's teacher or dashboard token cannot change the school's stories."
    )

    var routes: [Route] {
        [
            // Checking a story, listening to a sentence and listing the voices need no stored stories.
            Route(.post, "/api/stories/validate", .teaching, refusal: Self.refusal) { try $0.validateStory($1) },
            Route(.post, "/api/stories/listen", .teaching, refusal: Self.refusal) { try await $0.listen($1) },
            Route(.get, "/api/stories/voices", .teaching, refusal: Self.refusal) { api, _ in api.voices() },
            Route(.get, "/api/stories", .teaching, refusal: Self.refusal) { try await $0.listStories($1) },
            Route(.post, "/api/stories", .teaching, refusal: Self.refusal) { try await $0.createStory($1) },
            Route(.get, "/api/stories/:id", .storyReader, refusal: Self.refusal) { try await $0.readStory($1) },
            Route(.put, "/api/stories/:id", .storyOwner, refusal: Self.refusal) { try await $0.updateStory($1) },
            Route(.delete, "/api/stories/:id", .storyOwner, refusal: Self.refusal) { try await $0.deleteStory($1) },
        ]
    }
}

extension APIHandler {
    /// The library, or 404 on a server without one.
    private func storyLibrary() throws -> any StoryLibrary {
        guard let library else { throw HTTPError(.notFound, "This server keeps no story library (it runs without a database).") }
        return library
    }

    /// The library and the well-formed id `:id` (a malformed one is as unknown as a missing one).
    private func storyLibrary(_ request: RouteRequest) throws -> (any StoryLibrary, String) {
        let library = try storyLibrary()
        let id = request[parameter: "id"]
        guard StoryLibraryIDs.isWellFormed(id) else { throw storyNotFound(id) }
        return (library, id)
    }

    // MARK: - Routes

    fileprivate func listStories(_ request: RouteRequest) async throws -> HTTPResponse {
        let library = try storyLibrary()
        var cursor: StoryCursor?
        if let after = request.query["after"], !after.isEmpty {
            guard let parsed = StoryCursor(token: after) else {
                throw HTTPError(.invalidMessage, "after must be the next value of the previous page.")
            }
            cursor = parsed
        }
        var limit = StoryLibraryIDs.defaultPage
        if let text = request.query["limit"] {
            guard let value = Int(text), value > 0 else { throw HTTPError(.invalidMessage, "limit must be a positive whole number.") }
            limit = min(value, StoryLibraryIDs.maxPage)
        }
        let query = request.query["q"].map { String($0.prefix(StoryLimits.titleLength.upperBound)) }
        do {
            let page = try await library.listStories(matching: query, after: cursor, limit: limit, scope: try request.ownerScope)
            return .json(200, StoryListResponse(stories: page.stories, next: page.next?.token))
        } catch {
            throw storeRefusal(error, "The stories could not be read from storage")
        }
    }

    fileprivate func createStory(_ request: RouteRequest) async throws -> HTTPResponse {
        let library = try storyLibrary()
        let body = try decodeObject(request.body)
        // Either {"story": {...}, "by": "..."} or the story file itself (either seed shape too).
        let document = body["story"] ?? .object(body.filter { $0.key != "by" })
        let (story, issues) = checkedStory(document)
        guard let story else { throw invalidStory(issues) }
        try refuseUnstoredPictures(document)
        do {
            let stored = try await library.createStory(story, by: author(body), owner: request.newOwner)
            return .json(201, StoryResponse(stored, warnings: issues))
        } catch {
            throw storeRefusal(error, "The story could not be saved")
        }
    }

    fileprivate func readStory(_ request: RouteRequest) async throws -> HTTPResponse {
        let (library, id) = try storyLibrary(request)
        let stored: StoredStory?
        do {
            stored = try await library.story(id)
        } catch {
            throw storeRefusal(error, "The story could not be read from storage")
        }
        guard let stored else { throw storyNotFound(id) }
        return .json(200, StoryResponse(stored))
    }

    fileprivate func updateStory(_ request: RouteRequest) async throws -> HTTPResponse {
        let (library, id) = try storyLibrary(request)
        let body = try decodeObject(request.body)
        guard case .number(let number)? = body["version"], let version = Int(exactly: number), version > 0 else {
            throw HTTPError(.invalidMessage, "Send {\"story\": {...}, \"version\": N}, N being the version the change was based on (GET answers it).")
        }
        guard let document = body["story"] else {
            throw HTTPError(.invalidMessage, "Send {\"story\": {...}, \"version\": N}: the story is missing.")
        }
        let (story, issues) = checkedStory(document)
        guard let story else { throw invalidStory(issues) }
        try refuseUnstoredPictures(document)
        do {
            let stored = try await library.updateStory(id, to: story, basedOn: version, by: author(body))
            return .json(200, StoryResponse(stored, warnings: issues))
        } catch {
            throw storeRefusal(error, "The story could not be saved")
        }
    }

    fileprivate func deleteStory(_ request: RouteRequest) async throws -> HTTPResponse {
        let (library, id) = try storyLibrary(request)
        do {
            try await library.deleteStory(id)
            return .json(200, ["deleted": id])
        } catch {
            throw storeRefusal(error, "The story could not be deleted")
        }
    }

    /// The validator of `story validate`, with the voices this node has; never stores anything.
    fileprivate func validateStory(_ request: RouteRequest) throws -> HTTPResponse {
        guard !request.body.isEmpty else { throw HTTPError(.invalidMessage, "The request needs a JSON body.") }
        guard let document = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body)) else {
            // The validator's own words for JSON that does not parse, with where.
            return .json(200, ValidationResponse(story: nil, issues: Story.load(json: Data(request.body)).issues))
        }
        var wrapped = document
        if case .object(let object) = document, let inner = object["story"] { wrapped = inner }
        let (story, issues) = checkedStory(wrapped)
        var response = ValidationResponse(story: story, issues: issues)
        // The sentences as the server splits them even while something else is wrong (the editor shows
        // them as the teacher types).
        if response.sentences == nil, case .object(let object) = wrapped {
            switch object["text"] {
            case .string(let text)?: response.sentences = SentenceSplitter.sentences(in: text)
            case .array(let items)?: response.sentences = items.flatMap { item -> [String] in
                if case .string(let text) = item { return SentenceSplitter.sentences(in: text) }
                return []
            }
            default: break
            }
        }
        return .json(200, response)
    }

    /// One sentence read aloud as a room would read it (the same engine, through the audio cache):
    /// `{"text", "voice", "rate", "pitch"}` answers `{"audio": "/audio/KEY.mp3", "durationMs"}`.
    fileprivate func listen(_ request: RouteRequest) async throws -> HTTPResponse {
        struct Body: Decodable {
            var text: String
            var voice: String?
            var rate: Int?
            var pitch: Int?
        }
        struct Listened: Encodable {
            var audio: String
            var durationMs: Int
        }
        guard let narrator else { throw HTTPError(.notFound, "This server reads no stories aloud.") }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            throw HTTPError(.invalidMessage, "Send {\"text\": \"a sentence\", \"voice\": \"en\", \"rate\": 150, \"pitch\": 50}.")
        }
        let text = body.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard StoryLimits.sentenceLength.contains(text.count) else {
            throw HTTPError(.invalidMessage, "The text must be one sentence of 1 to \(StoryLimits.sentenceLength.upperBound) characters.")
        }
        var settings = NarrationSettings()
        settings.voice = body.voice ?? settings.voice
        settings.rate = min(max(body.rate ?? settings.rate, StoryLimits.rate.lowerBound), StoryLimits.rate.upperBound)
        settings.pitch = min(max(body.pitch ?? settings.pitch, StoryLimits.pitch.lowerBound), StoryLimits.pitch.upperBound)
        if case .failure(let refusal) = narrator.voices.choose(settings.voice) {
            throw HTTPError(refusal.roomError)
        }
        do {
            let plan = try await narrator.prepare(NarrationRequest(preparation: 0, sentences: [text], settings: settings, questions: nil)) { _, _ in }
            guard let sentence = plan.sentences.first, let audio = sentence.audio else { throw HTTPError(.internalError, "Nothing was read.") }
            return .json(200, Listened(audio: audio, durationMs: sentence.durationMs))
        } catch {
            throw HTTPError(.internalError, "The sentence could not be read aloud (\(error)).")
        }
    }

    /// The voices this node reads with, described for the editor's menu, and the best one for each language
    /// the pages speak (a new story's voice).
    fileprivate func voices() -> HTTPResponse {
        struct Voices: Encodable {
            var voices: [VoiceCatalog.Described]
            var best: [String: String]
        }
        guard let catalog = narrator?.voices else { return .json(200, Voices(voices: [], best: [:])) }
        let best = Dictionary(uniqueKeysWithValues: RoomLanguage.available.map { ($0, catalog.best(for: $0)) })
        return .json(200, Voices(voices: catalog.described, best: best))
    }

    // MARK: - Rooms from the library

    /// `POST /api/rooms` with `{"storyId": …}`: the story as the library has it now.
    /// A story `principal` may not read is as unknown as a missing one.
    func libraryStory(_ value: JSONValue, for principal: Principal?) async throws -> Story {
        guard case .string(let id) = value, StoryLibraryIDs.isWellFormed(id) else {
            throw HTTPError(.invalidMessage, "storyId must be the id of a story in the library (GET /api/stories lists them).")
        }
        let library = try storyLibrary()
        let stored: StoredStory?
        do {
            stored = try await library.story(id)
        } catch {
            throw storeRefusal(error, "The story could not be read from storage")
        }
        // Nobody proved (never so on an admitted request) reads no story: refused, not let through.
        guard let stored, let principal, OwnershipRules.allows(principal, .read, owner: stored.entry.owner, shared: stored.entry.shared) else {
            throw storyNotFound(id)
        }
        return stored.story
    }

    // MARK: - Helpers

    /// The story and every issue found: the file validator's, then whether this node has its voice.
    func checkedStory(_ document: JSONValue) -> (Story?, [ValidationIssue]) {
        let validated = Story.load(json: document)
        guard let story = validated.value else { return (nil, validated.issues) }
        if let narrator, case .failure(let refusal) = narrator.voices.choose(story.narration.voice) {
            return (nil, validated.issues + [ValidationIssue(.error, at: "narration.voice", .voiceNotInstalled, ["voice": refusal.voice], refusal.description)])
        }
        return (story, validated.issues)
    }

    /// A library story starts rooms, so its pictures must be stored ones: a file path names a file on the
    /// computer that sent it, which this server never sees.
    private func refuseUnstoredPictures(_ document: JSONValue) throws {
        let files = Story.pictureFileLocations(in: document)
        guard !files.isEmpty else { return }
        throw invalidStory(files.map { location in
            ValidationIssue(.error, at: location.path + ".file", .pictureNotUploaded, ["file": location.file], "the picture \(location.file) was not uploaded: upload it to POST /api/pictures first and name it by its id (storycircle story push does this)")
        })
    }

    private func author(_ body: [String: JSONValue]) -> String {
        guard case .string(let name)? = body["by"] else { return "admin" }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "admin" : String(trimmed.prefix(60))
    }

    private func storyNotFound(_ id: String) -> HTTPError {
        HTTPError(.storyNotFound, "There is no story \(id.prefix(64)) in the library.", params: ["id": String(id.prefix(64))])
    }

    private func storeRefusal(_ error: any Error, _ what: String) -> HTTPError {
        switch error {
        case StoryLibraryError.notFound(let id):
            return storyNotFound(id)
        case StoryLibraryError.conflict(let current):
            return HTTPError(
                RoomError(.storyConflict, "The story was changed (now version \(current.entry.version), by \(current.entry.updatedBy)) since the version this change was based on; nothing was overwritten.", params: ["version": String(current.entry.version)]),
                extra: ["current": StoryResponse(current).jsonValue]
            )
        case StoryLibraryError.inUse(let id, let rooms):
            return HTTPError(
                RoomError(.storyInUse, "Story \(id) is used by rooms that have not finished (\(rooms.joined(separator: ", "))); end them first.", params: ["rooms": rooms.joined(separator: ",")]),
                extra: ["rooms": .array(rooms.map(JSONValue.string))]
            )
        default:
            return HTTPError(.storageUnavailable, "\(what) (\(StoreFailure.from(error, record: "story").reason)); nothing was changed. Try again once storage works.")
        }
    }
}

/// A page of the list.
struct StoryListResponse: Encodable {
    var stories: [StoryEntry]
    var next: String?
}

/// A story of the library: what the list shows, and the story in the file format.
struct StoryResponse: Encodable {
    var id: String
    var title: String
    var voice: String
    var language: String?
    var questions: Int
    var sentences: Int
    var updatedAt: ServerTime
    var updatedBy: String
    var version: Int
    var story: JSONValue
    var warnings: [String]?

    init(_ stored: StoredStory, warnings: [ValidationIssue] = []) {
        let entry = stored.entry
        id = entry.id
        title = entry.title
        voice = entry.voice
        language = entry.language
        questions = entry.questions
        sentences = entry.sentences
        updatedAt = entry.updatedAt
        updatedBy = entry.updatedBy
        version = entry.version
        story = stored.story.jsonValue()
        let words = warnings.filter { $0.severity == .warning }.map(\.description)
        self.warnings = words.isEmpty ? nil : words
    }

    var jsonValue: JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: HTTPResponse.jsonEncoder.encode(self))) ?? .null
    }
}

/// What the validator found: every issue with its path, and, for a valid story, what the server will
/// narrate (the sentences, one at a time) and ask.
struct ValidationResponse: Encodable {
    struct Issue: Encodable {
        var severity: String
        var path: String
        var code: String
        var params: [String: String]
        var message: String
    }

    var valid: Bool
    var issues: [Issue]
    var sentences: [String]?
    var questions: Int?
    var language: String?

    init(story: Story?, issues: [ValidationIssue]) {
        valid = story != nil
        self.issues = issues.map { Issue(severity: $0.severity.rawValue, path: $0.path, code: $0.code.rawValue, params: $0.params, message: $0.message) }
        sentences = story?.sentences
        questions = story?.quiz.questions.count
        language = story.flatMap { RoomLanguage.of(voice: $0.narration.voice) }
    }
}
