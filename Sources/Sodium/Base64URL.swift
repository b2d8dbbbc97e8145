import Foundation

/// base64url without padding (RFC 4648 §5): the secrets StoryCircle makes (tokens, codes, session
/// cookies) and what WebAuthn encodes in JSON (challenges, credential ids, user handles).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        let standard = Data(bytes).base64EncodedString()
        return String(standard.filter { $0 != "=" }.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// Nil unless `text` is base64url, padded or not.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        if !standard.hasSuffix("=") {
            standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        }
        return Data(base64Encoded: standard).map { [UInt8]($0) }
    }
}
