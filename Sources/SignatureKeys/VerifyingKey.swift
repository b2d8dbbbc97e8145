import COpenSSL
import Glibc

/// Why OpenSSL would not take a public key: one sentence for a log or an administrator.
public struct KeyRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A public key that checks signatures, read into an OpenSSL key (`EVP_PKEY_fromdata`,
/// `EVP_PKEY_new_raw_public_key`) and checked by OpenSSL (`EVP_PKEY_public_check`: the point is on the
/// curve, the RSA exponent is sane). Passkeys (COSE keys) and ID tokens (JWKs) both describe their keys by
/// these numbers, so both read them here. Signatures are verified with `EVP_DigestVerify`.
public final class VerifyingKey: @unchecked Sendable {
    public enum Kind: Sendable, Equatable {
        /// RSA with SHA-256 and PKCS #1 v1.5 padding (RS256).
        case rsa
        /// ECDSA on P-256 with SHA-256 (ES256).
        case p256
        /// Pure Ed25519 (EdDSA).
        case ed25519
    }

    // Immutable after init: OpenSSL only reads it (verification makes its own context each time).
    private let pointer: OpaquePointer
    public let kind: Kind

    /// RSA moduli accepted: 2048 bits and up (smaller are breakable), at most 4096 (verification cost).
    public static let rsaBits = 2_048...4_096
    /// No signature here is longer (RSA-4096's are 512 bytes, a DER ECDSA one at most 72).
    public static let maximumSignature = 1_024

    private init(taking pointer: OpaquePointer, kind: Kind) throws(KeyRefusal) {
        self.pointer = pointer
        self.kind = kind
        if kind == .rsa, !Self.rsaBits.contains(Int(EVP_PKEY_get_bits(pointer))) {
            throw KeyRefusal("the RSA key has \(EVP_PKEY_get_bits(pointer)) bits")
        }
        try check()
    }

    deinit { EVP_PKEY_free(pointer) }

    /// An RSA key from its modulus and public exponent (big-endian, unsigned).
    public static func rsa(modulus: [UInt8], exponent: [UInt8]) throws(KeyRefusal) -> VerifyingKey {
        guard !modulus.isEmpty, modulus.count <= 1_024, (1...8).contains(exponent.count) else { throw KeyRefusal("an RSA key needs n and e") }
        let pointer = try fromData(type: "RSA") { parameters in
            parameters.number(OSSL_PKEY_PARAM_RSA_N, modulus) && parameters.number(OSSL_PKEY_PARAM_RSA_E, exponent)
        }
        return try VerifyingKey(taking: pointer, kind: .rsa)
    }

    /// A P-256 key from its point's coordinates (32 bytes each).
    public static func p256(x: [UInt8], y: [UInt8]) throws(KeyRefusal) -> VerifyingKey {
        guard x.count == 32, y.count == 32 else { throw KeyRefusal("a P-256 key needs 32-byte x and y") }
        let pointer = try fromData(type: "EC") { parameters in
            parameters.text(OSSL_PKEY_PARAM_GROUP_NAME, "P-256") && parameters.octets(OSSL_PKEY_PARAM_PUB_KEY, [0x04] + x + y)
        }
        return try VerifyingKey(taking: pointer, kind: .p256)
    }

    /// An Ed25519 key from its 32 bytes.
    public static func ed25519(_ x: [UInt8]) throws(KeyRefusal) -> VerifyingKey {
        guard x.count == 32 else { throw KeyRefusal("an Ed25519 key needs a 32-byte x") }
        guard let pointer = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, x, x.count) else {
            throw refused("OpenSSL refused the Ed25519 key")
        }
        return try VerifyingKey(taking: pointer, kind: .ed25519)
    }

    /// Whether `signature` is this key's over `message` (SHA-256 for RSA with PKCS #1 v1.5 padding and for
    /// ECDSA, whose signature is DER-encoded; pure Ed25519).
    public func verify(signature: [UInt8], over message: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= Self.maximumSignature, let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()  // a refused signature leaves a reason nobody reads
        }
        let digest = kind == .ed25519 ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(context, nil, digest, nil, pointer) == 1 else { return false }
        let storage = message.isEmpty ? [0] : message
        return storage.withUnsafeBufferPointer { bytes in
            EVP_DigestVerify(context, signature, signature.count, bytes.baseAddress, message.count) == 1
        }
    }

    /// Whether an ECDSA signature given as its two numbers side by side (r || s, 32 bytes each: JOSE's
    /// form, RFC 7518 §3.4) is this P-256 key's over `message`. OpenSSL reads DER, so it is re-encoded.
    public func verify(rawECDSASignature signature: [UInt8], over message: [UInt8]) -> Bool {
        guard kind == .p256, signature.count == 64, let der = Self.der(rawECDSA: signature) else { return false }
        return verify(signature: der, over: message)
    }

    /// r || s as an ECDSA-Sig-Value (RFC 3279), encoded by OpenSSL.
    private static func der(rawECDSA signature: [UInt8]) -> [UInt8]? {
        guard let value = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(value) }
        guard let r = BN_bin2bn(signature, 32, nil) else { return nil }
        guard let s = Array(signature[32...]).withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 32, nil) }) else {
            BN_free(r)
            return nil
        }
        guard ECDSA_SIG_set0(value, r, s) == 1 else {  // on success the signature owns both numbers
            BN_free(r)
            BN_free(s)
            return nil
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(value, &output)
        guard length > 0, let output else { return nil }
        defer { CRYPTO_free(output, nil, 0) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    private func check() throws(KeyRefusal) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw Self.refused("cannot check the key") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check(context) == 1 else { throw Self.refused("OpenSSL's check refused the key") }
    }

    /// A public key of `type` from the parameters `fill` adds.
    private static func fromData(type: String, _ fill: (ParameterBuilder) -> Bool) throws(KeyRefusal) -> OpaquePointer {
        guard let builder = ParameterBuilder() else { throw refused("out of memory") }
        // The parameters point at the builder's copies of their names: it must outlive them.
        return try withExtendedLifetime(builder) { () throws(KeyRefusal) -> OpaquePointer in
            guard fill(builder), let parameters = OSSL_PARAM_BLD_to_param(builder.pointer) else { throw refused("cannot describe the key") }
            defer { OSSL_PARAM_free(parameters) }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw refused("no \(type) keys in OpenSSL") }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_fromdata_init(context) == 1,
                EVP_PKEY_fromdata(context, &key, sc_evp_pkey_public_key_selection(), parameters) == 1, let key
            else { throw refused("OpenSSL refused the \(type) key") }
            return key
        }
    }

    private static func refused(_ reason: String) -> KeyRefusal {
        ERR_clear_error()
        return KeyRefusal(reason)
    }
}

