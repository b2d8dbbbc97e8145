import CPostgreSQL
import Glibc

/// A PostgreSQL call that failed: the server's SQLSTATE and message, or libpq's, and what we were doing.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The SQLSTATE the server reported; `nil` when the failure was the connection's or libpq's own.
    public var sqlState: String?
    public var message: String
    public var context: String
    /// The connection is gone (lost, refused, never made): the statement's fate on the server may be
    /// unknown, and the connection must be replaced.
    public var connectionLost: Bool

    public var description: String {
        "PostgreSQL error\(sqlState.map { " \($0)" } ?? "") while \(context): \(message)"
    }

    /// Whether `sqlState` says that this session's server is not (any longer) where writes go: it is a
    /// standby or turned read-only (25006, `read_only_sql_transaction`: a primary demoted, a failover's
    /// old primary), it is shutting down or crashed (57P01 `admin_shutdown`, 57P02 `crash_shutdown`), it
    /// is starting or recovering (57P03 `cannot_connect_now`), or the connection itself failed (class 08).
    /// The connection is then as good as lost: it is dropped, and the next one (libpq's multi-host URL
    /// with `target_session_attrs=read-write`) finds the primary, wherever it is now.
    static func meansServerGone(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return sqlState == "25006" || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03" || sqlState.hasPrefix("08")
    }

    /// Caused by the statement's own data (a constraint, a value PostgreSQL refuses): the same statement fails
    /// again however often it is retried, while others in its transaction would succeed.
    var isCausedByItsData: Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("22") || sqlState.hasPrefix("23")
    }

    static func client(_ message: String, _ context: String) -> PostgresError {
        PostgresError(sqlState: nil, message: message, context: context, connectionLost: false)
    }
}

/// A value for a statement parameter, sent in PostgreSQL's text format. Values always travel as parameters
/// (the extended protocol), never inside the SQL text.
enum PostgresValue: Sendable {
    case text(String)
    case integer(Int64)
    case bool(Bool)
    case null
    case textArray([String])
    case integerArray([Int64])

    static func int(_ value: Int) -> PostgresValue { .integer(Int64(value)) }
    static func optional(_ value: Int?) -> PostgresValue { value.map { .integer(Int64($0)) } ?? .null }

    /// The text format; throws for text PostgreSQL cannot hold (a NUL character), which would otherwise be
    /// cut short silently on its way through a C string.
    func encoded() throws(PostgresError) -> String? {
        switch self {
        case .text(let text):
            guard !text.utf8.contains(0) else { throw .client("a text value contains a NUL character, which PostgreSQL cannot store", "encoding a parameter") }
            return text
        case .integer(let value): return String(value)
        case .bool(let value): return value ? "t" : "f"
        case .null: return nil
        case .textArray(let items):
            for item in items where item.utf8.contains(0) {
                throw .client("a text value contains a NUL character, which PostgreSQL cannot store", "encoding a parameter")
            }
            let quoted = items.map { item in
                "\"" + item.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"") + "\""
            }
            return "{" + quoted.joined(separator: ",") + "}"
        case .integerArray(let items):
            return "{" + items.map(String.init).joined(separator: ",") + "}"
        }
    }

    static func encode(_ values: [PostgresValue]) throws(PostgresError) -> [String?] {
        var encoded: [String?] = []
        encoded.reserveCapacity(values.count)
        for value in values { encoded.append(try value.encoded()) }
        return encoded
    }
}

private extension String {
    func replacingOccurrences(_ target: Character, _ replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}

/// The rows of one statement's result; owns the libpq result.
final class PostgresRows {
    private let result: OpaquePointer
    let count: Int

    fileprivate init(_ result: OpaquePointer) {
        self.result = result
        count = Int(PQntuples(result))
    }

    deinit {
        PQclear(result)
    }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    func text(_ row: Int, _ column: Int) -> String {
        String(cString: PQgetvalue(result, Int32(row), Int32(column)))
    }

    func int64(_ row: Int, _ column: Int) -> Int64 {
        Int64(text(row, column)) ?? 0
    }

    func int(_ row: Int, _ column: Int) -> Int {
        Int(int64(row, column))
    }

    func optionalInt(_ row: Int, _ column: Int) -> Int? {
        isNull(row, column) ? nil : int(row, column)
    }

    func bool(_ row: Int, _ column: Int) -> Bool {
        text(row, column) == "t"
    }

    /// The command tag: `INSERT 0 1`, `COMMIT`, `ROLLBACK`...
    var commandTag: String {
        String(cString: PQcmdStatus(result))
    }
}

/// One statement of a pipeline.
struct PipelineStatement {
    enum Kind {
        case prepared(name: String)
        case sql(String)
    }

    var kind: Kind
    var parameters: [String?]

