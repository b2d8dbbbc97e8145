import CSodium

extension Sodium {
    /// SHA-256 of `bytes` (`crypto_hash_sha256`), as lowercase hex: the stored form of a session's secret.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digest = sha256(bytes)
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(digest.count * 2)
        for byte in digest {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// SHA-256 of `bytes` (`crypto_hash_sha256`): PKCE's S256 challenge, say.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let input = bytes.isEmpty ? [0] : bytes
        input.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { digest in
                _ = crypto_hash_sha256(digest.baseAddress!, input.baseAddress!, UInt64(bytes.count))
            }
        }
        return digest
    }
}
