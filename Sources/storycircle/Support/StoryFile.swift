import Foundation
import StoryCircleCore

enum StoryFile {
    /// Reads and validates a story, or explains why it cannot be used (every problem, one per line).
    static func load(_ path: String) -> Validated<Story> {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "there is no such file"
            return Validated(value: nil, issues: [ValidationIssue(.error, at: "", .fileUnreadable, ["file": path], "cannot open \(path): \(reason)")])
        }
        return Story.load(json: data)
    }

    /// The file as JSON, for a second look (where its pictures are named); nil when unreadable.
    static func document(_ path: String) -> JSONValue? {
        FileManager.default.contents(atPath: path).flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0) }
    }

    /// Loads `path` for a command that needs it valid; prints its problems and throws if it is not.
    static func require(_ path: String) throws(CommandFailure) -> Story {
        let result = load(path)
        for warning in result.warnings { Output.warning("\(path): \(warning)") }
        guard let story = result.value else {
            for error in result.errors { FileHandle.standardError.write(Data("\(path): \(error)\n".utf8)) }
            throw CommandFailure("\(path) is not a valid story (\(result.errors.count) problem\(result.errors.count == 1 ? "" : "s")); 'storycircle story validate \(path)' lists them.")
        }
        return story
    }
}
