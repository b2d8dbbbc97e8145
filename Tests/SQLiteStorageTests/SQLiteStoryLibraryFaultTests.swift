import Foundation
import Testing
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The story library meeting a full disk: a save that cannot be stored is refused and changes nothing,
/// and once there is room again the same save goes through.
struct SQLiteStoryLibraryFaultTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-library-faults-\(UUID().uuidString)")
    var path: String { folder.appendingPathComponent("rooms.sqlite").path }

    /// A valid story; `questions` of the longest kind make it about 1.8 KB each.
    static func story(_ title: String, questions: Int) -> Story {
        let long = { (n: Int, length: Int) in String("\(n) " + String(repeating: "cloud ", count: length / 6)).prefix(length).trimmingCharacters(in: .whitespaces) }
        return Story(
            title: title, sentences: ["The little cloud drifted over the hills."],
            quiz: Quiz(questions: (0..<questions).map { q in
                Question(text: long(q, 290) + "?", options: (0..<8).map { long($0, 110) + " \(q)" }, answer: 0, explanation: long(q, 490))
            })
        )
    }

    @Test func aSaveOnAFullDiskIsRefusedChangesNothingAndGoesThroughOnceThereIsRoom() async throws {
        let store = try SQLiteRoomStore(path: path)
        defer {
            Task { await store.close() }
            try? FileManager.default.removeItem(at: folder)
        }
        let first = try await store.createStory(Self.story("Small", questions: 1), by: "A")
        let pages = try #require(try SQLiteDatabase(path: path).integer("PRAGMA page_count"))
        try await store.runOnWriter("PRAGMA max_page_count = \(pages)")

        let big = Self.story("Big", questions: 50)
        await #expect(performing: { _ = try await store.createStory(big, by: "A") }, throws: { error in
            (error as? StoreFailure)?.kind == .unavailable && (error as? StoreFailure)?.reason == "database or disk is full"
        })
        await #expect(performing: { _ = try await store.updateStory(first.entry.id, to: big, basedOn: 1, by: "B") }, throws: { error in
            (error as? StoreFailure)?.kind == .unavailable
        })
        #expect(try await store.story(first.entry.id) == first, "the refused update changed nothing")
        #expect(try await store.listStories(matching: nil, after: nil, limit: 10).stories == [first.entry])

        try await store.runOnWriter("PRAGMA max_page_count = 1073741823")
        let updated = try await store.updateStory(first.entry.id, to: big, basedOn: 1, by: "B")
        #expect(updated.entry.version == 2)
        #expect(try await store.story(first.entry.id)?.story == big)
        // The rooms' writer carries on after the library's failed turns.
        #expect(await store.probe() == .ok)
    }
}
