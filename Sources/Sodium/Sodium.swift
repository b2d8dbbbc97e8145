import CSodium

/// libsodium, wrapped once: keyed message authentication, comparison in constant time, and random bytes.
/// The one target that imports it; everything else asks here.
public enum Sodium {
    /// `sodium_init` once, before any other call (it is safe to call again; it picks the fastest
    /// implementations and seeds the generator). A process that cannot initialise it must not mint keys.
    private static let initialised: Bool = sodium_init() >= 0

    /// HMAC-SHA-256 of `message` under `key` (32 bytes).
    public static func hmacSHA256(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(initialised, "libsodium could not be initialised")
        var state = crypto_auth_hmacsha256_state()
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        // An empty array may have no storage at all; these calls want a pointer whatever the length.
        let (keyBytes, messageBytes) = (key.isEmpty ? [0] : key, message.isEmpty ? [0] : message)
        keyBytes.withUnsafeBufferPointer { bytes in
            _ = crypto_auth_hmacsha256_init(&state, bytes.baseAddress!, key.count)
        }
        messageBytes.withUnsafeBufferPointer { bytes in
            _ = crypto_auth_hmacsha256_update(&state, bytes.baseAddress!, UInt64(message.count))
        }
        mac.withUnsafeMutableBufferPointer { mac in
            _ = crypto_auth_hmacsha256_final(&state, mac.baseAddress!)
        }
        return mac
    }

    /// Whether `a` and `b` are the same bytes, in a time that depends only on their length (`sodium_memcmp`):
    /// how far two secrets agree is never measurable. Different lengths are unequal at once (lengths are
    /// not secret here: every MAC and digest compared has a fixed length).
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in sodium_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
        }
    }

    /// `count` bytes from the system's cryptographic generator.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(initialised, "libsodium could not be initialised")
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return bytes
    }
}
