import Sodium
import StoryCircleCore

/// A room's teacher and dashboard tokens prove themselves: a teacher token is
/// `<room code>.<random>.<HMAC-SHA-256 under the server's key of (role, code, random)>`, and the room's
/// dashboard token is derived from it one-way (`RoomCredentials.dashboardToken(forTeacherToken:)`). So a
/// request's token is checked against the room code it asks for from the token alone, in constant time,
/// before anything is read, leased or loaded: a guessed token and a token for a room that does not exist
/// cost the same and touch nothing (the HTTP API's `Authority` check). The store's hash of the tokens stays
/// the room's word on which tokens are its own (a code drawn again for a later room has other tokens).
///
/// The key: 32 random bytes in the data folder, or one every node of a cluster is given (the server's
/// `tokenKeyFile`); `ephemeral()` for tests and servers that keep nothing.
public struct RoomTokens: Sendable {
    private let key: [UInt8]

    public init(key: [UInt8]) {
        precondition(key.count >= 32, "a room-token key has at least 32 bytes")
        self.key = key
    }

    /// A key of this process alone: tokens it issues are honoured until it stops.
    public static func ephemeral() -> RoomTokens {
        RoomTokens(key: Sodium.randomBytes(32))
    }

    /// A new teacher token for room `code`.
    public func teacherToken(room code: String) -> String {
        let random = Self.hex(Sodium.randomBytes(16))
        return Self.token(code: code, random: random, mac: mac(code: code, random: random))
    }

    /// The role `token` proves over room `code` by its MAC alone (nothing is read): `.teacher`, `.dashboard`,
    /// or nil. Both expected tokens are computed and compared in full every time, so the time taken does not
    /// depend on which role, if any, the token holds, nor on whether the room exists.
    public func role(of token: String, room code: String) -> Role? {
        guard let (tokenCode, random) = Self.parts(of: token), tokenCode == code else { return nil }
        let teacher = Self.token(code: code, random: random, mac: mac(code: code, random: random))
        let dashboard = RoomCredentials.dashboardToken(forTeacherToken: teacher)
        let given = Array(token.utf8)
        let isTeacher = Sodium.constantTimeEquals(given, Array(teacher.utf8))
        let isDashboard = Sodium.constantTimeEquals(given, Array(dashboard.utf8))
        return isTeacher ? .teacher : isDashboard ? .dashboard : nil
    }

    /// The room a token was issued for and the role it proves there, by its MAC alone (for routes that are
    /// not about one room, such as a class's: its room must then be found among the class's rooms).
    public func claim(of token: String) -> (room: String, role: Role)? {
        guard let (code, _) = Self.parts(of: token), let role = role(of: token, room: code) else { return nil }
        return (code, role)
    }

    private func mac(code: String, random: some StringProtocol) -> String {
        // Role, code and random, each delimited: no two different triples give the same bytes.
        Self.hex(Sodium.hmacSHA256(Array("storycircle.room-token.v2\u{0}teacher\u{0}\(code)\u{0}\(random)".utf8), key: key))
    }

    private static func token(code: String, random: some StringProtocol, mac: String) -> String {
        "\(code).\(random).\(mac)"
    }

    /// A well-formed token's room code and random part: three parts, the last two lowercase hex of 16 and
    /// 32 bytes. Anything else (tokens from before tokens carried a MAC among them) proves nothing.
    private static func parts(of token: String) -> (code: String, random: Substring)? {
        guard token.utf8.count <= 160 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.count <= 32, isHex(parts[1], length: 32), isHex(parts[2], length: 64) else { return nil }
        return (String(parts[0]), parts[1])
    }

    private static func isHex(_ text: Substring, length: Int) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
