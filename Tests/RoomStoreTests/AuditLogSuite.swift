import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `AuditLog`, held to by every backend alike: rows appended durably and numbered, read
/// newest first by time, action and school a bounded page at a time, never changed, and deleted only by
/// the retention rule.
@Suite("Audit trail, every backend")
struct AuditLogSuite {
    static func log(_ store: any RoomLeases) -> any AuditLog {
        store.offers.audit!
    }

    static func event(_ action: AuditAction, at milliseconds: Int64, target: String = "room:123456", school: String? = nil, actor: AuditActor = AuditActor(kind: .adminToken)) -> AuditEvent {
        AuditEvent(at: ServerTime(milliseconds: milliseconds), actor: actor, action: action, target: target, schoolID: school, address: "192.0.2.7", detail: "json")
    }

    @Test(arguments: Backend.all)
    func rowsAreReadNewestFirstByTimeActionAndSchool(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let log = Self.log(fixture.store)
        let teacher = AuditActor(kind: .account, accountID: "acc_1", login: "ms.ada", role: .teacher)
        let first = try await log.append(Self.event(.readRoomResults, at: 1_000, school: "sch_a", actor: teacher))
        let second = try await log.append(Self.event(.exportCSV, at: 2_000, target: "class:cls_x", school: "sch_b"))
        let third = try await log.append(Self.event(.eraseMember, at: 3_000, target: "class:cls_x/member:mem_y", school: "sch_a"))
        #expect(first.sequence < second.sequence && second.sequence < third.sequence)

        let all = try await log.entries(AuditQuery())
        #expect(all.entries == [third, second, first])
        #expect(all.next == nil)
        #expect(all.entries.last?.event.actor == teacher, "the actor as it was, login and role too")
        #expect(try await log.entries(AuditQuery(action: .exportCSV)).entries == [second])
        #expect(try await log.entries(AuditQuery(schoolID: "sch_a")).entries == [third, first])
        #expect(try await log.entries(AuditQuery(since: ServerTime(milliseconds: 2_000))).entries == [third, second])
        #expect(try await log.entries(AuditQuery(until: ServerTime(milliseconds: 2_000))).entries == [first])
        #expect(try await log.entries(AuditQuery(since: ServerTime(milliseconds: 1_500), until: ServerTime(milliseconds: 2_500))).entries == [second])

        // Pages: two, then the rest, each naming where the next begins.
        let page1 = try await log.entries(AuditQuery(limit: 2))
        #expect(page1.entries == [third, second])
        #expect(page1.next == second.sequence)
        let page2 = try await log.entries(AuditQuery(before: page1.next, limit: 2))
        #expect(page2.entries == [first])
        #expect(page2.next == nil)

        // Durable: another store on the same database reads them.
        if backend == .postgres {
            #expect(try await Self.log(fixture.anotherNode()).entries(AuditQuery()).entries == [third, second, first])
        }
    }

    @Test(arguments: Backend.all)
    func textsAreBoundedAndKeptToOneLine(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let log = Self.log(fixture.store)
        let long = String(repeating: "x", count: 5_000)
        let stored = try await log.append(AuditEvent(
            at: ServerTime(milliseconds: 1), actor: AuditActor(kind: .nobody, login: "a\nb"), action: .signInFailed, target: "account:\r\n" + long,
            address: long, detail: "line\none\u{2028}two" + long
        ))
        let read = try #require(try await log.entries(AuditQuery()).entries.first)
        #expect(read == stored)
        #expect(read.event.target.count == 200 && !read.event.target.contains("\n"))
        #expect(read.event.address.count == 64)
        #expect(read.event.detail.hasPrefix("lineonetwo") && read.event.detail.count == 200)
        #expect(read.event.actor.login == "ab")
    }

    @Test(arguments: Backend.all)
    func rowsAreNeverChangedBehindTheStoresBack(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let log = Self.log(fixture.store)
        let row = try await log.append(Self.event(.deleteClass, at: 1_000, target: "class:cls_x"))
        switch backend {
        case .sqlite:
            let database = try SQLiteDatabase(path: fixture.sqlitePath!)
            #expect(throws: SQLiteError.self) { try database.execute("UPDATE audit_rows SET target = 'class:someone_else'") }
        case .postgres:
            let admin = try fixture.schema!.admin()
            #expect(throws: PostgresError.self) { try admin.query("UPDATE audit_rows SET target = 'class:someone_else'") }
            #expect(throws: PostgresError.self) { try admin.query("DELETE FROM audit_rows") }
            #expect(throws: PostgresError.self) { try admin.query("TRUNCATE audit_rows") }
        }
        #expect(try await log.entries(AuditQuery()).entries == [row], "the row is as it was written")
    }

    @Test(arguments: Backend.all)
    func retentionDeletesOnlyOlderRowsAndNumbersKeepRising(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let log = Self.log(fixture.store)
        _ = try await log.append(Self.event(.signIn, at: 1_000))
        let kept = try await log.append(Self.event(.signOut, at: 3_000))
        #expect(try await log.prune(before: ServerTime(milliseconds: 3_000)) == 1)
        #expect(try await log.prune(before: ServerTime(milliseconds: 3_000)) == 0)
        let later = try await log.append(Self.event(.signIn, at: 500))
        #expect(later.sequence > kept.sequence, "a number is never given twice")
        #expect(try await log.entries(AuditQuery()).entries == [later, kept])
    }

    @Test(arguments: Backend.all)
    func aRowTheDatabaseRefusesIsAFailureNotALoss(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let log = Self.log(fixture.store)
        switch backend {
        case .sqlite:
            try SQLiteDatabase(path: fixture.sqlitePath!).execute("CREATE TRIGGER no_audit BEFORE INSERT ON audit_rows BEGIN SELECT RAISE(ABORT, 'refused'); END")
        case .postgres:
            let admin = try fixture.schema!.admin()
            try admin.query("CREATE FUNCTION no_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
            try admin.query("CREATE TRIGGER no_audit BEFORE INSERT ON audit_rows FOR EACH ROW EXECUTE FUNCTION no_audit()")
        }
        await #expect(throws: StoreFailure.self) { try await log.append(Self.event(.readClassReport, at: 1_000)) }
        #expect(try await log.entries(AuditQuery()).entries.isEmpty)
    }
}
