import Foundation
import Locking
import Testing
@testable import StoryCircleApp
@testable import StoryCircleCore

/// Picture paths of a story file: only files in the story file's folder (or below it), symlinks resolved.
@Suite("Story pictures: where a picture path may lead")
struct StoryPicturesTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-story-pictures-\(UUID().uuidString)")

    private static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/stories")

    /// A story folder with a real picture, a picture outside it, and a symlink from inside to it.
    private func layout() throws -> (storyPath: String, outside: String) {
        let stories = folder.appendingPathComponent("stories")
        try FileManager.default.createDirectory(at: stories.appendingPathComponent("pictures"), withIntermediateDirectories: true)
        let owl = Self.samples.appendingPathComponent("pictures/owl.png")
        try FileManager.default.copyItem(at: owl, to: stories.appendingPathComponent("pictures/owl.png"))
        let outside = folder.appendingPathComponent("secret.png")
        try FileManager.default.copyItem(at: owl, to: outside)
        try FileManager.default.createSymbolicLink(atPath: stories.appendingPathComponent("pictures/link.png").path, withDestinationPath: outside.path)
        return (stories.appendingPathComponent("story.json").path, outside.path)
    }

    private static func document(_ files: [String]) -> JSONValue {
        .object([
            "title": .string("Paths"),
            "text": .array(files.map { .object(["text": .string("A page."), "picture": .object(["file": .string($0), "alt": .string("A picture")])]) }),
            "quiz": .object(["question": .string("Which?"), "options": .array([.string("One"), .string("Two")]), "answer": .string("One")]),
        ])
    }

    @Test func absolutePathsAndPathsLeadingOutsideTheFolderAreRefusedAtTheirField() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (storyPath, outside) = try layout()
        let files = ["pictures/owl.png", outside, "../secret.png", "pictures/link.png", "pictures/../pictures/owl.png"]
        let issues = await StoryPictures.problems(document: Self.document(files), storyPath: storyPath)
        try #require(issues.map(\.path) == ["text[1].picture", "text[2].picture", "text[3].picture"], "\(issues)")
        #expect(issues[0].message.contains("not absolute"))
        #expect(issues[1].message.contains("outside") && issues[2].message.contains("outside"))
        #expect(throws: StoryPictures.StoryPictureFailure.self) { try StoryPictures.resolve("../secret.png", storyPath: storyPath) }
        #expect(try StoryPictures.resolve("pictures/owl.png", storyPath: storyPath).hasSuffix("/stories/pictures/owl.png"))
    }

    @Test func storingNeverReadsOrSendsAFileOutsideTheFolder() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (storyPath, _) = try layout()
        let sent = Locked(0)
        for file in ["pictures/link.png", "../secret.png"] {
            let story = try #require(Story.load(json: Self.document([file])).value)
            await #expect(throws: StoryPictures.StoryPictureFailure.self) {
                _ = try await StoryPictures.storing(story, storyPath: storyPath) { _ in
                    sent.withLock { $0 += 1 }
                    return ("0", 0)
                }
            }
        }
        #expect(sent.withLock { $0 } == 0)
    }
}
