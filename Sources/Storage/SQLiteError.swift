import CSQLite

/// A SQLite call that failed: its result code, SQLite's own message, and what we were doing.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var context: String

    public var description: String { "SQLite error \(code) while \(context): \(message)" }

    /// The one place SQLite return codes become Swift errors.
    @discardableResult
    static func check(_ code: Int32, _ database: OpaquePointer?, _ context: @autoclosure () -> String) throws(SQLiteError) -> Int32 {
        switch code {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE:
            return code
        default:
            let message = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            throw SQLiteError(code: code, message: message, context: context())
        }
    }
}
