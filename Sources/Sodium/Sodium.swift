import CSodium

/// libsodium, wrapped once: keyed message authentication, comparison in constant time, random bytes and
/// password hashing (Argon2id).
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

    // MARK: - Passwords

    /// Argon2id's cost, as OWASP's password storage cheat sheet gives it: 19 MiB of memory, 2 passes, one
    /// lane (libsodium always uses one). About 30 ms of one core: callers run it on threads of their own,
    /// never on Swift's cooperative pool.
    public static let passwordMemoryLimit = 19 * 1024 * 1024
    public static let passwordOpsLimit = 2
    /// Longer passwords are refused before hashing (`hashPassword`'s caller checks it; libsodium's own
    /// limit is far larger): the cost of a hash grows with what is hashed.
    public static let passwordMaximumBytes = 4096

    /// The password's Argon2id hash in libsodium's encoded form (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`),
    /// with a fresh random salt. Traps only when the system cannot give 19 MiB, as any allocation would.
    public static func hashPassword(_ password: String) -> String {
        precondition(initialised, "libsodium could not be initialised")
        // With its terminating NUL, so the buffer is never empty; the length passed leaves it out.
        let bytes = Array(password.utf8CString)
        var out = [CChar](repeating: 0, count: crypto_pwhash_strbytes())
        let result = bytes.withUnsafeBufferPointer { bytes in
            out.withUnsafeMutableBufferPointer { out in
                crypto_pwhash_str_alg(
                    out.baseAddress!, bytes.baseAddress!, UInt64(bytes.count - 1), UInt64(passwordOpsLimit), passwordMemoryLimit,
                    crypto_pwhash_alg_argon2id13()
                )
            }
        }
        precondition(result == 0, "Argon2id could not hash a password (out of memory)")
        return String(cString: out)
    }

    /// Whether `password` is the one `hash` was made from. The hash's own parameters are used, so hashes
    /// made at an older cost still verify. A hash that is not libsodium's Argon2id form never matches.
    public static func verifyPassword(_ password: String, hash: String) -> Bool {
        precondition(initialised, "libsodium could not be initialised")
        guard hash.hasPrefix("$argon2id$"), hash.utf8.count < crypto_pwhash_strbytes() else { return false }
        let bytes = Array(password.utf8CString)
        var encoded = Array(hash.utf8CString)
        encoded += [CChar](repeating: 0, count: max(0, crypto_pwhash_strbytes() - encoded.count))
        return bytes.withUnsafeBufferPointer { bytes in
            encoded.withUnsafeBufferPointer { encoded in
                crypto_pwhash_str_verify(encoded.baseAddress!, bytes.baseAddress!, UInt64(bytes.count - 1)) == 0
            }
        }
    }

    /// Whether `hash` was made at another cost than today's (or is not an Argon2id hash at all): after a
    /// successful sign-in its password should be hashed again and stored.
    public static func passwordNeedsRehash(_ hash: String) -> Bool {
        precondition(initialised, "libsodium could not be initialised")
        guard hash.hasPrefix("$argon2id$"), hash.utf8.count < crypto_pwhash_strbytes() else { return true }
        var encoded = Array(hash.utf8CString)
        encoded += [CChar](repeating: 0, count: max(0, crypto_pwhash_strbytes() - encoded.count))
        return encoded.withUnsafeBufferPointer { encoded in
            crypto_pwhash_str_needs_rehash(encoded.baseAddress!, UInt64(passwordOpsLimit), passwordMemoryLimit) != 0
        }
    }
}
