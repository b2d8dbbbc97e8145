import Foundation
import StoryCircleCore

/// What the library API answers about a story (`docs/protocol.md`, "Story library").
struct LibraryStory: Decodable {
    var id: String
    var title: String
    var voice: String
    var language: String?
    var questions: Int
    var updatedAt: Int64
    var updatedBy: String
    var version: Int
    var story: JSONValue?
    var warnings: [String]?
}

/// `story list`: every story of a running server's library, most recently changed first.
struct StoryListCommand: ParsableCommand {
    static let search = CommandSpec.Option(long: "search", valueName: "text", help: "Only the stories whose title contains this (any case).")

    var client: ClientOptions
    var search: String?
    var json: Bool

    init(_ arguments: ParsedArguments) {
        client = ClientOptions(arguments)
        search = arguments.value(of: Self.search)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        struct Page: Decodable {
            var stories: [LibraryStory]
            var next: String?
        }
        let token = try client.adminToken()
        var stories: [LibraryStory] = []
        var after: String?
        repeat {
            var query = [URLQueryItem(name: "limit", value: String(StoryLibraryIDs.maxPage))]
            if let search { query.append(URLQueryItem(name: "q", value: search)) }
            if let after { query.append(URLQueryItem(name: "after", value: after)) }
            var components = URLComponents()
            components.queryItems = query
            let response = try await client.api.send("GET", "/api/stories" + (components.string ?? ""), token: token)
            let page = try JSONDecoder().decode(Page.self, from: response.body)
            stories += page.stories
            after = page.next
        } while after != nil
        if json {
            let entries = stories.map { story -> JSONValue in
                .object([
                    "id": .string(story.id), "title": .string(story.title), "voice": .string(story.voice),
                    "language": story.language.map(JSONValue.string) ?? .null, "questions": .number(Double(story.questions)),
                    "updatedAt": .number(Double(story.updatedAt)), "updatedBy": .string(story.updatedBy), "version": .number(Double(story.version)),
                ])
            }
            Output.write(String(decoding: try JSONEncoder().encode(JSONValue.object(["stories": .array(entries)])), as: UTF8.self) + "\n")
            return ExitCode.success
        }
        if stories.isEmpty {
            Output.line(search == nil ? "The library is empty. Add a story with 'storycircle story push STORY.json'." : "No story's title contains \"\(search!)\".")
            return ExitCode.success
        }
        let formatter = ISO8601DateFormatter()
        Output.line(Table.render(header: ["ID", "VERSION", "QUESTIONS", "VOICE", "CHANGED", "BY", "TITLE"], rows: stories.map { story in
            [story.id, String(story.version), String(story.questions), story.voice,
             formatter.string(from: Date(timeIntervalSince1970: Double(story.updatedAt) / 1_000)), story.updatedBy, story.title]
        }))
        return ExitCode.success
    }
}

/// `story push FILE`: adds the story to the library, or with `--id` replaces that story, after the
/// server's validator (the one of `story validate`, with the server's voices) has checked it.
struct StoryPushCommand: ParsableCommand {
    static let id = CommandSpec.Option(long: "id", valueName: "id", help: "Replace this story of the library instead of adding a new one.")
    static let basedOn = CommandSpec.Option(long: "based-on", valueName: "version", help: "With --id: the version the file was based on (from 'story pull'); a story changed since is not replaced.")

