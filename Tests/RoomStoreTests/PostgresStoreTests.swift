import Foundation
import Locking
import Testing
@testable import PostgresStorage
@testable import StoryCircleCore

@Suite("PostgreSQL settings")
struct PostgresSettingsTests {
    @Test func theDatabaseSettingNamesPostgreSQLByURLOrByName() {
        for setting in ["postgres", "postgresql", "postgres://db.school/storycircle", "postgresql://", "POSTGRES://x"] {
            #expect(PostgresSettings.names(setting), "\(setting)")
        }
        for setting in ["data/storycircle.sqlite", "none", "postgres.sqlite", "/var/lib/postgres/rooms.sqlite", ""] {
            #expect(!PostgresSettings.names(setting), "\(setting)")
        }
        #expect(PostgresSettings(database: "postgres")?.url == nil, "the PG* environment")
        #expect(PostgresSettings(database: "postgresql://h/db")?.url == "postgresql://h/db")
        #expect(PostgresSettings(database: "data/x.sqlite") == nil)
    }

    @Test func passwordsNeverReachAMessage() {
        #expect(PostgresSettings.redact("postgres://ana:s3cret@db:5432/rooms?sslmode=require") == "postgres://ana:***@db:5432/rooms?sslmode=require")
        #expect(PostgresSettings.redact("postgresql://db/rooms?user=ana&password=s3cret&x=1") == "postgresql://db/rooms?user=ana&password=***&x=1")
        #expect(PostgresSettings.redact("postgresql://ana@db/rooms") == "postgresql://ana@db/rooms")
        #expect(PostgresSettings(database: "postgres")?.redacted.contains("PG*") == true)
    }

    @Test func theURLsOwnSettingsWinOverTheStoresDefaults() {
        let parameters = PostgresSettings(database: "postgresql://h/db?connect_timeout=30")!.connectionParameters
        #expect(parameters.last?.keyword == "dbname", "the URL is expanded last, so what it says wins")
        #expect(parameters.contains { $0.keyword == "fallback_application_name" })
    }

    /// A URL that crosses a network is accepted only with sslmode=verify-full; on this machine (a socket,
    /// loopback) anything goes. The mode and the host may come from the URL or libpq's environment.
    @Test func aNetworkHostWithoutVerifiedTLSIsNamedAndNothingElse() {
        func unverified(_ url: String, _ environment: [String: String] = [:]) -> [String] {
            PostgresSettings(database: url)!.unverifiedNetworkHosts(environment: environment)
        }
        #expect(unverified("postgresql://storycircle:pw@pg1:5432,pg2:5432/storycircle?target_session_attrs=read-write") == ["pg1", "pg2"])
        #expect(unverified("postgresql://a:b@db.school/x?sslmode=require") == ["db.school"], "require takes any certificate")
        #expect(unverified("postgresql://a:b@db.school/x?sslmode=verify-ca") == ["db.school"], "verify-ca takes any name")
        #expect(unverified("postgresql://a:b@pg1:5432,pg2:5432/x?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=/tls/ca.crt").isEmpty)
        #expect(unverified("postgresql://db.school/x", ["PGSSLMODE": "verify-full"]).isEmpty, "libpq's environment counts")
        #expect(unverified("postgresql://db.school/x?sslmode=disable", ["PGSSLMODE": "verify-full"]) == ["db.school"], "the URL wins, as in libpq")
        #expect(unverified("postgresql://[2001:db8::5]:5432/x") == ["[2001:db8::5]"])
        #expect(unverified("postgresql://localhost/x").isEmpty && unverified("postgresql://127.0.0.1:5433/x").isEmpty)
        #expect(unverified("postgresql://[::1]/x").isEmpty)
        #expect(unverified("postgresql:///postgres?host=/tmp/pg&user=postgres").isEmpty, "a unix socket")
        #expect(unverified("postgresql://").isEmpty && unverified("postgres").isEmpty, "the default socket")
        #expect(unverified("postgres", ["PGHOST": "db.school"]) == ["db.school"])
        #expect(unverified("postgresql://localhost/x?hostaddr=10.0.0.5") == ["10.0.0.5"], "libpq connects to hostaddr")
        #expect(unverified("postgresql:///x?host=db%2Eschool") == ["db.school"])
        let problem = PostgresSettings(database: "postgresql://ana:s3cret@db.school/x")!.unverifiedTransportProblem(environment: [:])
        #expect(problem?.contains("db.school") == true && problem?.contains("sslmode=verify-full") == true)
        #expect(problem?.contains("s3cret") == false, "never the password")
    }
}

/// What only PostgreSQL can do wrong: lose its connection, lose it during a COMMIT, refuse to let us in.
@Suite("PostgreSQL store faults", .enabled(if: !TestPostgres.optedOut, "STORYCIRCLE_TEST_POSTGRES=skip"))
struct PostgresStoreTests {
    /// A frozen node's session must not hold its locks for ever: the store's sessions end a transaction
    /// left idle for 5 s.
    @Test func theStoresSessionsEndATransactionLeftIdle() throws {
        let connection = try TestPostgres.admin()
        #expect(try connection.query("SHOW idle_in_transaction_session_timeout").text(0, 0) == "5s")
    }