    static func prepared(_ name: String, _ parameters: [String?]) -> PipelineStatement {
        PipelineStatement(kind: .prepared(name: name), parameters: parameters)
    }

    static func sql(_ sql: String, _ parameters: [String?] = []) -> PipelineStatement {
        PipelineStatement(kind: .sql(sql), parameters: parameters)
    }
}

/// What one statement of a pipeline came to.
enum PipelineOutcome {
    case rows(PostgresRows)
    case failed(PostgresError)
    /// Not run: an earlier statement of the pipeline failed.
    case skipped
}

/// One libpq connection. Not thread-safe by design: each is owned by one thread (the writer) or used under
/// a lock (the reader, the lease connection).
final class PostgresConnection {
    private let handle: OpaquePointer
    /// Set when a call left the connection in a state we cannot trust (a half-read pipeline).
    private var poisoned = false
    /// How long a call waits for the server's answer before the connection is given up as lost.
    private let answerTimeout: Duration

    /// Connects with libpq's keyword/value pairs, in order: later pairs override earlier ones, and a
    /// `dbname` holding a URL or connection string is expanded where it stands.
    ///
    /// A call whose server sends nothing for `answerTimeout` fails as a lost connection (its outcome
    /// unknown), so that a primary that hangs — its disk stuck, its processes stopped — while its kernel
    /// still acknowledges every packet (so TCP's own timeouts never fire) does not hold the store forever:
    /// the next connection finds the standby Patroni promoted in its place.
    init(_ parameters: [(keyword: String, value: String)], answerTimeout: Duration = PostgresSettings.defaultAnswerTimeout) throws(PostgresError) {
        self.answerTimeout = answerTimeout
        let keywords = parameters.map { strdup($0.keyword) }
        let values = parameters.map { strdup($0.value) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordPointers = keywords.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        guard let handle = PQconnectdbParams(keywordPointers, valuePointers, 1) else {
            throw .client("out of memory", "connecting")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(handle))
            PQfinish(handle)
            throw PostgresError(sqlState: nil, message: message, context: "connecting", connectionLost: true)
        }
        sc_pq_silence_notices(handle)
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection can still be used; once not, it must be replaced.
    var isUsable: Bool {
        !poisoned && PQstatus(handle) == CONNECTION_OK
    }

    /// Like `isUsable`, but first reads whatever the server sent while the connection sat idle, without
    /// waiting: a server that closed it (restarted, or ended the session) is noticed before anything is
    /// sent, when it is still certain that nothing was written.
    var isUsableAfterIdle: Bool {
        guard isUsable else { return false }
        // Twice: a server ending the session sends its reason first, and the end of the stream is only
        // seen by the read after the one that takes the message. libpq's socket never blocks, so on a
        // healthy connection both reads return at once with nothing.
        for _ in 0..<2 where PQconsumeInput(handle) != 1 || PQstatus(handle) != CONNECTION_OK {
            return false
        }
        return true
    }

    /// The server process serving this connection (what `pg_stat_activity.pid` shows).
    var backendPID: Int32 {
        PQbackendPID(handle)
    }

    /// Inside a transaction block, whether healthy or failed (and so needing a `ROLLBACK`).
    var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs constant SQL (schema steps, `BEGIN`): the simple protocol, which allows several statements but
    /// no parameters. Anything carrying a value goes through `query`.
    func execute(_ sql: StaticString) throws(PostgresError) {
        let context = "running \(sql.description.prefix(60))"
        guard PQsendQuery(handle, sql.description) == 1 else { throw failure(context) }
        _ = try check(try collect(context), context)
    }

    /// One statement with parameters, through the extended protocol.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresRows {
        let encoded = try PostgresValue.encode(parameters)
        let context = "running \(sql.prefix(60))"
        let sent = Self.withCStrings(encoded) { pointers in
            PQsendQueryParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        }
        guard sent == 1 else { throw failure(context) }
        return try check(try collect(context), context)
    }

    /// Prepares `sql` under `name` for `pipeline`.
    func prepare(_ name: String, _ sql: String) throws(PostgresError) {
        let context = "preparing \(name)"
        guard PQsendPrepare(handle, name, sql, 0, nil) == 1 else { throw failure(context) }
        _ = try check(try collect(context), context)
    }

    /// Reads the results of what was just sent, as `PQexec` would return them: the first failed one, or
    /// else the last.
    private func collect(_ context: String) throws(PostgresError) -> OpaquePointer? {
        var kept: OpaquePointer?
        while true {
            do {
                try awaitResult(context)
            } catch {
                if let kept { PQclear(kept) }
                throw error
            }
            guard let result = PQgetResult(handle) else { return kept }
            if let previous = kept, PQresultStatus(previous) == PGRES_FATAL_ERROR {
                PQclear(result)
            } else {
                if let previous = kept { PQclear(previous) }
                kept = result
            }
        }
    }

