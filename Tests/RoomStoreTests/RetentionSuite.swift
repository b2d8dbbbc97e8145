import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `RetentionBook`, on every backend: a school's own rules stored and replaced (the old ones
/// answered, for the audit row), and each purge holding every row to its own school's cutoff, the fallback
/// for every other school and for things of no school, with the counts per school.
@Suite("Retention per school, every backend")
struct RetentionSuite {
    static let north = Owner(accountID: "acc_ada", schoolID: "sch_north")
    static let south = Owner(accountID: "acc_cy", schoolID: "sch_south")

    static func book(_ fixture: StoreFixture) throws -> any RetentionBook {
        try #require(fixture.store.offers.retention)
    }

    /// Two schools, `sch_north` and `sch_south`, in the accounts' table (a school's rules name it).
    static func schools(_ fixture: StoreFixture) async throws {
        let accounts = try #require(fixture.store.offers.accounts)
        _ = try await accounts.createSchool(name: "North", id: "sch_north")
        _ = try await accounts.createSchool(name: "South", id: "sch_south")
    }

    @Test(arguments: Backend.all)
    func aSchoolsRulesAreStoredReplacedAndCleared(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        try await Self.schools(fixture)
        let book = try Self.book(fixture)
        #expect(try await book.schoolRetentions().isEmpty, "no school chose anything: the defaults everywhere")

        let first = SchoolRetention([.rooms: 7, .audit: 400, .classes: 0])
        #expect(try await book.setRetention(first, ofSchool: "sch_north") == SchoolRetention())
        #expect(try await book.schoolRetentions() == ["sch_north": first])
        #expect(try await book.retention(ofSchool: "sch_north") == first)
        #expect(try await book.retention(ofSchool: "sch_south") == SchoolRetention())

        let second = SchoolRetention([.pictures: 90])
        #expect(try await book.setRetention(second, ofSchool: "sch_north") == first, "answers what it replaced")
        _ = try await book.setRetention(SchoolRetention([.rooms: 60]), ofSchool: "sch_south")
        #expect(try await book.schoolRetentions() == ["sch_north": second, "sch_south": SchoolRetention([.rooms: 60])])
        #expect(try await book.setRetention(SchoolRetention(), ofSchool: "sch_north") == second)
        #expect(try await book.schoolRetentions() == ["sch_south": SchoolRetention([.rooms: 60])], "an empty rule: the defaults again")
    }

    @Test(arguments: Backend.all)
    func roomsGoByTheirOwnSchoolsCutoff(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        let book = try Self.book(fixture)
        try await store.createRoom(OwnershipSuite.header("710001", owner: Self.north, createdAt: 1_000))
        try await store.createRoom(OwnershipSuite.header("710002", owner: Self.south, createdAt: 1_000))
        try await store.createRoom(OwnershipSuite.header("710003", owner: nil, createdAt: 1_000))
        try await store.createRoom(OwnershipSuite.header("710004", owner: Self.north, createdAt: 5_000))

        // North's rule lets rooms older than 2 000 go; the fallback keeps everything else.
        let north = RetentionCutoffs(fallback: RetentionCutoffs.never, schools: ["sch_north": ServerTime(milliseconds: 2_000)])
        #expect(try await book.purgeRooms(north) == ["sch_north": 1])
        #expect(try await store.archive(room: "710001") == nil)
        for code in ["710002", "710003", "710004"] { #expect(try await store.archive(room: code) != nil) }

        // South keeps its rooms; the fallback lets every other room older than 2 000 go.
        let others = RetentionCutoffs(fallback: ServerTime(milliseconds: 2_000), schools: ["sch_south": RetentionCutoffs.never])
        #expect(try await book.purgeRooms(others) == [nil: 1])
        #expect(try await store.archive(room: "710003") == nil)
        for code in ["710002", "710004"] { #expect(try await store.archive(room: code) != nil) }
        #expect(try await book.purgeRooms(RetentionCutoffs(fallback: ServerTime(milliseconds: 9_000))) == ["sch_south": 1, "sch_north": 1])
    }

    @Test(arguments: Backend.all)
    func classesGoByTheirOwnSchoolsCutoff(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let classes = try #require(fixture.store.offers.classes)
        let book = try Self.book(fixture)
        let northern = try await classes.createClass(OwnershipSuite.draft("1A", owner: Self.north))
        let southern = try await classes.createClass(OwnershipSuite.draft("1B", owner: Self.south))
        let later = SQLiteRoomStore.now() + 60_000

        #expect(try await book.purgeClasses(RetentionCutoffs(fallback: later, schools: ["sch_south": RetentionCutoffs.never])) == ["sch_north": 1])
        #expect(try await classes.schoolClass(northern.id) == nil)
        #expect(try await classes.schoolClass(southern.id) != nil, "south keeps its classes")
    }

    @Test(arguments: Backend.all)
    func auditRowsGoByTheirOwnSchoolsCutoff(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let log = try #require(fixture.store.offers.audit)
        let book = try Self.book(fixture)
        for school in ["sch_north", "sch_south", nil] {
            try await log.append(AuditEvent(at: ServerTime(milliseconds: 1_000), actor: AuditActor(kind: .adminToken), action: .readClassReport, target: "class:c", schoolID: school, address: "x"))
        }
        let kept = try await log.append(AuditEvent(at: ServerTime(milliseconds: 5_000), actor: AuditActor(kind: .adminToken), action: .readClassReport, target: "class:c", address: "x"))

        let cutoffs = RetentionCutoffs(fallback: ServerTime(milliseconds: 2_000), schools: ["sch_south": ServerTime(milliseconds: 500)])
        #expect(try await book.pruneAudit(cutoffs) == ["sch_north": 1, nil: 1])
        #expect(try await log.entries(AuditQuery()).entries.map(\.event.schoolID) == [nil, "sch_south"])
        #expect(try await log.entries(AuditQuery()).entries.first == kept)
    }

    /// Every node sweeps: two sweeping at once delete each row once between them, so the audit rows of their
    /// counts add up to what was there, never more.
    @Test(arguments: Backend.all)
    func twoNodesSweepingAtOnceCountEachDeletionOnce(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        for index in 0..<40 {
            try await fixture.store.createRoom(OwnershipSuite.header(String(720_000 + index), owner: index.isMultiple(of: 2) ? Self.north : nil, createdAt: 1_000))
        }
        let one = try Self.book(fixture)
        let other = try #require(try fixture.anotherNode().offers.retention)
        let cutoffs = RetentionCutoffs(fallback: ServerTime(milliseconds: 2_000))
        async let first = one.purgeRooms(cutoffs)
        async let second = other.purgeRooms(cutoffs)
        let counts = try await [first, second]
        #expect(counts.map { $0["sch_north"] ?? 0 }.reduce(0, +) == 20)
        #expect(counts.map { $0[nil] ?? 0 }.reduce(0, +) == 20)
        #expect(try await fixture.store.summaries().isEmpty)
    }
}