/// OpenSSL's OSSL_PARAM_BLD, which keeps the pointers it is given (names, strings, buffers, BIGNUMs) until
/// `OSSL_PARAM_BLD_to_param` copies the values (the names it never copies): Swift's temporary C strings and
/// array pointers would be gone by then, so every one is copied here and lives as long as the builder.
private final class ParameterBuilder {
    let pointer: OpaquePointer
    private var buffers: [UnsafeMutableRawPointer] = []
    private var numbers: [OpaquePointer] = []

    init?() {
        guard let pointer = OSSL_PARAM_BLD_new() else { return nil }
        self.pointer = pointer
    }

    deinit {
        OSSL_PARAM_BLD_free(pointer)
        numbers.forEach { BN_free($0) }
        buffers.forEach { free($0) }
    }

    func text(_ name: String, _ value: String) -> Bool {
        guard let name = keep(name), let value = keep(value) else { return false }
        return OSSL_PARAM_BLD_push_utf8_string(pointer, name, value, 0) == 1
    }

    func octets(_ name: String, _ bytes: [UInt8]) -> Bool {
        guard let name = keep(name), let copy = malloc(max(bytes.count, 1)) else { return false }
        buffers.append(copy)
        copy.copyMemory(from: bytes, byteCount: bytes.count)
        return OSSL_PARAM_BLD_push_octet_string(pointer, name, copy, bytes.count) == 1
    }

    /// A big-endian unsigned number (RSA's n and e).
    func number(_ name: String, _ bytes: [UInt8]) -> Bool {
        guard bytes.count <= 1_024, let name = keep(name), let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { return false }
        numbers.append(number)
        return OSSL_PARAM_BLD_push_BN(pointer, name, number) == 1
    }

    private func keep(_ text: String) -> UnsafePointer<CChar>? {
        guard let copy = strdup(text) else { return nil }
        buffers.append(UnsafeMutableRawPointer(copy))
        return UnsafePointer(copy)
    }
}
