import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// A class's name is unique among its owner's classes, on every backend: two teachers, in one school or
/// two, may both have a "4B"; one teacher may not have two. An unowned class's name stays unique among all
/// classes, so adopting it never meets a name its new owner has.
@Suite("Class names, every backend")
struct ClassNameSuite {
    static let ada = OwnershipSuite.ada
    static let bo = OwnershipSuite.bo
    static let cy = OwnershipSuite.cy

    static func draft(_ name: String, owner: Owner?) -> ClassDraft {
        ClassDraft(name: name, nameKeys: [name.lowercased()], children: [], owner: owner)
    }

    @Test(arguments: Backend.all)
    func teachersEachHaveTheirOwnClassOfOneNameButNotTwo(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = try #require(fixture.store.offers.classes)
        let adas = try await book.createClass(Self.draft("4B", owner: Self.ada))
        _ = try await book.createClass(Self.draft("4B", owner: Self.bo))
        _ = try await book.createClass(Self.draft("4B", owner: Self.cy))
        await #expect(throws: ClassBookError.nameTaken(name: "4b")) { try await book.createClass(Self.draft("4b", owner: Self.ada)) }
        let other = try await book.createClass(Self.draft("5A", owner: Self.ada))
        await #expect(throws: ClassBookError.nameTaken(name: "4B")) { try await book.updateClass(other.id, to: Self.draft("4B", owner: Self.ada), basedOn: 1) }
        _ = try await book.updateClass(adas.id, to: Self.draft("4B", owner: Self.ada), basedOn: 1)
        #expect(try await book.listClasses().filter { $0.name == "4B" }.count == 3)
    }

    @Test(arguments: Backend.all)
    func anUnownedClassNameStaysUniqueAmongAllAndMovesWithItsAdoption(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = try #require(fixture.store.offers.classes)
        let ownership = try #require(fixture.store.offers.ownership)
        _ = try await book.createClass(Self.draft("4B", owner: Self.ada))
        await #expect(throws: ClassBookError.nameTaken(name: "4B")) { try await book.createClass(Self.draft("4B", owner: nil)) }
        let old = try await book.createClass(Self.draft("Old", owner: nil))
        await #expect(throws: ClassBookError.nameTaken(name: "old")) { try await book.createClass(Self.draft("old", owner: Self.cy)) }
        await #expect(throws: ClassBookError.nameTaken(name: "OLD")) { try await book.createClass(Self.draft("OLD", owner: nil)) }

        #expect(try await ownership.adoptUnowned(by: Self.ada).classes == 1)
        // Now Ada's: Cy may have an "Old" of their own, Ada not a second one.
        _ = try await book.createClass(Self.draft("Old", owner: Self.cy))
        await #expect(throws: ClassBookError.nameTaken(name: "old")) { try await book.createClass(Self.draft("old", owner: Self.ada)) }
        _ = try await book.updateClass(old.id, to: Self.draft("Old", owner: nil), basedOn: 1)
    }

    /// Classes stored at step 11 (one name key table for the whole store) keep their names, owned and
    /// unowned, and the rule per owner holds on them once migrated.
    @Test(arguments: Backend.all)
    func classesStoredBeforeTheRulePerOwnerKeepTheirNames(_ backend: Backend) async throws {
        let old = try OldDatabase(backend, at: 11)
        defer { old.remove() }
        try old.execute("INSERT INTO classes (id, name, version, created_at, changed_at, owner_id, school_id) VALUES ('cls_ada', '4B', 1, 0, 0, 'acc_ada', 'sch_north')")
        try old.execute("INSERT INTO classes (id, name, version, created_at, changed_at) VALUES ('cls_old', 'Old', 1, 0, 0)")
        try old.execute("INSERT INTO class_name_keys (key, class_id) VALUES ('4b', 'cls_ada')")
        try old.execute("INSERT INTO class_name_keys (key, class_id) VALUES ('old', 'cls_old')")
        let store = try old.open()
        defer { closeAfterTest(store) }
        let book = try #require(store.offers.classes)
        #expect(try await book.listClasses().map(\.name) == ["4B", "Old"])
        await #expect(throws: ClassBookError.nameTaken(name: "4B")) { try await book.createClass(Self.draft("4B", owner: Self.ada)) }
        await #expect(throws: ClassBookError.nameTaken(name: "Old")) { try await book.createClass(Self.draft("Old", owner: Self.bo)) }
        _ = try await book.createClass(Self.draft("4B", owner: Self.bo))
        try await book.deleteClass("cls_ada")
        _ = try await book.createClass(Self.draft("4B", owner: Self.ada))
    }
}
