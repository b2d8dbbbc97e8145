import COpenSSL

/// A key pair made by OpenSSL in a test, as an authenticator or an identity provider holds one: its
/// public numbers (as COSE keys and JWKs carry them) and its signatures. For tests only.
public final class TestKeyPair: @unchecked Sendable {
    public enum Kind: Sendable {
        case rsa(bits: Int32)
        case p256
        case ed25519
    }

    // Immutable after init: OpenSSL only reads it.
    private let pointer: OpaquePointer
    public let kind: Kind

    public init(_ kind: Kind) {
        self.kind = kind
        let name = switch kind {
        case .rsa: "RSA"
        case .p256: "EC"
        case .ed25519: "ED25519"
        }
        let context = EVP_PKEY_CTX_new_from_name(nil, name, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        switch kind {
        case .rsa(let bits): precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1)
        case .p256: precondition(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1)
        case .ed25519: break
        }
        var key: OpaquePointer?
        precondition(EVP_PKEY_generate(context, &key) == 1)
        pointer = key!
    }

    deinit { EVP_PKEY_free(pointer) }

    /// An RSA key's modulus and public exponent, big-endian.
    public var rsaNumbers: (n: [UInt8], e: [UInt8]) { (number(OSSL_PKEY_PARAM_RSA_N), number(OSSL_PKEY_PARAM_RSA_E)) }

    /// A P-256 key's point, 32 bytes each.
    public var point: (x: [UInt8], y: [UInt8]) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        precondition(EVP_PKEY_get_octet_string_param(pointer, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length) == 1 && length == 65)
        return (Array(point[1..<33]), Array(point[33..<65]))
    }

    /// An Ed25519 key's 32 bytes.
    public var rawPublicKey: [UInt8] {
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        precondition(EVP_PKEY_get_raw_public_key(pointer, &raw, &length) == 1 && length == 32)
        return raw
    }

    private func number(_ name: String) -> [UInt8] {
        var number: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(pointer, name, &number) == 1)
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }

    /// The signature over `message`: SHA-256 with PKCS #1 v1.5 for RSA and with ECDSA (DER-encoded) for
    /// P-256; pure Ed25519.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        let digest: OpaquePointer? = if case .ed25519 = kind { nil } else { EVP_sha256() }
        precondition(EVP_DigestSignInit(context, nil, digest, nil, pointer) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        return Array(signature.prefix(length))
    }

    /// A DER ECDSA signature as its two numbers side by side, 32 bytes each (JOSE's form), read by OpenSSL.
    public static func rawECDSA(der signature: [UInt8]) -> [UInt8] {
        let value = signature.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var start: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &start, buffer.count)
        }!
        defer { ECDSA_SIG_free(value) }
        var raw = [UInt8](repeating: 0, count: 64)
        precondition(BN_bn2binpad(ECDSA_SIG_get0_r(value), &raw, 32) == 32)
        raw.withUnsafeMutableBufferPointer { buffer in
            precondition(BN_bn2binpad(ECDSA_SIG_get0_s(value), buffer.baseAddress! + 32, 32) == 32)
        }
        return raw
    }
}
