/// `{"type":"storage","ok":false,"code":"storage_unavailable","reason":"disk_full","message":"…"}`:
/// whether the server can store results, for the teacher's screens only. `ok: false` while writes fail
/// (answers are not acknowledged, joins get no token), then `ok: true` (no code, reason or message) once
/// they succeed again. The pages word `code` and `reason` (`StoreProblem`); `message` is an English
/// sentence with the store's own words, for logs and API clients.
public struct StoreHealthStatus: Sendable, Equatable, Codable {
    public var ok: Bool
    public var code: ErrorCode?
    public var reason: StoreProblem?
    public var message: String?

    public init(ok: Bool, message: String? = nil, reason: StoreProblem? = nil) {
        self.ok = ok
        self.code = ok ? nil : .storageUnavailable
        self.reason = ok ? nil : reason ?? .unknown
        self.message = message
    }

    /// The banner while the store fails with `storeReason` (the store's own words).
    public static func failing(_ storeReason: String) -> StoreHealthStatus {
        StoreHealthStatus(ok: false, message: teacherMessage(storeReason), reason: StoreProblem(reason: storeReason))
    }

    /// What the teacher's banner says in English (the CLI, the API, logs) while storage fails.
    public static func teacherMessage(_ reason: String) -> String {
        "Results cannot be saved right now (\(reason)). Children's answers are not confirmed, and they will be asked to tap again. Free some disk space or fix the storage: the room carries on by itself."
    }
}
