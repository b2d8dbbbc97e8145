import Foundation

/// Unguessable credentials and room codes, from the system's cryptographic generator.
package enum Tokens {
    /// 256 random bits, base64url without padding (43 characters).
    package static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A child's resume token: the room's code, a dot and 256 random bits, so that a token of another
    /// room is told apart from a wrong one (`RoomState.room(ofResumeToken:)`).
    package static func resume(room code: String) -> String {
        "\(code).\(generate())"
    }

    /// A six-digit room code: short enough to type on a tablet, so guessable by design, which is why
    /// hellos are rate-limited per address. Never starts with 0 (some keyboards and people drop it).
    package static func roomCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(Int.random(in: 100_000...999_999, using: &generator))
    }
}
