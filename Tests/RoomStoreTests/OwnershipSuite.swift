import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of ownership, on every backend: what a teacher makes is stored with them and their school,
/// lists answer only the scope asked for (a teacher's own, plus the stories their school shares; a school's;
/// the unowned), and what was stored before accounts stays unowned until an administrator adopts it.
@Suite("Ownership, every backend")
struct OwnershipSuite {
    static let ada = Owner(accountID: "acc_ada", schoolID: "sch_north")
    static let bo = Owner(accountID: "acc_bo", schoolID: "sch_north")
    static let cy = Owner(accountID: "acc_cy", schoolID: "sch_south")

    static func draft(_ name: String, owner: Owner?) -> ClassDraft {
        ClassDraft(name: name, nameKeys: [name.lowercased()], children: [ClassDraft.Child(name: "Kim", avatar: "owl")], owner: owner)
    }

    static func header(_ code: String, owner: Owner?, createdAt: Int64 = 1_000) -> RoomHeader {
        var header = Sample.header(code, createdAt: createdAt)
        header.owner = owner
        return header
    }

    @Test(arguments: Backend.all)
    func classesAreStoredWithTheirOwnerAndListedByScope(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = try #require(fixture.store.offers.classes)
        let adas = try await book.createClass(Self.draft("1A", owner: Self.ada))
        let bos = try await book.createClass(Self.draft("1B", owner: Self.bo))
        let cys = try await book.createClass(Self.draft("1C", owner: Self.cy))
        let old = try await book.createClass(Self.draft("1D", owner: nil))
        #expect(adas.owner == Self.ada)
        #expect(try await book.schoolClass(adas.id)?.owner == Self.ada)
        #expect(try await book.schoolClass(old.id)?.owner == nil)

        #expect(try await book.listClasses(scope: .account("acc_ada", schoolID: "sch_north")).map(\.id) == [adas.id])
        #expect(try await book.listClasses(scope: .school("sch_north")).map(\.id) == [adas.id, bos.id])
        #expect(try await book.listClasses(scope: .school("sch_south")).map(\.id) == [cys.id])
        #expect(try await book.listClasses(scope: .unowned).map(\.id) == [old.id])
        #expect(try await book.listClasses(scope: .everything).count == 4)
        #expect(try await book.listClasses(scope: .account("acc_ada", schoolID: "sch_north")).first?.owner == Self.ada)

        // A change keeps the owner, whatever the draft says.
        var change = Self.draft("1A!", owner: Self.cy)
        change.children = [ClassDraft.Child(id: adas.members[0].id, name: "Kim", avatar: "owl")]
        let changed = try await book.updateClass(adas.id, to: change, basedOn: 1)
        #expect(changed.owner == Self.ada)
    }

    @Test(arguments: Backend.all)
    func roomsAreStoredWithTheirOwnerAndListedByScope(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        try await store.createRoom(Self.header("111111", owner: Self.ada, createdAt: 1_000))
        try await store.createRoom(Self.header("222222", owner: Self.bo, createdAt: 2_000))
        try await store.createRoom(Self.header("333333", owner: Self.cy, createdAt: 3_000))
        try await store.createRoom(Self.header("444444", owner: nil, createdAt: 4_000))
        #expect(try await store.archive(room: "111111")?.header.owner == Self.ada)
        #expect(try await store.archive(room: "444444")?.header.owner == nil)

        #expect(try await store.summaries(scope: .account("acc_ada", schoolID: "sch_north")).map(\.code) == ["111111"])
        #expect(try await store.summaries(scope: .school("sch_north")).map(\.code) == ["222222", "111111"])
        #expect(try await store.summaries(scope: .unowned).map(\.code) == ["444444"])
        #expect(try await store.summaries().map(\.code) == ["444444", "333333", "222222", "111111"])
        #expect(try await store.summaries().first { $0.code == "333333" }?.owner == Self.cy)

        let ownership = try #require(store.offers.ownership)
        #expect(try await ownership.roomOwner("222222") == .some(Self.bo))
        #expect(try await ownership.roomOwner("444444") == .some(nil))
        #expect(try await ownership.roomOwner("999999") == nil)
    }

