import COpenSSL
import Glibc

/// The COSE algorithms a passkey may use here (IANA's COSE registry): what every platform's authenticators
/// make (ES256 almost always, RS256 on some Windows Hello, EdDSA on some security keys).
public enum COSEAlgorithm: Int, Sendable, CaseIterable {
    case es256 = -7
    case edDSA = -8
    case rs256 = -257
}

/// A credential's public key, read from its COSE_Key into an OpenSSL key (`EVP_PKEY_fromdata`,
/// `EVP_PKEY_new_raw_public_key`) and checked by OpenSSL (`EVP_PKEY_public_check`: the point is on the
/// curve, the RSA exponent is sane). Signatures are verified with `EVP_DigestVerify`.
public final class PublicKey: @unchecked Sendable {
    // Immutable after init: OpenSSL only reads it (verification makes its own context each time).
    private let pointer: OpaquePointer
    public let algorithm: COSEAlgorithm

    /// RSA moduli accepted: 2048 bits and up (smaller are breakable), at most 4096 (verification cost).
    static let rsaBits = 2_048...4_096

    private init(taking pointer: OpaquePointer, algorithm: COSEAlgorithm) {
        self.pointer = pointer
        self.algorithm = algorithm
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The key in a COSE_Key's CBOR bytes (as stored in `PasskeyRecord.publicKey`).
    public convenience init(cose bytes: [UInt8]) throws(WebAuthnError) {
        let key: CBOR
        do {
            key = try CBOR.decode(bytes, maxBytes: WebAuthnLimits.authenticatorData, maxDepth: WebAuthnLimits.cborDepth)
        } catch {
            throw .invalidPublicKey(error.description)
        }
        try self.init(cose: key)
    }

    /// The key in a COSE_Key (RFC 9052/9053): kty 2 (EC2) with crv 1 (P-256) for ES256, kty 1 (OKP) with
    /// crv 6 (Ed25519) for EdDSA, kty 3 (RSA) for RS256; `alg` is required (WebAuthn's credential keys
    /// always carry it) and must agree with the key type.
    public convenience init(cose key: CBOR) throws(WebAuthnError) {
        guard key.pairs != nil else { throw .invalidPublicKey("not a CBOR map") }
        guard let algorithmNumber = key[3]?.int else { throw .invalidPublicKey("no algorithm") }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmNumber) else { throw .unsupportedAlgorithm(algorithmNumber) }
        let keyType = key[1]?.int
        let pointer: OpaquePointer
        switch algorithm {
        case .es256:
            guard keyType == 2, key[-1]?.int == 1 else { throw .invalidPublicKey("ES256 needs an EC2 key on P-256") }
            guard let x = key[-2]?.bytes, let y = key[-3]?.bytes, x.count == 32, y.count == 32 else {
                throw .invalidPublicKey("a P-256 key needs 32-byte x and y")
            }
            pointer = try Self.fromData(type: "EC") { parameters in
                parameters.text(OSSL_PKEY_PARAM_GROUP_NAME, "P-256") && parameters.octets(OSSL_PKEY_PARAM_PUB_KEY, [0x04] + x + y)
            }
        case .edDSA:
            guard keyType == 1, key[-1]?.int == 6 else { throw .invalidPublicKey("EdDSA needs an OKP key on Ed25519") }
            guard let x = key[-2]?.bytes, x.count == 32 else { throw .invalidPublicKey("an Ed25519 key needs a 32-byte x") }
            guard let made = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, x, x.count) else {
                throw Self.refused("OpenSSL refused the Ed25519 key")
            }
            pointer = made
        case .rs256:
            guard keyType == 3 else { throw .invalidPublicKey("RS256 needs an RSA key") }
            guard let n = key[-1]?.bytes, let e = key[-2]?.bytes, !n.isEmpty, (1...8).contains(e.count) else {
                throw .invalidPublicKey("an RSA key needs n and e")
            }
            pointer = try Self.fromData(type: "RSA") { parameters in
                parameters.number(OSSL_PKEY_PARAM_RSA_N, n) && parameters.number(OSSL_PKEY_PARAM_RSA_E, e)
            }
        }
        self.init(taking: pointer, algorithm: algorithm)
        if algorithm == .rs256, !Self.rsaBits.contains(Int(EVP_PKEY_get_bits(pointer))) {
            throw .invalidPublicKey("the RSA key has \(EVP_PKEY_get_bits(pointer)) bits")
        }
        try check()
    }

    /// Whether `signature` is this key's over `message` (SHA-256 for ES256 and RS256 with PKCS #1 v1.5
    /// padding, the ECDSA signature DER-encoded as WebAuthn sends it; pure Ed25519 for EdDSA).
    public func verify(signature: [UInt8], over message: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= WebAuthnLimits.signature, let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()  // a refused signature leaves a reason nobody reads
        }
        let digest = algorithm == .edDSA ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(context, nil, digest, nil, pointer) == 1 else { return false }
        let storage = message.isEmpty ? [0] : message
        return storage.withUnsafeBufferPointer { bytes in
            EVP_DigestVerify(context, signature, signature.count, bytes.baseAddress, message.count) == 1
        }
    }

    private func check() throws(WebAuthnError) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { throw Self.refused("cannot check the key") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check(context) == 1 else { throw Self.refused("OpenSSL's check refused the key") }
    }

    /// A public key of `type` from the parameters `fill` adds.
    private static func fromData(type: String, _ fill: (ParameterBuilder) -> Bool) throws(WebAuthnError) -> OpaquePointer {
        guard let builder = ParameterBuilder() else { throw refused("out of memory") }
        // The parameters point at the builder's copies of their names: it must outlive them.
        return try withExtendedLifetime(builder) { () throws(WebAuthnError) -> OpaquePointer in
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

    private static func refused(_ reason: String) -> WebAuthnError {
        ERR_clear_error()
        return .invalidPublicKey(reason)
    }
}

/// SHA-256 through OpenSSL's EVP interface.
enum Digest {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let storage = bytes.isEmpty ? [0] : bytes
        let done = storage.withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(done == 1 && length == 32, "SHA-256 failed")
        return digest
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

    /// A big-endian unsigned number (COSE's RSA n and e).
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
