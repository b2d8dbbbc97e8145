import Foundation

/// Where the PostgreSQL store connects, from the `database` setting: a `postgres://…` or `postgresql://…`
/// URL (libpq's own URI syntax, so `?host=/run/postgresql`, `sslmode=…` and the rest work), or `postgres`
/// alone for libpq's usual `PG*` environment (`PGHOST`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`, ...). A URL
/// with nothing after the scheme also leaves everything to the environment.
public struct PostgresSettings: Sendable, Equatable {
    /// The URL as given, or `nil` for the environment alone.
    public var url: String?
    /// How long a call waits for an answer from a server that has gone silent before its connection is
    /// given up (`PostgresConnection`). Longer than any commit takes while the standby is being dropped
    /// (a few seconds), shorter than a class would wait.
    public var answerTimeout: Duration = PostgresSettings.defaultAnswerTimeout
    public static let defaultAnswerTimeout = Duration.seconds(15)
    /// The node these connections belong to, if it has a name of its own: every connection then calls
    /// itself `storycircle/<node>` (`application_name`, over the URL's), which is how the other nodes see
    /// that a lease's holder still lives when the one session that held its lock has ended.
    public var node: String?

    /// Whether `setting` (the `database` setting) names PostgreSQL rather than a SQLite file.
    public static func names(_ setting: String) -> Bool {
        let lowered = setting.lowercased()
        return lowered == "postgres" || lowered == "postgresql" || lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    public init?(database setting: String) {
        guard Self.names(setting) else { return nil }
        url = setting.contains("://") ? setting : nil
    }

    /// The setting with any password replaced, for messages and logs.
    public var redacted: String {
        guard let url else { return "postgres (from the PG* environment)" }
        return Self.redact(url)
    }

    /// The store's defaults, then the URL (whose settings win). `fallback_application_name` gives way to
    /// `PGAPPNAME` and the URL's `application_name`; the timeouts keep a vanished server from hanging a
    /// connection attempt or a commit for the kernel's default of many minutes.
    ///
    /// With several hosts (`postgresql://a:5432,b:5432/db?target_session_attrs=read-write`, the form for
    /// a primary with a standby) libpq tries them in order and keeps the first that takes writes; every
    /// reconnection asks again, so after a failover the store finds the new primary by itself. The
    /// timeouts are short because each one is paid per host that cannot be reached: a connection attempt
    /// gives a host 3 s, and a server that stops answering mid-call (its machine cut off) is given up
    /// after about 11 s (keepalives 5 s, then 3 probes 2 s apart; unacknowledged data, 10 s), within the
    /// time Patroni needs to promote the standby in its place.
    var connectionParameters: [(keyword: String, value: String)] {
        var parameters: [(keyword: String, value: String)] = [
            ("fallback_application_name", "storycircle"),
            ("keepalives", "1"),
            ("keepalives_idle", "5"),
            ("keepalives_interval", "2"),
            ("keepalives_count", "3"),
            ("tcp_user_timeout", "10000"),
            // A node frozen inside a transaction (SIGSTOP, a VM paused) would keep the rows it touched, its
            // rooms' lease rows among them, locked for as long as it stays frozen, and every node taking one
            // of those rooms would wait behind it. Our transactions are pipelined and do not sit idle, so a
            // session idle in one for 5 s belongs to such a node: the server ends it and frees its locks.
            ("options", "-c idle_in_transaction_session_timeout=5000"),
        ]
        if ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] == nil {
            parameters.append(("connect_timeout", "3"))
        }
        if let url { parameters.append(("dbname", url)) }
        // After the URL, so that it wins over the URL's own.
        if let applicationName { parameters.append(("application_name", applicationName)) }
        return parameters
    }

    /// What the node's sessions are called (PostgreSQL keeps 63 bytes of it), or `nil` without a node name.
    var applicationName: String? {
        node.map { String(decoding: Array("storycircle/\($0)".utf8.prefix(63)), as: UTF8.self) }
    }

    /// `postgres://user:secret@host/db?password=secret` → `postgres://user:***@host/db?password=***`.
    static func redact(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
            if let at = text[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
               let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        if let query = text.firstIndex(of: "?") {
            let parameters = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
                parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
            }
            text = String(text[...query]) + parameters.joined(separator: "&")
        }
        return text
    }
}