    /// A name PostgreSQL shows in `pg_stat_activity`, to find this test's connections.
    private static func applicationName() -> String {
        "sc_" + UUID().uuidString.prefix(8).lowercased()
    }

    private static func terminate(application: String) throws -> Int {
        // Materialised first: SQL does not promise to test the name before calling the function, and
        // every other test's connections are in pg_stat_activity too.
        try TestPostgres.admin().query("""
            WITH mine AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE application_name = $1::text)
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM mine
            """, [.text(application)]).int(0, 0)
    }

    /// A deferred trigger that ends its own session while the COMMIT runs it, the first `times` times: the
    /// transaction is aborted and the client sees its connection drop with the COMMIT unanswered. (The
    /// `pg_sleep` is where the server notices the termination, at once; nothing waits on it.)
    private static func dropConnectionsDuringCommit(_ schema: TestPostgres.Schema, times: Int) throws {
        let admin = try schema.admin()
        try admin.query("CREATE SEQUENCE commit_drops")
        try admin.query("""
            CREATE FUNCTION drop_connection_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('commit_drops') <= \(times) THEN
                    PERFORM pg_terminate_backend(pg_backend_pid());
                    PERFORM pg_sleep(60);
                END IF;
                RETURN NULL;
            END $$
            """)
        try admin.query("""
            CREATE CONSTRAINT TRIGGER drop_connection_at_commit AFTER INSERT ON answers
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION drop_connection_at_commit()
            """)
    }

    @Test func aLostConnectionIsReplacedAndNothingIsLostOrDoubled() async throws {
        let application = Self.applicationName()
        let schema = try TestPostgres.freshSchema(application: application)
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, Array(Sample.records.prefix(4)), room: "123456")

