import Foundation
import Glibc
import Testing
@testable import PostgresStorage
@testable import StoryCircleCore

/// What a highly available database (a primary, a synchronous standby, a failover between them) asks of
/// the store, tested without Patroni: the nodes are given every member in libpq's multi-host URL with
/// `target_session_attrs=read-write`; a server that is not (any longer) the primary is treated like a
/// lost connection, so the next connection finds the primary wherever it is; while no server takes
/// writes nothing is acknowledged; and once one does, the store carries on by itself.
@Suite("PostgreSQL: a primary that changes")
struct PostgresPrimaryChangeErrorTests {
    @Test func theErrorsOfAServerThatIsNotThePrimaryCountAsALostConnection() {
        for state in ["25006", "57P01", "57P02", "57P03", "08006", "08001", "08003"] {
            #expect(PostgresError.meansServerGone(state), "\(state)")
        }
        for state in ["23505", "23503", "22021", "40001", "40P01", "53100", "42P01", "57014"] as [String?] + [nil] {
            #expect(!PostgresError.meansServerGone(state), "\(state ?? "nil")")
        }
    }

    @Test func aMultiHostURLKeepsItsPasswordOutOfMessages() {
        let url = "postgresql://storycircle:s3cret@pg1:5432,pg2:5432/storycircle?target_session_attrs=read-write"
        #expect(PostgresSettings.redact(url) == "postgresql://storycircle:***@pg1:5432,pg2:5432/storycircle?target_session_attrs=read-write")
        let parameters = PostgresSettings(database: url)!.connectionParameters
        #expect(parameters.last?.keyword == "dbname" && parameters.last?.value == url, "libpq reads the hosts from the URL itself")
        // Each unreachable host costs its connect timeout, so a dead first member must not cost long.
        #expect(parameters.first { $0.keyword == "connect_timeout" }.map { Int($0.value)! <= 3 } ?? true)
    }
}

