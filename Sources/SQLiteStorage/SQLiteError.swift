import CSQLite
import Foundation

/// A SQLite call that failed: its result code, SQLite's own message, the operating system's reason when
/// the failure was I/O, and what we were doing.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (`SQLITE_IOERR_WRITE`, `SQLITE_CONSTRAINT_PRIMARYKEY`, …).
    public var code: Int32
    public var message: String
    public var context: String
    /// `strerror` of the system call that failed (`No space left on device`), for I/O failures only.
    public var systemError: String?

    public init(code: Int32, message: String, context: String, systemError: String? = nil) {
        self.code = code
        self.message = message
        self.context = context
        self.systemError = systemError
    }

    public var description: String { "SQLite error \(code) while \(context): \(reason)" }

    /// SQLite's words, then the system's: "database or disk is full (No space left on device)".
    public var reason: String {
        guard let systemError, !message.contains(systemError) else { return message }
        return "\(message) (\(systemError))"
    }

    /// The primary result code (`SQLITE_IOERR` for `SQLITE_IOERR_WRITE`).
    public var primaryCode: Int32 { code & 0xFF }

    /// A failure of this statement with these values, which running it again cannot fix (a constraint, a
    /// value too big or of the wrong type), as opposed to a failure of the database (full, read-only, I/O,
    /// busy), after which the whole transaction is in doubt and SQLite may already have rolled it back.
    public var isStatementProblem: Bool {
        [SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_RANGE].contains(primaryCode)
    }

    /// Failures where the operating system's reason says more than SQLite's message.
    private static let systemCodes: Set<Int32> = [SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS]

    /// The one place SQLite return codes become Swift errors.
    @discardableResult
    static func check(_ code: Int32, _ database: OpaquePointer?, _ context: @autoclosure () -> String) throws(SQLiteError) -> Int32 {
        switch code {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE:
            return code
        default:
            let extended = database.map { sqlite3_extended_errcode($0) } ?? code
            let message = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            var systemError: String?
            if systemCodes.contains(code & 0xFF), let database {
                let number = sqlite3_system_errno(database)
                if number != 0 { systemError = String(cString: strerror(number)) }
            }
            throw SQLiteError(code: (extended & 0xFF) == (code & 0xFF) ? extended : code, message: message, context: context(), systemError: systemError)
        }
    }
}

/// A room whose stored story this StoryCircle no longer accepts (a validation rule tightened since it was
/// saved). SQLite did its part: the row was read; it is the content that cannot be used, and saying
/// "SQLite error" would send an operator to the disk instead of to the story.
public struct UnloadableStory: Error, CustomStringConvertible, Sendable {
    public var room: String
    /// The validation errors, as `story validate` would list them.
    public var problems: [String]

    public init(room: String, problems: [String]) {
        self.room = room
        self.problems = problems
    }

    public var description: String { "the stored story of room \(room) no longer loads: \(problems.joined(separator: "; "))" }
}
