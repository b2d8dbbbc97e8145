import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `StoryLibrary`, held to by every backend alike.
@Suite("Story library, every backend")
struct StoryLibrarySuite {
    static func story(_ title: String, questions: Int = 1, voice: String = "en") -> Story {
        Story(
            title: title, sentences: ["Once there was a cloud.", "It rained."], narration: NarrationSettings(voice: voice, rate: 160, pitch: 40),
            quiz: Quiz(title: "Quiz", questions: (0..<questions).map { Question(text: "Question \($0)?", options: ["Yes", "No", "Maybe"], answer: 2, timeLimit: 25, explanation: "Because.") })
        )
    }

    static func library(_ store: any RoomLeases) -> any StoryLibrary {
        store.offers.library!
    }

    @Test(arguments: Backend.all)
    func aStoryIsCreatedReadListedUpdatedAndDeleted(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let library = Self.library(fixture.store)
        let created = try await library.createStory(Self.story("Three Clouds", questions: 3, voice: "es"), by: "Ms Rivera")
        #expect(created.entry.version == 1)
        #expect(created.entry.questions == 3)
        #expect(created.entry.language == "es")
        #expect(StoryLibraryIDs.isWellFormed(created.entry.id))

        let read = try #require(try await library.story(created.entry.id))
        #expect(read == created)
        #expect(try await library.story("nothing-here") == nil)
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10).stories == [created.entry])

        let updated = try await library.updateStory(created.entry.id, to: Self.story("Three Clouds, again", questions: 2), basedOn: 1, by: "Mr Chen")
        #expect(updated.entry.version == 2)
        #expect(updated.entry.updatedBy == "Mr Chen")
        #expect(try await library.story(created.entry.id) == updated)

        try await library.deleteStory(created.entry.id)
        #expect(try await library.story(created.entry.id) == nil)
        await #expect(throws: StoryLibraryError.notFound(id: created.entry.id)) { try await library.deleteStory(created.entry.id) }
        await #expect(throws: StoryLibraryError.notFound(id: created.entry.id)) {
            try await library.updateStory(created.entry.id, to: Self.story("Gone"), basedOn: 2, by: "Mr Chen")
        }
    }

    @Test(arguments: Backend.all)
    func aStaleUpdateIsRefusedWithTheCurrentStoryAndChangesNothing(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let library = Self.library(fixture.store)
        let created = try await library.createStory(Self.story("Pip"), by: "A")
        let first = try await library.updateStory(created.entry.id, to: Self.story("Pip, by A"), basedOn: 1, by: "A")
        await #expect(throws: StoryLibraryError.conflict(current: first)) {
            try await library.updateStory(created.entry.id, to: Self.story("Pip, by B"), basedOn: 1, by: "B")
        }
        #expect(try await library.story(created.entry.id) == first)
        await fixture.store.close()
        // And it was durable: a new store on the same database has it.
        let reopened = Self.library(try fixture.reopen())
        #expect(try await reopened.story(created.entry.id) == first)
    }

    @Test(arguments: Backend.all)
    func ofConcurrentUpdatesOfOneVersionExactlyOneWins(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        // On PostgreSQL, half of the editors are on another node's store.
        let libraries = [Self.library(fixture.store), Self.library(try fixture.anotherNode())]
        let created = try await libraries[0].createStory(Self.story("Shared"), by: "first")
        let outcomes = await withTaskGroup(of: Result<StoredStory, any Error>.self) { group in
            for editor in 0..<8 {
                group.addTask {
                    do {
                        return .success(try await libraries[editor % 2].updateStory(created.entry.id, to: Self.story("Edit \(editor)"), basedOn: 1, by: "editor \(editor)"))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let winners = outcomes.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        let winner = try #require(winners.first)
        #expect(winner.entry.version == 2)
        for case .failure(let error) in outcomes {
            #expect(error as? StoryLibraryError == .conflict(current: winner))
        }
        #expect(try await libraries[1].story(created.entry.id) == winner)
    }

    @Test(arguments: Backend.all)
    func aStoryUsedByARoomThatHasNotFinishedCannotBeDeleted(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let library = Self.library(fixture.store)
        let created = try await library.createStory(Self.story("In use"), by: "A")
        var header = Sample.header("424242")
        header.storyID = created.entry.id
        try await fixture.store.createRoom(header)
        #expect(try await fixture.store.archive(room: "424242")?.header.storyID == created.entry.id)

        await #expect(throws: StoryLibraryError.inUse(id: created.entry.id, rooms: ["424242"])) { try await library.deleteStory(created.entry.id) }
        #expect(try await library.story(created.entry.id) != nil)

        try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: "424242")
        try await library.deleteStory(created.entry.id)
        #expect(try await library.story(created.entry.id) == nil)
        // The finished room keeps its own copy of the story.
        #expect(try await fixture.store.archive(room: "424242")?.header.story == Sample.story)
    }

    @Test(arguments: Backend.all)
    func sampleStoriesAreSeededOnceAndADeletedOneStaysDeleted(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let library = Self.library(fixture.store)
        let seeds = [StorySeed(key: "pip.json", story: Self.story("Pip")), StorySeed(key: "clouds.json", story: Self.story("Clouds"))]
        #expect(try await library.seedStories(seeds) == 2)
        #expect(try await library.seedStories(seeds) == 0)
        let listed = try await library.listStories(matching: nil, after: nil, limit: 10).stories
        #expect(Set(listed.map(\.title)) == ["Pip", "Clouds"])
        #expect(listed.allSatisfy { $0.updatedBy == "sample" })

        try await library.deleteStory(try #require(listed.first { $0.title == "Pip" }).id)
        await fixture.store.close()
        let reopened = Self.library(try fixture.reopen())
        // A new sample story is added; the deleted one is not made again.
        #expect(try await reopened.seedStories(seeds + [StorySeed(key: "new.json", story: Self.story("New"))]) == 1)
        #expect(Set(try await reopened.listStories(matching: nil, after: nil, limit: 10).stories.map(\.title)) == ["Clouds", "New"])
    }

    @Test(arguments: Backend.all)
    func nodesSeedingAtOnceAddEachSampleOnce(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let libraries = [Self.library(fixture.store), Self.library(try fixture.anotherNode()), Self.library(try fixture.anotherNode())]
        let seeds = (0..<20).map { StorySeed(key: "sample-\($0).json", story: Self.story("Sample \($0)")) }
        let added = try await withThrowingTaskGroup(of: Int.self) { group in
            for library in libraries { group.addTask { try await library.seedStories(seeds) } }
            return try await group.reduce(0, +)
        }
        #expect(added == 20)
        let titles = try await libraries[2].listStories(matching: nil, after: nil, limit: 100).stories.map(\.title)
        #expect(titles.count == 20 && Set(titles).count == 20)
    }

    @Test(arguments: Backend.all)
    func tenThousandStoriesAreListedInPagesThatSeekTheIndexAndSearchedInOnePass(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let library = Self.library(fixture.store)
        // Seeding writes them in one transaction (10,000 single creates would time fsyncs, not the list).
        let seeds = (0..<10_000).map { StorySeed(key: "bulk-\($0)", story: Self.story("Story number \($0) 100%_done")) }
        #expect(try await library.seedStories(seeds) == 10_000)

        var seen = Set<String>()
        var cursor: StoryCursor?
        var middle: StoryCursor?
        var pages = 0
        repeat {
            let page = try await library.listStories(matching: nil, after: cursor, limit: StoryLibraryIDs.maxPage)
            #expect(page.stories.count <= StoryLibraryIDs.maxPage)
            for entry in page.stories { #expect(seen.insert(entry.id).inserted) }
            cursor = page.next
            pages += 1
            if pages == 10 { middle = cursor }
        } while cursor != nil && pages < 100
        #expect(seen.count == 10_000)
        #expect(pages == 20)
        // A page is one query that seeks the cursor in the index and reads the page's rows in its order:
        // its work is the page's, wherever it is in the library (the database's own plan says so; how long
        // it took says nothing on a shared machine).
        let page = try Self.plan(fixture, after: middle)
        #expect(page.seeksTheIndex && !page.sorts, "the tenth page: \(page.lines)")
        // A limit above the page size is cut to it.
        #expect(try await library.listStories(matching: nil, after: nil, limit: 1_000_000).stories.count == StoryLibraryIDs.maxPage)

        let found = try await library.listStories(matching: "NUMBER 4242 ", after: nil, limit: 50)
        #expect(found.stories.map(\.title) == ["Story number 4242 100%_done"])
        // A search is one query and one pass over the stories (titles are not indexed for a part of them):
        // never a second table or a second pass.
        let search = try Self.plan(fixture, matching: "NUMBER 4242 ")
        #expect(search.passes == 1, "the search: \(search.lines)")
        // LIKE's wildcards in the search are taken as text.
        #expect(try await library.listStories(matching: "2%_", after: nil, limit: 5).stories.isEmpty)
        #expect(try await library.listStories(matching: "9 100%_", after: nil, limit: 5).stories.count == 5)
    }

    /// How the database says it runs the list's query (`storyListQuery`, the store's own) for one page.
    struct Plan {
        var lines: [String]
        /// Finds the cursor in the index (no scan from the start).
        var seeksTheIndex: Bool { lines.contains { $0.hasPrefix("SEARCH stories USING") && $0.contains("INDEX stories_by_change") || $0.contains("Index Cond") } }
        /// How many times a table or an index is read (SQLite's SCAN and SEARCH, PostgreSQL's scans).
        var passes: Int { lines.filter { $0.hasPrefix("SCAN ") || $0.hasPrefix("SEARCH ") || $0.contains(" Scan ") || $0.contains("Scan on") }.count }
        var sorts: Bool { lines.contains { $0.contains("TEMP B-TREE") || $0.trimmingCharacters(in: .whitespaces).hasPrefix("Sort") || $0.contains("-> Sort") } }
    }

    static func plan(_ fixture: StoreFixture, matching: String? = nil, after cursor: StoryCursor? = nil) throws -> Plan {
        switch fixture.backend {
        case .sqlite:
            let (sql, values) = SQLiteRoomStore.storyListQuery(matching: matching, after: cursor, limit: StoryLibraryIDs.maxPage, scope: .everything)
            let database = try SQLiteDatabase(path: fixture.sqlitePath!, readOnly: true)
            let statement = try database.prepare("EXPLAIN QUERY PLAN " + sql)
            try statement.bind(values)
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(3)) }
            return Plan(lines: lines)
        case .postgres:
            let (sql, values) = PostgresRoomStore.storyListQuery(matching: matching, after: cursor, limit: StoryLibraryIDs.maxPage, scope: .everything)
            let connection = try fixture.schema!.admin()
            // The planner's figures for the table as it is now (autovacuum may not have come by yet).
            try connection.query("ANALYZE stories")
            let rows = try connection.query("EXPLAIN " + sql, values)
            return Plan(lines: (0..<rows.count).map { rows.text($0, 0) })
        }
    }
}
