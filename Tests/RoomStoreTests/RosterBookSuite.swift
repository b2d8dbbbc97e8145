import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `RosterBook`, held to by every backend alike: an import is one transaction (all of it or
/// nothing), a re-import of the same roster changes nothing, a changed one changes things in place, and a
/// plan made stale by a teacher's change is refused whole. The rosters are the integration tests' bundles
/// (`Tests/Integration/fixtures/oneroster`).
@Suite("Roster imports, every backend", .serialized)
struct RosterBookSuite {
    /// Names compared in lower case (the rules' own folding is tested in the core).
    struct PlainNames: ConfusableSkeleton {
        func foldCase(_ text: String) -> String { text.lowercased() }
        func skeleton(_ text: String) -> String { text.lowercased() }
    }

    static func bundle(_ name: String) throws -> OneRoster {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Integration/fixtures/oneroster/\(name)")
        var files: OneRoster.Files = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[file] = Array(try Data(contentsOf: folder.appendingPathComponent(file)))
        }
        return try OneRoster.read(files).get()
    }

    static func imported(_ name: String, into book: any RosterBook) async throws -> RosterPlan {
        let plan = try RosterPlanner.plan(bundle(name), state: await book.rosterState(), authority: .district, unicode: PlainNames()).get()
        try await book.applyRoster(plan)
        return plan
    }

    static func classes(_ fixture: StoreFixture) async throws -> [String: [String]] {
        var named: [String: [String]] = [:]
        for entry in try await fixture.store.offers.classes!.listClasses() {
            named[entry.name] = try await fixture.store.offers.classes!.schoolClass(entry.id)?.members.map(\.name)
        }
        return named
    }

    @Test(arguments: Backend.all)
    func anImportMakesSchoolsTeachersAndClassesAndTheSameRosterAgainChangesNothing(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = fixture.store.offers.roster!
        let plan = try await Self.imported("sample", into: book)
        #expect(plan.counts.schoolsCreated == 2 && plan.counts.teachersCreated == 3 && plan.counts.classesCreated == 3 && plan.counts.childrenAdded == 10)
        let accounts = fixture.store.offers.accounts!
        #expect(try await accounts.listSchools().map(\.name) == ["Brookside Primary", "Hillside Primary"])
        let ana = try #require(try await accounts.account(login: "ana.lima"))
        #expect(ana.role == .teacher && ana.passwordHash == nil && ana.displayName == "Ana Lima")
        #expect(try await Self.classes(fixture) == [
            "1B Reading": ["Maya R.", "Leo B.", "Zoë K.", "Amir H."],
            "2A Stories": ["Maya Rivera", "Sam O.", "Maya Rossi"],
            "Kindergarten Circle": ["Lena B.", "Yuki T.", "Noah D."],
        ])
        let state = try await book.rosterState()
        #expect(state.links.count == plan.links.count && state.classes.count == 3)
        let again = try RosterPlanner.plan(Self.bundle("sample"), state: state, authority: .district, unicode: PlainNames()).get()
        #expect(again.classWrites.isEmpty && again.newAccounts.isEmpty && again.accountUpdates.isEmpty && again.links.isEmpty && again.newSchools.isEmpty)
    }

    @Test(arguments: Backend.all)
    func aChangedRosterChangesTheClassesInPlaceAndKeepsTheMembersIds(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = fixture.store.offers.roster!
        _ = try await Self.imported("sample", into: book)
        let classBook = fixture.store.offers.classes!
        let before = try #require(try await classBook.listClasses().first { $0.name == "1B Reading" })
        let maya = try #require(try await classBook.schoolClass(before.id)?.members.first)
        let plan = try await Self.imported("changed", into: book)
        #expect(plan.counts.schoolsRenamed == 1 && plan.counts.childrenRemoved == 1 && plan.counts.childrenAdded == 1 && plan.counts.classesUpdated == 1)
        let after = try #require(try await classBook.schoolClass(before.id))
        #expect(after.name == "1B Readers" && after.version == before.version + 1)
        #expect(after.members.map(\.name) == ["Maya R.", "Zoë K.", "Amir H.", "Ida N."])
        #expect(after.members.first == maya, "a child keeps their id, name and picture")
        #expect(try await fixture.store.offers.accounts!.listSchools().map(\.name) == ["Brookside Elementary", "Hillside Primary"])
    }

    @Test(arguments: Backend.all)
    func anImportThatFailsHalfWayStoresNothing(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = fixture.store.offers.roster!
        let plan = try RosterPlanner.plan(Self.bundle("sample"), state: await book.rosterState(), authority: .district, unicode: PlainNames()).get()
        // Meanwhile someone takes the login of the last teacher the plan makes.
        let accounts = fixture.store.offers.accounts!
        let school = try await accounts.createSchool(name: "Elsewhere")
        _ = try await accounts.createAccount(AccountDraft(login: "chi.okafor", displayName: "Someone", role: .teacher, schoolID: school.id))
        await #expect(throws: RosterBookError.loginTaken(login: "chi.okafor")) { try await book.applyRoster(plan) }
        #expect(try await accounts.listSchools().map(\.name) == ["Elsewhere"])
        #expect(try await accounts.listAccounts(schoolID: nil).map(\.login) == ["chi.okafor"])
        #expect(try await fixture.store.offers.classes!.listClasses().isEmpty)
        #expect(try await book.rosterState().links.isEmpty)
    }

    @Test(arguments: Backend.all)
    func aPlanMadeStaleByATeachersChangeIsRefusedWhole(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = fixture.store.offers.roster!
        _ = try await Self.imported("sample", into: book)
        let plan = try RosterPlanner.plan(Self.bundle("changed"), state: await book.rosterState(), authority: .district, unicode: PlainNames()).get()
        let classBook = fixture.store.offers.classes!
        let entry = try #require(try await classBook.listClasses().first { $0.name == "1B Reading" })
        let current = try #require(try await classBook.schoolClass(entry.id))
        let children = current.members.map { ClassDraft.Child(id: $0.id, name: $0.name, avatar: $0.avatar) }
        _ = try await classBook.updateClass(entry.id, to: ClassDraft(name: "1B Reading", nameKeys: ["1b reading"], children: children), basedOn: current.version)
        await #expect(throws: RosterBookError.changed(id: entry.id)) { try await book.applyRoster(plan) }
        #expect(try await fixture.store.offers.accounts!.listSchools().map(\.name) == ["Brookside Primary", "Hillside Primary"], "the rename went with the rest")
    }

    /// The local ids the roster's links name.
    static func linked(_ book: any RosterBook) async throws -> Set<String> {
        Set(try await book.rosterState().links.map(\.localID))
    }

    /// A link names a child by their school's own identifier, so it goes in the same transaction as what it
    /// names, whichever way that goes: one child erased, a class deleted, a child taken out and purged at the
    /// end of the retention period, an unused class purged.
    @Test(arguments: Backend.all)
    func noLinkOutlivesTheChildOrClassItNames(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = fixture.store.offers.roster!
        _ = try await Self.imported("sample", into: book)
        let classBook = fixture.store.offers.classes!
        let childData = fixture.store.offers.childData!
        var named: [String: SchoolClass] = [:]
        for entry in try await classBook.listClasses() { named[entry.name] = try await classBook.schoolClass(entry.id) }
        let reading = try #require(named["1B Reading"])
        let stories = try #require(named["2A Stories"])
        let circle = try #require(named["Kindergarten Circle"])
        let links = try await book.rosterState().links
        let maya = reading.members[0].id
        #expect(Set(links.filter { $0.localID == maya }.map(\.kind)) == [.member, .enrollment])

        // One child erased.
        try await classBook.eraseMember(maya, ofClass: reading.id)
        #expect(try await !Self.linked(book).contains(maya))
        #expect(try await Self.linked(book).contains(reading.members[1].id), "the others keep theirs")

        // A class deleted: its link and every member's.
        try await classBook.deleteClass(circle.id)
        let circleIDs = Set([circle.id] + circle.members.map(\.id))
        #expect(try await Self.linked(book).isDisjoint(with: circleIDs))

        // A child taken out by hand, then purged at the end of the retention period.
        let sam = try #require(stories.members.first { $0.name == "Sam O." })
        let staying = stories.members.filter { $0.id != sam.id }.map { ClassDraft.Child(id: $0.id, name: $0.name, avatar: $0.avatar) }
        _ = try await classBook.updateClass(stories.id, to: ClassDraft(name: stories.name, nameKeys: ["2a stories"], children: staying), basedOn: stories.version)
        #expect(try await Self.linked(book).contains(sam.id), "taken out is not yet erased")
        #expect(try await childData.purgeRemovedMembers(removedBefore: PostgresRoomStore.now() + 60_000) == 1)
        #expect(try await !Self.linked(book).contains(sam.id))

        // The unused classes purged: no class, member or enrolment link is left, the teachers' and schools' are.
        #expect(try await childData.purgeClasses(unusedSince: PostgresRoomStore.now() + 60_000) == 2)
        let left = try await book.rosterState().links
        #expect(!left.isEmpty && left.allSatisfy { $0.kind == .teacher || $0.kind == .school })
    }
}
