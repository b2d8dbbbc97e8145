import Foundation
import Testing
@testable import PostgresStorage
@testable import StoryCircleCore

/// A lease's holder keeps an advisory lock on its epoch on its lease connection: when the holder's process
/// dies its sessions end, and another node may take the room at once; while the holder lives (paused,
/// slow) its session keeps the lock and the room waits for the expiry. Each store here is one node, with
/// its own `application_name` so that the test can end exactly its sessions, as a `kill -9` would.
@Suite("PostgreSQL lease sessions", .enabled(if: !TestPostgres.optedOut, "STORYCIRCLE_TEST_POSTGRES=skip"))
struct PostgresLeaseSessionTests {
    private struct Nodes {
        let schema: TestPostgres.Schema
        let a: PostgresRoomStore
        let b: PostgresRoomStore
        let applicationA: String
    }

    private static func nodes() throws -> Nodes {
        let applicationA = "sc_a_" + UUID().uuidString.prefix(8).lowercased()
        let schema = try TestPostgres.freshSchema(application: applicationA)
        let url = try #require(schema.settings.url)
        let urlB = url.replacingOccurrences(of: "application_name=\(applicationA)", with: "application_name=sc_b_\(applicationA.dropFirst(5))")
        return Nodes(schema: schema, a: try PostgresRoomStore(schema.settings), b: try PostgresRoomStore(try #require(PostgresSettings(database: urlB))), applicationA: applicationA)
    }

    /// Ends every session of node a, as its process's death does.
    private static func endSessions(of application: String) throws -> Int {
        try TestPostgres.admin().query("""
            WITH mine AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE application_name = $1::text)
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM mine
            """, [.text(application)]).int(0, 0)
    }

    /// The lease locks held in the schema, by anyone.
    private static func leaseLocks(_ schema: TestPostgres.Schema) throws -> Int {
        try schema.admin().query("""
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2
                AND classid = (hashtext(current_schema() || '.storycircle.room_lease'))::oid
            """).int(0, 0)
    }

    private static func isHeld(_ store: PostgresRoomStore, _ room: String, by holder: String) async -> Bool {
        do {
            _ = try await store.acquire(room: room, node: "b", for: .seconds(60))
            return false
        } catch {
            return error as? RoomLeaseError == .held(room: room, by: holder)
        }
    }

    @Test func aDeadHoldersRoomIsTakenAtOnceAndALivingHoldersIsNot() async throws {
        let nodes = try Self.nodes()
        defer { closeAfterTest(nodes.a); closeAfterTest(nodes.b); nodes.schema.drop() }
        try await nodes.a.createRoom(Sample.header("123456"))
        let leaseA = try await nodes.a.acquire(room: "123456", node: "a", for: .seconds(60))
        #expect(await Self.isHeld(nodes.b, "123456", by: "a"), "a lives: its lease of a minute stands")

        #expect(try Self.endSessions(of: nodes.applicationA) > 0)
        let leaseB = try await nodes.b.acquire(room: "123456", node: "b", for: .seconds(60))
        #expect(leaseB.epoch > leaseA.epoch, "taken at once, under a new epoch, 59 s before the expiry")
        #expect(try await nodes.a.renew([leaseA], for: .seconds(60)).isEmpty, "a's lease is over")
        #expect(try await nodes.b.renew(leaseB, for: .seconds(60)).epoch == leaseB.epoch)
    }

    /// The holder lives but the session that held its lock ended (its lease connection was cut or
    /// replaced): its other sessions, which carry its name, still show it alive, so the room waits for the
    /// expiry; once every session of the node has ended, the room is taken at once.
    @Test func aLivingHolderWhoseLockSessionAloneEndedKeepsItsRoom() async throws {
        let nameA = "a-" + UUID().uuidString.prefix(8).lowercased()
        let schema = try TestPostgres.freshSchema(application: "sc_" + UUID().uuidString.prefix(8).lowercased())
        var settingsA = schema.settings
        settingsA.node = nameA
        let a = try PostgresRoomStore(settingsA)
        let b = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(a); closeAfterTest(b); schema.drop() }
        try await a.createRoom(Sample.header("123456"))
        _ = try await a.acquire(room: "123456", node: nameA, for: .seconds(60))

        let admin = try TestPostgres.admin()
        let lockSession = try admin.query("""
            SELECT count(*) FILTER (WHERE pg_terminate_backend(l.pid, 10000)) FROM pg_locks l
            JOIN pg_stat_activity s ON s.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND s.application_name = $1::text
            """, [.text("storycircle/" + nameA)]).int(0, 0)
        #expect(lockSession == 1, "the lease connection's session alone ended")
        #expect(await Self.isHeld(b, "123456", by: nameA), "a still lives (its writer's session): its lease of a minute stands")

        let ended = try admin.query("""
            WITH mine AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE application_name = $1::text)
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM mine
            """, [.text("storycircle/" + nameA)]).int(0, 0)
        #expect(ended > 0, "every session of a ended, as its process's death ends them")
        #expect(try await b.acquire(room: "123456", node: "b", for: .seconds(60)).node == "b", "taken at once")
    }

    @Test func aWriteUnderTheDeadHoldersLeaseIsRefused() async throws {
        let nodes = try Self.nodes()
        defer { closeAfterTest(nodes.a); closeAfterTest(nodes.b); nodes.schema.drop() }
        try await nodes.a.createRoom(Sample.header("123456"))
        try await appendAndWait(nodes.a, Array(Sample.records.prefix(2)), room: "123456")
        let leaseA = try await nodes.a.acquire(room: "123456", node: "a", for: .seconds(60))
        #expect(try Self.endSessions(of: nodes.applicationA) > 0)
        _ = try await nodes.b.acquire(room: "123456", node: "b", for: .seconds(60))
        let refusal: (any Error)? = await withCheckedContinuation { done in
            nodes.a.append(Sample.answer("p1"), under: leaseA) { error in done.resume(returning: error) }
        }
        #expect(refusal as? RoomLeaseError == .lost(room: "123456", epoch: leaseA.epoch))
    }

    @Test func aHolderWhoseConnectionWasReplacedTakesItsLockAgainAtItsNextRenewal() async throws {
        let nodes = try Self.nodes()
        defer { closeAfterTest(nodes.a); closeAfterTest(nodes.b); nodes.schema.drop() }
        try await nodes.a.createRoom(Sample.header("123456"))
        let lease = try await nodes.a.acquire(room: "123456", node: "a", for: .seconds(60))
        #expect(try Self.leaseLocks(nodes.schema) == 1)
        // a's connection drops and a reconnects (it lives): its renewal takes the lock again, once.
        #expect(try Self.endSessions(of: nodes.applicationA) > 0)
        _ = try await nodes.a.renew(lease, for: .seconds(60))
        _ = try await nodes.a.renew(lease, for: .seconds(60))
        #expect(try Self.leaseLocks(nodes.schema) == 1, "taken again, and not stacked by later renewals")
        #expect(await Self.isHeld(nodes.b, "123456", by: "a"))
    }

    /// After PostgreSQL restarts, or a standby is promoted, every lock is gone while the holders may live:
    /// a lock counts only on the server run (postmaster start) that saw it taken. Moving `locked_on` back
    /// stands for such a lease; until its holder renews, its room waits for the expiry.
    @Test func aLockTakenOnAnotherServerRunDoesNotEndTheLeaseEarly() async throws {
        let nodes = try Self.nodes()
        defer { closeAfterTest(nodes.a); closeAfterTest(nodes.b); nodes.schema.drop() }
        try await nodes.a.createRoom(Sample.header("123456"))
        let lease = try await nodes.a.acquire(room: "123456", node: "a", for: .seconds(60))
        try nodes.schema.admin().query("UPDATE room_owners SET locked_on = locked_on - interval '1 hour'")
        #expect(try Self.endSessions(of: nodes.applicationA) > 0)
        #expect(await Self.isHeld(nodes.b, "123456", by: "a"), "the lock was not taken on this server run: the expiry decides")
        _ = try await nodes.a.renew(lease, for: .seconds(60))
        #expect(await Self.isHeld(nodes.b, "123456", by: "a"), "renewed and locked again on this run")
        #expect(try Self.endSessions(of: nodes.applicationA) > 0)
        _ = try await nodes.b.acquire(room: "123456", node: "b", for: .seconds(60))
    }

    @Test func releasedAndLostLeasesLetTheirLocksGo() async throws {
        let nodes = try Self.nodes()
        defer { closeAfterTest(nodes.a); closeAfterTest(nodes.b); nodes.schema.drop() }
        try await nodes.a.createRoom(Sample.header("111111"))
        try await nodes.a.createRoom(Sample.header("222222"))
        let first = try await nodes.a.acquire(room: "111111", node: "a", for: .seconds(60))
        let second = try await nodes.a.acquire(room: "222222", node: "a", for: .seconds(60))
        #expect(try Self.leaseLocks(nodes.schema) == 2)
        try await nodes.a.release(first)
        #expect(try Self.leaseLocks(nodes.schema) == 1)
        // The second lapses (a was paused past it, say) and b takes the room; a's next renewal finds it
        // lost and lets its lock go.
        try nodes.schema.admin().query("UPDATE room_owners SET expires_at = now() WHERE room_code = '222222'")
        _ = try await nodes.b.acquire(room: "222222", node: "b", for: .seconds(60))
        #expect(try Self.leaseLocks(nodes.schema) == 2, "a's stale lock and b's")
        #expect(try await nodes.a.renew([second], for: .seconds(60)).isEmpty)
        #expect(try Self.leaseLocks(nodes.schema) == 1, "only b's")
    }
}