        #expect(try Self.terminate(application: application) == 2, "the writer's and the reader's")
        try await appendAndWait(store, Array(Sample.records.dropFirst(4)), room: "123456")
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))

        #expect(try Self.terminate(application: application) == 2)
        #expect(try await store.codeExists("123456"), "reads reconnect too")
        try await appendAndWait(store, [.playerLeft(player: "p1", at: ServerTime(milliseconds: 9_000))], room: "123456")
        let lease = try await store.acquire(room: "123456", node: "a", for: .seconds(60))
        #expect(try Self.terminate(application: application) == 3, "the writer's, the reader's and the lease connection")
        #expect(try await store.renew(lease, for: .seconds(60)).epoch == lease.epoch, "lease calls reconnect too")
    }

    @Test func aCommitCutOffOnceIsWrittenAgainAndStoredOnce() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try Self.dropConnectionsDuringCommit(schema, times: 1)

        try await appendAndWait(store, Sample.records, room: "123456")
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))
        #expect(try schema.admin().query("SELECT last_value FROM commit_drops").int(0, 0) == 2, "the first COMMIT was cut off, the second went through")
    }

    @Test func aCommitWhoseOutcomeStaysUnknownIsReportedAsAFailureAndCanBeWrittenAgain() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try Self.dropConnectionsDuringCommit(schema, times: 1_000)

        let outcomes = await appendAll(store, [(Sample.answer("p1"), room: "123456")])
        let failure = try #require(outcomes[0] as? StoreFailure)
        #expect(failure.kind == .unavailable && failure.record == "answer")
        #expect(failure.reason.contains("outcome is unknown"), "\(failure)")
        #expect(try await store.archive(room: "123456")?.answers.isEmpty == true, "nothing was acknowledged and nothing stored")
        #expect(store.health.reason?.contains("outcome is unknown") == true)

        try schema.admin().query("DROP TRIGGER drop_connection_at_commit ON answers")
        try await appendAndWait(store, [Sample.answer("p1")], room: "123456", resuming: true)
        #expect(try await store.archive(room: "123456")?.answers.map(\.player) == ["p1"])
        #expect(store.health == .ok)
    }

    @Test func whileTheDatabaseRefusesUsEveryWriteFailsAndThenTheyGoThrough() async throws {
        let application = Self.applicationName()
        let role = "role_" + UUID().uuidString.prefix(8).lowercased()
        let schema = try TestPostgres.freshSchema(owner: role, application: application)
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, [Sample.records[0]], room: "123456")

        let admin = try TestPostgres.admin()
        try admin.query("ALTER ROLE \"\(role)\" NOLOGIN")
        _ = try Self.terminate(application: application)

        let refused = await appendAll(store, [(Sample.records[1], room: "123456")])
        let failure = try #require(refused[0] as? StoreFailure)
        #expect(failure.kind == .unavailable)
        #expect(!failure.reason.contains("unknown"), "nothing was sent, so it is known not to be stored: \(failure)")
        #expect(failure.reason.contains("not permitted to log in"), "PostgreSQL's own words: \(failure)")
        #expect(store.health.reason == failure.reason)
        #expect(await store.probe() != .ok)
        await #expect(throws: StoreFailure.self) { try await store.archive(room: "123456") }
        await #expect(throws: StoreFailure.self) { try await store.acquire(room: "123456", node: "a", for: .seconds(60)) }

        try admin.query("ALTER ROLE \"\(role)\" LOGIN")
        #expect(await store.probe() == .ok, "a probe finds the database writable again")
        let behind = await appendAll(store, [(Sample.records[2], room: "123456")])
        #expect((behind[0] as? StoreFailure)?.reason.hasPrefix("an earlier record of this room was not stored") == true, "the room waits until it resumes")
        try await appendAndWait(store, [Sample.records[1]], room: "123456", resuming: true)
        try await appendAndWait(store, Array(Sample.records.dropFirst(2)), room: "123456")
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))
    }

    @Test func writingRecordsAgainStoresNothingTwiceButADifferentRecordUnderTheSameKeyIsAConflict() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        try await store.createRoom(Sample.header("123456"))
        try await appendAndWait(store, Sample.records, room: "123456")
        // As after a COMMIT whose answer was lost: the same records again, including older settings.
        try await appendAndWait(store, Sample.records, room: "123456")
        try await appendAndWait(store, [.roomUpdated(settings: RoomSettings(), locked: false, at: ServerTime(milliseconds: 2_100))], room: "123456")
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))
        #expect(try await store.summaries().first?.phase == .reveal, "a repeated earlier transition does not move the phase back")

        for (conflict, what) in [
            (RoomRecord.playerJoined(PlayerRecord(id: "p1", nickname: "Someone else", tokenHash: "x", joinedAt: ServerTime(milliseconds: 2_000))), "player"),
            (Sample.answer("p1", option: 0), "answer"),
        ] {
            let failure = await withCheckedContinuation { continuation in
                store.append(conflict, room: "123456", resuming: true) { continuation.resume(returning: $0 as? StoreFailure) }
            }
            #expect(failure?.kind == .rejected)
            #expect(failure?.reason == "a different \(what) is already stored under the same key")
        }
        await #expect(performing: { try await store.createRoom(Sample.header("123456", teacherToken: "another-room")) }, throws: { error in
            (error as? StoreFailure)?.kind == .rejected && String(describing: error).contains("already taken")
        })
        #expect(try await store.archive(room: "123456") == Sample.expected("123456"))
    }

    @Test func textPostgreSQLCannotHoldFailsItsRecordAlone() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let store = try PostgresRoomStore(schema.settings)
        defer { closeAfterTest(store) }
        try await store.createRoom(Sample.header("123456"))
        let outcomes = await appendAll(store, [
            (.playerJoined(PlayerRecord(id: "p1", nickname: "Ana", tokenHash: "h1", joinedAt: ServerTime(milliseconds: 1)))  , room: "123456"),
            (.playerJoined(PlayerRecord(id: "p2", nickname: "Nul\u{0}Byte", tokenHash: "h2", joinedAt: ServerTime(milliseconds: 2))), room: "123456"),
            (.playerJoined(PlayerRecord(id: "p3", nickname: "Bo", tokenHash: "h3", joinedAt: ServerTime(milliseconds: 3))), room: "123456"),
        ])
        #expect(outcomes.map { $0 == nil } == [true, false, false])
        #expect((outcomes[1] as? StoreFailure)?.kind == .rejected)
        #expect((outcomes[1] as? StoreFailure)?.reason.contains("NUL") == true)
        #expect((outcomes[2] as? StoreFailure)?.kind == .unavailable, "not stored past the refused one")
        #expect(try await store.archive(room: "123456")?.players.map(\.nickname) == ["Ana"])
    }

    @Test func nodesStartingTogetherMigrateOnceAndBothOpen() async throws {
        let schema = try TestPostgres.freshSchema()
        defer { schema.drop() }
        let stores = Locked<[Result<PostgresRoomStore, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            let store = Result { try PostgresRoomStore(schema.settings) }
            stores.withLock { $0.append(store) }
        }
        let opened = try stores.withLock { $0 }.map { try $0.get() }
        defer { opened.forEach { closeAfterTest($0) } }
        #expect(try schema.admin().query("SELECT count(*) FROM schema_migrations").int(0, 0) == PostgresMigrations.steps.count)
        var versions: [Int] = []
        for store in opened { versions.append(try await store.schemaVersion()) }
        #expect(versions == Array(repeating: PostgresMigrations.latest, count: 3))
    }

    @Test func anUnreachableDatabaseStopsTheStoreFromOpeningWithAClearError() {
        let settings = PostgresSettings(database: "postgresql:///nowhere?host=/nonexistent-socket-dir&connect_timeout=2")!
        #expect(performing: { _ = try PostgresRoomStore(settings) }, throws: { error in
            (error as? PostgresError)?.connectionLost == true && String(describing: error).contains("connecting")
        })
    }
}
