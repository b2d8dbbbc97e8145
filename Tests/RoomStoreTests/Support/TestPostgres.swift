import Foundation
import Glibc
import Locking
import Testing
@testable import PostgresStorage

/// The PostgreSQL the tests use: `STORYCIRCLE_TEST_POSTGRES_URL` when set (what `make test` does), or
/// else one this process starts with `scripts/postgres-test.sh` and stops when it exits.
///
/// PostgreSQL tests never skip quietly: if no server can be had, each fails with the reason. A developer
/// without PostgreSQL opts out explicitly with `STORYCIRCLE_TEST_POSTGRES=skip`, which leaves the
/// PostgreSQL cases out of the run.
enum TestPostgres {
    static var optedOut: Bool {
        ProcessInfo.processInfo.environment["STORYCIRCLE_TEST_POSTGRES"] == "skip"
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The base URL (always with a `?`, so parameters can be appended), or why there is none.
    static let server: Result<String, Unavailable> = {
        let url: String
        if let given = ProcessInfo.processInfo.environment["STORYCIRCLE_TEST_POSTGRES_URL"], !given.isEmpty {
            url = given
        } else {
            switch runScript("start") {
            case .success(let started):
                url = started
                startedHere.withLock { $0 = true }
                atexit { TestPostgres.stopIfStartedHere() }
            case .failure(let error):
                return .failure(error)
            }
        }
        return .success(url.contains("?") ? url : url + "?")
    }()

    private static let startedHere = Locked(false)

    private static func stopIfStartedHere() {
        if startedHere.withLock({ $0 }) { _ = runScript("stop") }
    }

    /// Runs the script with `posix_spawn` and `waitpid`: Foundation's `Process.waitUntilExit` can miss a
    /// child that exits early on Linux and hang the whole test run.
    private static func runScript(_ command: String) -> Result<String, Unavailable> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/postgres-test.sh").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-pg-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: output.appendingPathExtension("out"))
            try? FileManager.default.removeItem(at: output.appendingPathExtension("err"))
        }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.appendingPathExtension("out").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, output.appendingPathExtension("err").path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(script), strdup(command), nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, script, &actions, nil, arguments, environ)
        guard spawned == 0 else {
            return .failure(Unavailable(description: "could not run \(script): \(String(cString: strerror(spawned)))"))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let out = (try? String(contentsOf: output.appendingPathExtension("out"), encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: output.appendingPathExtension("err"), encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS are macros: exited normally when the low 7 bits are 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            return .failure(Unavailable(description: """
                PostgreSQL could not be started for the tests (\(script) \(command) ended with status \(status)): \
                \(err). Install it with scripts/install-deps.sh --test, point STORYCIRCLE_TEST_POSTGRES_URL at a \
                server, or opt out with STORYCIRCLE_TEST_POSTGRES=skip.
                """))
        }
        return .success(out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func url() throws -> String {
        try server.get()
    }

    /// A superuser connection to the test database, for setting tests up and looking behind the store.
    static func admin() throws -> PostgresConnection {
        try PostgresConnection(PostgresSettings(database: try url())!.connectionParameters)
    }

    /// A new, empty schema; a store opened with `settings` lives in it alone. Schema names are generated
    /// here, never taken from input, which is what makes building DDL with them acceptable.
    static func freshSchema(owner: String? = nil, application: String? = nil) throws -> Schema {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try admin()
        if let owner {
            try admin.query("CREATE ROLE \"\(owner)\" LOGIN")
            try admin.query("CREATE SCHEMA \"\(name)\" AUTHORIZATION \"\(owner)\"")
        } else {
            try admin.query("CREATE SCHEMA \"\(name)\"")
        }
        var url = try url() + "&options=-csearch_path%3D\(name)"
        if let owner { url += "&user=\(owner)" }
        if let application { url += "&application_name=\(application)" }
        return Schema(name: name, owner: owner, settings: PostgresSettings(database: url)!)
    }

    struct Schema: Sendable {
        let name: String
        let owner: String?
        let settings: PostgresSettings

        /// A superuser connection working in this schema.
        func admin() throws -> PostgresConnection {
            let connection = try TestPostgres.admin()
            try connection.query("SET search_path TO \"\(name)\"")
            return connection
        }

        func drop() {
            guard let admin = try? TestPostgres.admin() else { return }
            _ = try? admin.query("DROP SCHEMA \"\(name)\" CASCADE")
            if let owner {
                _ = try? admin.query("DROP OWNED BY \"\(owner)\"")
                _ = try? admin.query("DROP ROLE \"\(owner)\"")
            }
        }
    }
}
