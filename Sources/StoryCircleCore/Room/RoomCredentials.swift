/// A room's control credentials, as hashes: the tokens themselves are shown once at creation and never
/// stored. Resume tokens are hashed the same way.
public struct RoomCredentials: Sendable, Equatable {
    public var teacherTokenHash: String
    public var dashboardTokenHash: String

    public init(teacherTokenHash: String, dashboardTokenHash: String) {
        self.teacherTokenHash = teacherTokenHash
        self.dashboardTokenHash = dashboardTokenHash
    }

    public init(teacherToken: String, dashboardToken: String) {
        self.init(teacherTokenHash: Self.hash(teacherToken), dashboardTokenHash: Self.hash(dashboardToken))
    }

    /// The stored form of a token: SHA-256 of the token behind a fixed label. The label separates these
    /// digests from any other SHA-256 of the same bytes; it is not a salt and is the same for every room.
    /// No salt is needed: a salt defends guessable secrets against precomputed tables, and tokens carry 256
    /// random bits, so there is nothing to precompute that is smaller than the token itself. (The digest
    /// must also stay one per token: resume tokens are looked up by it, and stored rooms keep this form.)
    public static func hash(_ token: String) -> String {
        SHA256.hexDigest("storycircle.token.v1:" + token)
    }

    /// The projector token of a room whose teacher token is `teacherToken`. A room's projector token is
    /// made this way (`RoomDirectory`), so the server can hand it to the teacher's page later without
    /// ever storing a token: only hashes are kept. It is one-way, so a projector link does not lead back
    /// to the teacher's.
    ///
    /// A teacher token that carries its room's MAC (`<code>.<random>.<mac>`, `RoomTokens` in the server) gives
    /// one of the same shape, its last part a digest of the teacher's MAC: the server checks it with its key
    /// alone, as it checks the teacher's, and it still leads nowhere back.
    public static func dashboardToken(forTeacherToken teacherToken: String) -> String {
        let parts = teacherToken.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 3 {
            return "\(parts[0]).\(parts[1]).\(SHA256.hexDigest("storycircle.dashboard-token.v2:" + parts[2]))"
        }
        return SHA256.hexDigest("storycircle.dashboard-token.v1:" + teacherToken)
    }

    /// The room's projector token, for the teacher who proved `teacherToken`; nil for a room whose
    /// projector token was drawn at random (rooms made before tokens were derived).
    public func dashboardToken(forTeacherToken teacherToken: String) -> String? {
        guard isTeacher(teacherToken) else { return nil }
        let token = Self.dashboardToken(forTeacherToken: teacherToken)
        return constantTimeEquals(Self.hash(token), dashboardTokenHash) ? token : nil
    }

    /// The role a token grants in `watch`, if any.
    public func watchRole(for token: String) -> Role? {
        let hash = Self.hash(token)
        if constantTimeEquals(hash, teacherTokenHash) { return .teacher }
        if constantTimeEquals(hash, dashboardTokenHash) { return .dashboard }
        return nil
    }

    public func isTeacher(_ token: String) -> Bool {
        constantTimeEquals(Self.hash(token), teacherTokenHash)
    }

    private func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
