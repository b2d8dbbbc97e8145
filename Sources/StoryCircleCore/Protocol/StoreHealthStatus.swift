/// `{"type":"storage","ok":false,"message":"…"}`: whether the server can store results, for the teacher's
/// screens only. `ok: false` while writes fail (answers are not acknowledged, joins get no token), then
/// `ok: true` (no message) once they succeed again.
public struct StoreHealthStatus: Sendable, Equatable, Codable {
    public var ok: Bool
    public var message: String?

    public init(ok: Bool, message: String? = nil) {
        self.ok = ok
        self.message = message
    }
}