@Suite("PostgreSQL: a primary that changes, on a server", .enabled(if: !TestPostgres.optedOut, "STORYCIRCLE_TEST_POSTGRES=skip"))
struct PostgresPrimaryChangeTests {
    /// The test server's URL with a host in front that refuses connections (a port nothing listens on),
    /// as a node sees a cluster whose first member's machine is gone, and `target_session_attrs`.
    private static func withDeadFirstHost(_ url: String) throws -> String {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let port: UInt16 = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                _ = bind(listener, raw, length)
                _ = getsockname(listener, raw, &length)
            }
            return UInt16(bigEndian: pointer.pointee.sin_port)
        }
        // Bound, then closed without listening: connecting to it is refused at once.
        close(listener)
        let query = try #require(url.split(separator: "?", maxSplits: 1).last.map(String.init), "the test URL has a query")
        var items = query.split(separator: "&").map(String.init)
        let hostIndex = try #require(items.firstIndex { $0.hasPrefix("host=") }, "the test URL names its host as ?host=…: \(url)")
        let given = String(items[hostIndex].dropFirst("host=".count))
        items[hostIndex] = "host=127.0.0.1,\(given)"
        let portIndex = items.firstIndex { $0.hasPrefix("port=") }
        let givenPort = portIndex.map { String(items[$0].dropFirst("port=".count)) } ?? "5432"
        if let portIndex { items.remove(at: portIndex) }
        items.append("port=\(port),\(givenPort)")
        items.append("target_session_attrs=read-write")
        return String(url.split(separator: "?", maxSplits: 1)[0]) + "?" + items.joined(separator: "&")
    }

    /// A deferred trigger that fails the first `times` COMMITs with 25006, as a server that has turned
    /// read-only under a session answers it.
    private static func refuseCommitsAsReadOnly(_ schema: TestPostgres.Schema, times: Int) throws {
        let admin = try schema.admin()
        try admin.query("CREATE SEQUENCE read_only_commits")
        try admin.query("CREATE SEQUENCE read_only_refusals")
        try admin.query("""
            CREATE FUNCTION refuse_as_read_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('read_only_commits') <= \(times) THEN
                    PERFORM nextval('read_only_refusals');
                    RAISE EXCEPTION 'cannot execute INSERT in a read-only transaction' USING ERRCODE = 'read_only_sql_transaction';
                END IF;
                RETURN NULL;
            END $$
            """)
        try admin.query("""
            CREATE CONSTRAINT TRIGGER refuse_as_read_only AFTER INSERT ON answers
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_as_read_only()
            """)
    }

    @Test func aMultiHostURLWhoseFirstHostIsDeadReachesTheNextAndWrites() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let url = try Self.withDeadFirstHost(schema.settings.url!)
        let store = try PostgresRoomStore(try #require(PostgresSettings(database: url)))
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, Sample.records, room: "123456")
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))
    }

    @Test func aReadOnlySessionIsTreatedAsALostConnection() throws {
        let connection = try TestPostgres.admin()
        try connection.execute("SET default_transaction_read_only = on")
        #expect(performing: { try connection.query("CREATE TEMPORARY TABLE t (x int)") }, throws: { error in
            let error = error as? PostgresError
            return error?.sqlState == "25006" && error?.connectionLost == true
        })
    }

    @Test func aBatchRefusedAsReadOnlyIsRetriedOnAFreshConnectionAndStoredOnce() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, Array(Sample.records.prefix(5)), room: "123456")
        try Self.refuseCommitsAsReadOnly(schema, times: 1)

        let outcomes = await appendAll(store, [(Sample.answer("p1"), room: "123456"), (Sample.answer("p2", option: 0), room: "123456")])
        #expect(outcomes.allSatisfy { $0 == nil }, "\(outcomes)")
        let admin = try schema.admin()
        // Sequences are not rolled back: they count what happened in the transactions that were not kept.
        #expect(try admin.query("SELECT last_value FROM read_only_refusals").int(0, 0) == 1, "refused once")
        #expect(try admin.query("SELECT last_value FROM read_only_commits").int(0, 0) > 1, "then committed, on the next connection")
        #expect(try admin.query("SELECT count(*), count(DISTINCT player_id) FROM answers").int(0, 0) == 2)
        #expect(try await store.archive(room: "123456")?.answers.map(\.player).sorted() == ["p1", "p2"])
        // And written once more, as after a COMMIT whose answer never came: still one row each.
        try await appendAndWait(store, [Sample.answer("p1"), Sample.answer("p2", option: 0)], room: "123456")
        #expect(try admin.query("SELECT count(*) FROM answers").int(0, 0) == 2)
    }

    @Test func aServerThatGoesSilentMidCallIsGivenUpAndTheBatchStoredOnceElsewhere() async throws {
        let application = "sc_" + UUID().uuidString.prefix(8).lowercased()
        let schema = try TestPostgres.freshSchema(application: application)
        defer { schema.drop() }
        var settings = schema.settings
        settings.answerTimeout = .seconds(1)
        let store = try PostgresRoomStore(settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, Array(Sample.records.prefix(5)), room: "123456")

        // The writer's server process stops (SIGSTOP): its kernel still takes and acknowledges what the
        // store sends, so no TCP timeout would ever end the call, as with a primary whose disk hangs.
        let admin = try TestPostgres.admin()
        // The store opens its writer's connection first, its reader's after.
        let writers = try admin.query("""
            SELECT pid FROM pg_stat_activity WHERE application_name = $1::text ORDER BY backend_start LIMIT 1
            """, [.text(application)])
        let frozen = try #require(writers.count == 1 ? Int32(writers.int(0, 0)) : nil, "the writer's connection")
        try #require(kill(frozen, SIGSTOP) == 0, "signalling the server's process needs root or its user: errno \(errno)")
        var thawed = false
        defer { if !thawed { kill(frozen, SIGCONT) } }

        let started = ContinuousClock.now
        let outcomes = await appendAll(store, [(Sample.answer("p1"), room: "123456"), (Sample.answer("p2", option: 0), room: "123456")])
        let waited = ContinuousClock.now - started
        #expect(outcomes.allSatisfy { $0 == nil }, "given up after the answer timeout, then stored on a new connection: \(outcomes)")
        // It waited out its answer timeout (never less, however busy the machine), then gave the silent
        // connection up once: one new connection took the batch, beside the reader that was there before.
        // (How long all of it took says nothing on a shared machine: the count is what "no more" means.)
        #expect(waited >= .seconds(1), "the writer waited out its answer timeout: \(waited)")
        let others = try admin.query("""
            SELECT count(*) FROM pg_stat_activity WHERE application_name = $1::text AND pid <> $2::integer
            """, [.text(application), .integer(Int64(frozen))])
        #expect(others.int(0, 0) == 2, "the reader and one new writer: the silent one given up once, no connection given up after it")

        // Woken, the old process reads the batch still in its socket and runs it too: stored once all the
        // same (every write is idempotent), as when a failover's old primary had committed it.
        kill(frozen, SIGCONT)
        thawed = true
        let gone = ContinuousClock.now + .seconds(30)
        while try admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::integer", [.integer(Int64(frozen))]).count > 0 {
            try #require(ContinuousClock.now < gone, "the old server process ended")
            try await Task.sleep(for: .milliseconds(20))  // polling for the process to end
        }
        #expect(try schema.admin().query("SELECT count(*) FROM answers").int(0, 0) == 2)
        #expect(try await store.archive(room: "123456")?.answers.map(\.player).sorted() == ["p1", "p2"])
    }

    @Test func whileNoServerTakesWritesNothingIsAcknowledgedAndTheStoreCarriesOnOnceOneDoes() async throws {
        let application = "sc_" + UUID().uuidString.prefix(8).lowercased()
        let role = "role_" + UUID().uuidString.prefix(8).lowercased()
        let schema = try TestPostgres.freshSchema(owner: role, application: application)
        defer { schema.drop() }
        // As the nodes are configured for a primary with a standby: only a read-write session will do.
        let settings = try #require(PostgresSettings(database: schema.settings.url! + "&target_session_attrs=read-write"))
        let store = try PostgresRoomStore(settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, [Sample.records[0]], room: "123456")

        // Every session of the store's role is read-only from now on, as every server is during a
        // failover (the primary gone, the standby not yet promoted); its sessions end, as the old
        // primary's do.
        let admin = try TestPostgres.admin()
        try admin.query("ALTER ROLE \"\(role)\" SET default_transaction_read_only = on")
        let ended = try admin.query("""
            WITH mine AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE application_name = $1::text)
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM mine
            """, [.text(application)]).int(0, 0)
        #expect(ended == 2, "the writer's and the reader's")

        let refused = await appendAll(store, [(Sample.records[1], room: "123456")])
        let failure = try #require(refused[0] as? StoreFailure)
        #expect(failure.kind == .unavailable, "\(failure)")
        #expect(store.health != .ok)
        #expect(await store.probe() != .ok, "a probe finds no server that takes writes")
        await #expect(throws: StoreFailure.self) { try await store.archive(room: "123456") }

        // The standby is promoted: a server takes writes again, and the store finds it by itself.
        try admin.query("ALTER ROLE \"\(role)\" RESET default_transaction_read_only")
        #expect(await store.probe() == .ok)
        try await appendAndWait(store, [Sample.records[1]], room: "123456", resuming: true)
        try await appendAndWait(store, Array(Sample.records.dropFirst(2)), room: "123456")
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))
        #expect(try schema.admin().query("SELECT count(*) FROM players").int(0, 0) == 2, "nothing stored twice")
    }
}
