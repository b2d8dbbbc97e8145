import CSQLite

/// One SQLite connection. Not thread-safe by design: each is owned by one thread (the writer) or used
/// under a lock (the reader).
final class SQLiteDatabase {
    let handle: OpaquePointer
    let path: String

    /// `readOnly`: for the store's reader and for tests looking at a file; it creates nothing.
    init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard let handle else { throw SQLiteError(code: result, message: "out of memory", context: "opening \(path)") }
        do {
            try SQLiteError.check(result, handle, "opening \(path)")
        } catch {
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
    }

    /// Whether a transaction is open. After `SQLITE_FULL`, `SQLITE_IOERR` and their kin SQLite may have
    /// rolled the transaction back by itself: then this is `false`, and statements would autocommit.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last statement that finished on this connection.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Rows changed on this connection since it opened.
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Whether SQLite opened the file read-only (it does so quietly when it cannot open it for writing).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Rolls back the open transaction, if SQLite has not already.
    func rollback() {
        if inTransaction { try? execute("ROLLBACK") }
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        try SQLiteError.check(sqlite3_exec(handle, sql, nil, nil, nil), handle, "running \(sql.prefix(60))")
    }

    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(database: self, sql: sql)
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            rollback()
            throw error
        }
    }

    /// The first column of the first row of `sql`, as an integer.
    func integer(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        try statement.bind(values)
        return try statement.step() ? statement.int64(0) : nil
    }
}

/// A value to bind to a statement parameter.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case null

    static func int(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }
    static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
    static func optional(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }
}

/// A prepared statement, reused across executions (reset before each).
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase
    private let sql: String

    init(database: SQLiteDatabase, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        try SQLiteError.check(sqlite3_prepare_v2(database.handle, sql, -1, &statement, nil), database.handle, "preparing \(sql.prefix(60))")
        guard let statement else { throw SQLiteError(code: SQLITE_ERROR, message: "empty statement", context: sql) }
        self.statement = statement
        self.database = database
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Resets the statement and binds `values` to its parameters in order.
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let integer): result = sqlite3_bind_int64(statement, index, integer)
            case .text(let text): result = sqlite3_bind_text(statement, index, text, -1, sc_sqlite_transient())
            case .null: result = sqlite3_bind_null(statement, index)
            }
            try SQLiteError.check(result, database.handle, "binding parameter \(index) of \(sql.prefix(60))")
        }
    }

    /// Steps once; `true` while there is a row to read.
    func step() throws(SQLiteError) -> Bool {
        try SQLiteError.check(sqlite3_step(statement), database.handle, "running \(sql.prefix(60))") == SQLITE_ROW
    }

    /// Binds and runs a statement that returns no rows.
    func run(_ values: SQLiteValue...) throws(SQLiteError) {
        try bind(values)
        _ = try step()
        sqlite3_reset(statement)
    }

    /// Rows changed by the last run on this statement's connection.
    var changes: Int { Int(sqlite3_changes(database.handle)) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }

    func text(_ column: Int32) -> String {
        sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }
}
