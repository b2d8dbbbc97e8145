/// Why the store cannot write, as a code the teacher's page words (`storage.reason.*` in the catalogs).
///
/// The stores report a failure in their own words (`StoreHealth.failing(reason:)`): SQLite's result
/// text with the system's `strerror` ("database or disk is full (No space left on device)"), or libpq's
/// and the writer's. Those texts are fixed by SQLite, glibc and libpq (the server never calls
/// `setlocale`, so `strerror` and libpq speak English), so the cause is read from them here, in one
/// place, rather than each backend and the group-commit writer carrying a second value through every
/// outcome. A text none of these matches is `unknown`: the page then says the log has more.
public enum StoreProblem: String, Sendable, Equatable, Codable, CaseIterable {
    /// The disk (or the database server's) is full.
    case diskFull = "disk_full"
    /// The database or its folder cannot be written (read-only file system, permissions).
    case readOnly = "read_only"
    /// The disk failed to read or write.
    case ioError = "io_error"
    /// The database server cannot be reached, or the connection to it was lost.
    case unreachable = "database_unreachable"
    /// The store is closed (the server is stopping).
    case closed = "store_closed"
    case unknown

    /// The cause named in a store's `reason`. Checked in order: a full disk is also an I/O error to
    /// SQLite ("disk I/O error (No space left on device)"), and the system's words are the more precise.
    public init(reason: String) {
        let text = reason.lowercased()
        func any(_ needles: [String]) -> Bool { needles.contains { text.contains($0) } }
        if any(["no space left", "disk is full", "disk full", "database or disk is full", "could not extend file", "quota exceeded"]) {
            self = .diskFull
        } else if any(["error 25006", "error 57p0", "error 08"]) {
            // PostgreSQL's own read-only (a demoted primary), shutdown and connection SQLSTATEs: the
            // server that took writes is gone, not a file that cannot be written.
            self = .unreachable
        } else if any(["read-only", "readonly", "read only", "permission denied", "operation not permitted", "unable to open database"]) {
            self = .readOnly
        } else if any(["i/o error", "input/output error"]) {
            self = .ioError
        } else if any(["store is closed"]) {
            self = .closed
        } else if any(["connection", "could not connect", "server closed", "timeout expired", "timed out", "no answer from the server", "no route to host", "terminating", "shutting down", "recovery mode", "not accepting"]) {
            self = .unreachable
        } else {
            self = .unknown
        }
    }
}