    /// Returns once `PQgetResult` will not block: the answer (or the end of the connection) has arrived.
    /// Waits in `poll`, at most `answerTimeout` without hearing from the server; then the connection is
    /// given up as lost.
    private func awaitResult(_ context: String) throws(PostgresError) {
        let deadline = ContinuousClock.now + answerTimeout
        while PQisBusy(handle) == 1 {
            let remaining = deadline - .now
            guard remaining > .zero else {
                poisoned = true
                let seconds = answerTimeout.components.seconds
                throw PostgresError(sqlState: nil, message: "no answer from the server within \(seconds) s", context: context, connectionLost: true)
            }
            let (wholeSeconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: wholeSeconds * 1_000 + attoseconds / 1_000_000_000_000_000 + 1)
            var socket = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&socket, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                poisoned = true
                throw PostgresError(sqlState: nil, message: "waiting for the server failed (errno \(errno))", context: context, connectionLost: true)
            }
            if ready > 0, PQconsumeInput(handle) != 1 { throw failure(context) }
        }
    }

    /// Sends `statements` at once and reads their results: one round trip however many there are. Keep a
    /// pipeline to a few hundred small statements: libpq writes while the server answers, and the answers
    /// must fit in the socket's buffers meanwhile.
    ///
    /// After the first failure the server skips the rest of the pipeline; inside an explicit transaction,
    /// that transaction is then aborted and needs a `ROLLBACK`.
    func pipeline(_ statements: [PipelineStatement]) throws(PostgresError) -> [PipelineOutcome] {
        guard PQenterPipelineMode(handle) == 1 else { throw failure("entering pipeline mode") }
        // Whatever goes wrong from here leaves the connection mid-pipeline; only a clean finish clears this.
        poisoned = true
        for statement in statements {
            let sent = Self.withCStrings(statement.parameters) { pointers -> Int32 in
                switch statement.kind {
                case .prepared(let name): PQsendQueryPrepared(handle, name, Int32(pointers.count), pointers, nil, nil, 0)
                case .sql(let sql): PQsendQueryParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
                }
            }
            guard sent == 1 else { throw failure("sending a pipeline") }
        }
        guard PQpipelineSync(handle) == 1 else { throw failure("sending a pipeline") }

        var outcomes: [PipelineOutcome] = []
        outcomes.reserveCapacity(statements.count)
        for _ in statements {
            try awaitResult("reading a pipeline's results")
            guard let result = PQgetResult(handle) else { throw failure("reading a pipeline's results") }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
                outcomes.append(.rows(PostgresRows(result)))
            case PGRES_PIPELINE_ABORTED:
                PQclear(result)
                outcomes.append(.skipped)
            default:
                let error = Self.error(result, handle, "running a pipelined statement")
                PQclear(result)
                if error.connectionLost { throw error }
                outcomes.append(.failed(error))
            }
            // Each statement's results end with a NULL.
            while true {
                try awaitResult("reading a pipeline's results")
                guard let extra = PQgetResult(handle) else { break }
                PQclear(extra)
            }
        }
        try awaitResult("reading a pipeline's end")
        guard let sync = PQgetResult(handle) else { throw failure("reading a pipeline's end") }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, PQexitPipelineMode(handle) == 1 else { throw failure("leaving pipeline mode") }
        poisoned = false
        return outcomes
    }

    // MARK: - Errors

    private func check(_ result: OpaquePointer?, _ context: @autoclosure () -> String) throws(PostgresError) -> PostgresRows {
        guard let result else { throw failure(context()) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return PostgresRows(result)
        default:
            let error = Self.error(result, handle, context())
            PQclear(result)
            throw error
        }
    }

    /// A failure libpq reports on the connection rather than in a result.
    private func failure(_ context: String) -> PostgresError {
        PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), context: context, connectionLost: PQstatus(handle) != CONNECTION_OK || poisoned)
    }

    private static func error(_ result: OpaquePointer, _ handle: OpaquePointer, _ context: String) -> PostgresError {
        let sqlState = sc_pq_sqlstate(result).map { String(cString: $0) }
        let message = sc_pq_primary_message(result).map { String(cString: $0) } ?? trimmed(PQresultErrorMessage(result))
        // A FATAL error ends the session (the server is shutting down, the backend was terminated); libpq
        // only notices the closed socket on its next read, so the severity says it first.
        let severity = sc_pq_severity(result).map { String(cString: $0) }
        let sessionOver = severity == "FATAL" || severity == "PANIC" || PostgresError.meansServerGone(sqlState)
        return PostgresError(sqlState: sqlState, message: message, context: context, connectionLost: sessionOver || PQstatus(handle) != CONNECTION_OK)
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        let text = String(cString: message)
        return String(text.reversed().drop { $0 == "\n" || $0 == " " }.reversed())
    }

    private static func withCStrings<R>(_ values: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = values.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}
