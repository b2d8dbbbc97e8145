/// `{"type":"storage","ok":false,"code":"storage_unavailable","message":"…"}`: whether the server can store
/// results, for the teacher's screens only. `ok: false` while writes fail (answers are not acknowledged,
/// joins get no token), then `ok: true` (no code, no message) once they succeed again. The pages word the
/// code; `message` is the reason in English, for logs and API clients.
public struct StoreHealthStatus: Sendable, Equatable, Codable {
    public var ok: Bool
    public var code: ErrorCode?
    public var message: String?

    public init(ok: Bool, message: String? = nil) {
        self.ok = ok
        self.code = ok ? nil : .storageUnavailable
        self.message = message
    }
}