    var file: String
    var id: String?
    var basedOn: Int?
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        file = arguments.positional[0]
        id = arguments.value(of: Self.id)
        client = ClientOptions(arguments)
        if let text = arguments.value(of: Self.basedOn) {
            guard let value = Int(text), value > 0 else {
                throw UsageError("The value '\(text)' is invalid for '\(Self.basedOn.usage)': use the version 'story pull' printed (1 or more).")
            }
            basedOn = value
        }
        if basedOn != nil, id == nil { throw UsageError("--based-on goes with --id (the story to replace).") }
        if let id, !StoryLibraryIDs.isWellFormed(id) { throw UsageError("The value '\(id)' is invalid for '\(Self.id.usage)': use an id from 'story list'.") }
    }

    func run() async throws -> Int32 {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw CommandFailure("cannot open \(file): \(FileManager.default.fileExists(atPath: file) ? "it cannot be read" : "there is no such file")")
        }
        var document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            // The validator words it, with where.
            for issue in Story.load(json: data).errors { FileHandle.standardError.write(Data("\(file): \(issue)\n".utf8)) }
            throw CommandFailure("\(file) is not a valid story; nothing was sent.")
        }
        let token = try client.adminToken()
        // Picture files go up first (as for `room create`): the library keeps a story naming its pictures
        // by stored id. A story that does not load is sent as it is, for the server's validator to word.
        if !Story.pictureFileLocations(in: document).isEmpty, let story = Story.load(json: document).value {
            document = try await PictureUpload.upload(story, storyPath: file, api: client.api, token: token).jsonValue()
        }
        let author = "cli:" + (ProcessInfo.processInfo.environment["USER"] ?? "admin")
        let response: APIClient.Response
        if let id {
            var version = basedOn
            if version == nil {
                // No version given: replace what is there now (read just before, so a save in between still conflicts).
                let current = try JSONDecoder().decode(LibraryStory.self, from: try await client.api.send("GET", "/api/stories/\(id)", token: token).body)
                version = current.version
            }
            let body = try JSONEncoder().encode(JSONValue.object(["story": document, "version": .number(Double(version!)), "by": .string(author)]))
            response = try await client.api.exchange("PUT", "/api/stories/\(id)", token: token, json: body)
        } else {
            let body = try JSONEncoder().encode(JSONValue.object(["story": document, "by": .string(author)]))
            response = try await client.api.exchange("POST", "/api/stories", token: token, json: body)
        }
        try Self.checkRefusal(response)
        let saved = try JSONDecoder().decode(LibraryStory.self, from: response.body)
        saved.warnings?.forEach { Output.warning("\(file): \($0)") }
        Output.line("\(file): saved as story \(saved.id), version \(saved.version): \"\(saved.title)\", \(saved.questions) question\(saved.questions == 1 ? "" : "s")")
        return ExitCode.success
    }

    /// Prints the validator's report for a refused story, or the conflict's details, and throws; does
    /// nothing for a story that was saved.
    private static func checkRefusal(_ response: APIClient.Response) throws {
        guard !(200..<300).contains(response.status) else { return }
        struct Body: Decodable {
            struct Issue: Decodable { var severity, path, message: String }
            struct Current: Decodable { var version: Int; var updatedBy: String }
            struct Refusal: Decodable {
                var code: String
                var message: String
                var issues: [Issue]?
                var current: Current?
            }
            var error: Refusal
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: response.body) else { throw CommandFailure(APIClient.refusal(response)) }
        try report(body.error.code, body.error.message, issues: body.error.issues?.map { ($0.severity, $0.path, $0.message) } ?? [], current: body.error.current.map { ($0.version, $0.updatedBy) })
    }

    private static func report(_ code: String, _ message: String, issues: [(String, String, String)], current: (Int, String)?) throws {
        for (severity, path, text) in issues {
            let line = (path.isEmpty ? "" : "\(path): ") + text
            if severity == "error" { FileHandle.standardError.write(Data("\(line)\n".utf8)) } else { Output.warning(line) }
        }
        if code == "invalid_story" {
            let errors = issues.filter { $0.0 == "error" }.count
            throw CommandFailure("the story is not valid (\(errors) problem\(errors == 1 ? "" : "s")); nothing was saved.")
        }
        if let (version, by) = current {
            throw CommandFailure("the story was changed since (now version \(version), by \(by)); nothing was overwritten. 'storycircle story pull' it, merge your changes, and push again with --based-on \(version).")
        }
        throw CommandFailure("\(message) [\(code)]")
    }
}

/// `story pull ID`: a story of the library in the file format, to edit and push back.
struct StoryPullCommand: ParsableCommand {
    static let out = CommandSpec.Option(long: "out", valueName: "file", help: "Write the story to this file instead of printing it.")

    var id: String
    var out: String?
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        id = arguments.positional[0]
        out = arguments.value(of: Self.out)
        client = ClientOptions(arguments)
        guard StoryLibraryIDs.isWellFormed(id) else { throw UsageError("The value '\(id)' is not a story id: use an id from 'story list'.") }
    }

    func run() async throws -> Int32 {
        let response = try await client.api.send("GET", "/api/stories/\(id)", token: try client.adminToken())
        let story = try JSONDecoder().decode(LibraryStory.self, from: response.body)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(story.story ?? .null), as: UTF8.self) + "\n"
        guard let out else {
            Output.write(text)
            return ExitCode.success
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
        } catch {
            throw CommandFailure("cannot write \(out): \(error.localizedDescription)")
        }
        Output.line("Story \(story.id), version \(story.version) (\"\(story.title)\", by \(story.updatedBy)), written to \(out).")
        Output.line("After editing: storycircle story push \(out) --id \(story.id) --based-on \(story.version)")
        return ExitCode.success
    }
}
