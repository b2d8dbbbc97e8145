import Foundation
import Sodium

/// Unguessable credentials and room codes, from the system's cryptographic generator.
package enum Tokens {
    /// 256 random bits, base64url without padding (43 characters).
    package static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// A child's resume token: the room's code, a dot and 256 random bits, so that a token of another
    /// room is told apart from a wrong one (`RoomState.room(ofResumeToken:)`).
    package static func resume(room code: String) -> String {
        "\(code).\(generate())"
    }

    /// A room code of `digits` digits (6 to 12): short enough to type on a tablet, so guessable by design,
    /// which is why hellos that prove nothing are limited per address (docs/operations.md, "Guessing room
    /// codes"). Never starts with 0 (some keyboards and people drop it).
    package static func roomCode(digits: Int = 6) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = min(max(digits, 6), 12)
        var low = 1
        for _ in 1..<digits { low *= 10 }
        return String(Int.random(in: low...(low * 10 - 1), using: &generator))
    }
}