    @Test(arguments: Backend.all)
    func aTeacherListsTheirOwnStoriesAndThoseTheirSchoolShares(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let library = try #require(fixture.store.offers.library)
        let ownership = try #require(fixture.store.offers.ownership)
        let adas = try await library.createStory(StoryLibrarySuite.story("Ada's"), by: "Ada", owner: Self.ada)
        let bos = try await library.createStory(StoryLibrarySuite.story("Bo's"), by: "Bo", owner: Self.bo)
        let cys = try await library.createStory(StoryLibrarySuite.story("Cy's"), by: "Cy", owner: Self.cy)
        let sample = try await library.createStory(StoryLibrarySuite.story("Sample"), by: "sample")
        #expect(adas.entry.owner == Self.ada)
        #expect(adas.entry.shared == false)
        #expect(sample.entry.owner == nil)

        let ada = OwnerScope.account("acc_ada", schoolID: "sch_north")
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: ada).stories.map(\.id) == [adas.entry.id])

        // Bo shares theirs with the school; Cy shares theirs with another school.
        let shared = try await ownership.setStoryShared(bos.entry.id, true)
        #expect(shared.shared && shared.owner == Self.bo)
        _ = try await ownership.setStoryShared(cys.entry.id, true)
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: ada).stories.map(\.id) == [bos.entry.id, adas.entry.id])
        #expect(try await library.listStories(matching: "bo", after: nil, limit: 10, scope: ada).stories.map(\.id) == [bos.entry.id])
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: .school("sch_south")).stories.map(\.id) == [cys.entry.id])
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: .unowned).stories.map(\.id) == [sample.entry.id])
        // Pages of a scope follow on from each other.
        let first = try await library.listStories(matching: nil, after: nil, limit: 1, scope: ada)
        let second = try await library.listStories(matching: nil, after: first.next, limit: 1, scope: ada)
        #expect(first.stories.map(\.id) + second.stories.map(\.id) == [bos.entry.id, adas.entry.id])
        #expect(second.next == nil)

        // An update keeps the owner and the sharing; sharing can be taken back.
        let updated = try await library.updateStory(bos.entry.id, to: StoryLibrarySuite.story("Bo's, again"), basedOn: 1, by: "Bo")
        #expect(updated.entry.owner == Self.bo && updated.entry.shared)
        #expect(try await library.story(bos.entry.id)?.entry.shared == true)
        _ = try await ownership.setStoryShared(bos.entry.id, false)
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: ada).stories.map(\.id) == [adas.entry.id])
        await #expect(throws: StoryLibraryError.notFound(id: "nothing")) { try await ownership.setStoryShared("nothing", true) }
    }

    @Test(arguments: Backend.all)
    func whatATeacherMadeStaysWithTheSchoolTheyLeft(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        let classes = try #require(store.offers.classes)
        let library = try #require(store.offers.library)
        let adas = try await classes.createClass(Self.draft("1A", owner: Self.ada))
        try await store.createRoom(Self.header("111111", owner: Self.ada))
        let story = try await library.createStory(StoryLibrarySuite.story("Ada's"), by: "Ada", owner: Self.ada)
        _ = try await #require(store.offers.ownership).setStoryShared(story.entry.id, true)

        // Ada moves to South: her lists there hold nothing of North's, which keeps all of it.
        let moved = OwnerScope.account("acc_ada", schoolID: "sch_south")
        #expect(try await classes.listClasses(scope: moved).isEmpty)
        #expect(try await store.summaries(scope: moved).isEmpty)
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: moved).stories.isEmpty)
        #expect(try await classes.listClasses(scope: .school("sch_north")).map(\.id) == [adas.id])
        #expect(try await store.summaries(scope: .school("sch_north")).map(\.code) == ["111111"])
        let bo = OwnerScope.account("acc_bo", schoolID: "sch_north")
        #expect(try await library.listStories(matching: nil, after: nil, limit: 10, scope: bo).stories.map(\.id) == [story.entry.id], "still shared with North")
        // Back in North, it is hers again.
        #expect(try await classes.listClasses(scope: .account("acc_ada", schoolID: "sch_north")).map(\.id) == [adas.id])
    }

    @Test(arguments: Backend.all)
    func aPictureKeepsItsFirstUploaderAsOwner(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let pictures = try #require(fixture.store.offers.pictures)
        let ownership = try #require(fixture.store.offers.ownership)
        var picture = PictureStoreSuite.picture(seed: 3, count: 1_024)
        picture.owner = Self.ada
        try await pictures.storePicture(picture)
        picture.owner = Self.cy
        try await pictures.storePicture(picture)
        #expect(try await ownership.pictureOwner(picture.id) == .some(Self.ada))
        let unowned = PictureStoreSuite.picture(seed: 4, count: 1_024)
        try await pictures.storePicture(unowned)
        #expect(try await ownership.pictureOwner(unowned.id) == .some(nil))
        #expect(try await ownership.pictureOwner(String(repeating: "0", count: 64)) == nil)
    }

    @Test(arguments: Backend.all)
    func whatWasStoredBeforeAccountsIsAdoptedOnceAndOwnedThingsKeepTheirOwner(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        let offers = store.offers
        let book = try #require(offers.classes)
        let library = try #require(offers.library)
        let pictures = try #require(offers.pictures)
        let ownership = try #require(offers.ownership)
        let oldClass = try await book.createClass(Self.draft("Old", owner: nil))
        let cysClass = try await book.createClass(Self.draft("Cy's", owner: Self.cy))
        try await store.createRoom(Self.header("111111", owner: nil))
        try await store.createRoom(Self.header("222222", owner: Self.cy))
        let oldStory = try await library.createStory(StoryLibrarySuite.story("Old"), by: "admin")
        let oldPicture = PictureStoreSuite.picture(seed: 5, count: 1_024)
        try await pictures.storePicture(oldPicture)

        let adopted = try await ownership.adoptUnowned(by: Self.ada)
        #expect(adopted == AdoptedCounts(classes: 1, rooms: 1, stories: 1, pictures: 1))
        #expect(try await book.schoolClass(oldClass.id)?.owner == Self.ada)
        #expect(try await book.schoolClass(cysClass.id)?.owner == Self.cy)
        #expect(try await store.archive(room: "111111")?.header.owner == Self.ada)
        #expect(try await store.archive(room: "222222")?.header.owner == Self.cy)
        #expect(try await library.story(oldStory.entry.id)?.entry.owner == Self.ada)
        #expect(try await ownership.pictureOwner(oldPicture.id) == .some(Self.ada))
        #expect(try await ownership.adoptUnowned(by: Self.bo) == AdoptedCounts(), "nothing is left to adopt")
        #expect(try await book.listClasses(scope: .unowned).isEmpty)
    }
}

/// Migration 9 on a database that was in use: its rows keep everything and have no owner.
@Suite("Ownership migration, SQLite")
struct OwnershipMigrationTests {
    @Test
    func rowsStoredAtVersion8AreUnownedAfterTheMigration() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-own-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SQLiteDatabase(path: folder.appendingPathComponent("rooms.sqlite").path)
        try Migrations.migrate(database, to: 8, now: 1)
        try database.execute("INSERT INTO classes (id, name, version, created_at, changed_at) VALUES ('cls_old', 'Old', 3, 1, 2)")
        try database.execute("""
            INSERT INTO stories (id, title, voice, questions, sentences, document, version, created_at, updated_at, updated_by)
            VALUES ('old', 'Old', 'en', 1, 1, '{}', 1, 1, 1, 'admin')
            """)
        let applied = try Migrations.migrate(database, now: 2)
        #expect(applied.contains(9))
        #expect(try database.integer("SELECT count(*) FROM classes WHERE owner_id IS NULL AND school_id IS NULL AND version = 3") == 1)
        #expect(try database.integer("SELECT count(*) FROM stories WHERE owner_id IS NULL AND shared = 0") == 1)
    }
}
