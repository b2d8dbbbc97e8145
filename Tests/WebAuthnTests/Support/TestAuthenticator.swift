import Sodium
import COpenSSL
import Testing
import WebAuthn

/// A key pair made by OpenSSL, as an authenticator holds one: its COSE_Key and its signatures.
final class TestKey: @unchecked Sendable {
    let pointer: OpaquePointer
    let algorithm: COSEAlgorithm

    private init(_ pointer: OpaquePointer, _ algorithm: COSEAlgorithm) {
        self.pointer = pointer
        self.algorithm = algorithm
    }

    deinit { EVP_PKEY_free(pointer) }

    static func generate(_ algorithm: COSEAlgorithm, rsaBits: Int32 = 2_048) -> TestKey {
        let name = switch algorithm {
        case .es256: "EC"
        case .edDSA: "ED25519"
        case .rs256: "RSA"
        }
        let context = EVP_PKEY_CTX_new_from_name(nil, name, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        if algorithm == .es256 { precondition(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1) }
        if algorithm == .rs256 { precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, rsaBits) == 1) }
        var key: OpaquePointer?
        precondition(EVP_PKEY_generate(context, &key) == 1)
        return TestKey(key!, algorithm)
    }

    /// Keys are slow to make (RSA above all): one of each for the whole run.
    static let es256 = generate(.es256)
    static let edDSA = generate(.edDSA)
    static let rs256 = generate(.rs256)

    static func shared(_ algorithm: COSEAlgorithm) -> TestKey {
        switch algorithm {
        case .es256: es256
        case .edDSA: edDSA
        case .rs256: rs256
        }
    }

    /// The public key as a COSE_Key map, as authenticators encode it.
    var cose: CBOR {
        switch algorithm {
        case .es256:
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            precondition(EVP_PKEY_get_octet_string_param(pointer, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length) == 1 && length == 65)
            return .map([
                CBORPair(CBOR(1), CBOR(2)), CBORPair(CBOR(3), CBOR(-7)), CBORPair(CBOR(-1), CBOR(1)),
                CBORPair(CBOR(-2), .bytes(Array(point[1..<33]))), CBORPair(CBOR(-3), .bytes(Array(point[33..<65]))),
            ])
        case .edDSA:
            var raw = [UInt8](repeating: 0, count: 32)
            var length = raw.count
            precondition(EVP_PKEY_get_raw_public_key(pointer, &raw, &length) == 1 && length == 32)
            return .map([CBORPair(CBOR(1), CBOR(1)), CBORPair(CBOR(3), CBOR(-8)), CBORPair(CBOR(-1), CBOR(6)), CBORPair(CBOR(-2), .bytes(raw))])
        case .rs256:
            return .map([
                CBORPair(CBOR(1), CBOR(3)), CBORPair(CBOR(3), CBOR(-257)),
                CBORPair(CBOR(-1), .bytes(number(OSSL_PKEY_PARAM_RSA_N))), CBORPair(CBOR(-2), .bytes(number(OSSL_PKEY_PARAM_RSA_E))),
            ])
        }
    }

    var coseBytes: [UInt8] { cose.encoded()! }

    private func number(_ name: String) -> [UInt8] {
        var number: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(pointer, name, &number) == 1)
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }

    /// What an authenticator signs with this key: SHA-256 for ES256 (DER) and RS256 (PKCS #1 v1.5), pure Ed25519.
    func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, algorithm == .edDSA ? nil : EVP_sha256(), nil, pointer) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        return Array(signature.prefix(length))
    }
}

/// SHA-256, made here with OpenSSL directly (not the code under test).
func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    precondition(EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil) == 1)
    return digest
}

/// An authenticator and the browser around it: makes the responses `navigator.credentials.create()` and
/// `.get()` would return, each part changeable to make the response a refusal must catch.
struct TestAuthenticator {
    var key: TestKey
    var credentialID: [UInt8] = Array(0..<16).map { UInt8($0 * 7 + 1) }
    var aaguid: [UInt8] = [UInt8](repeating: 0, count: 16)

    init(_ algorithm: COSEAlgorithm) { key = TestKey.shared(algorithm) }

    static let rpID = "school.example"
    static let origin = "https://school.example:8443"
    static let relyingParty = RelyingParty(id: rpID, origins: [origin, "https://localhost:8443"])

    static func clientDataJSON(type: String, challenge: [UInt8], origin: String = origin, crossOrigin: Bool = false) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":\#(crossOrigin)}"#.utf8)
    }

    static let present: AuthenticatorData.Flags = [.userPresent, .userVerified, .backupEligible]

    func authenticatorData(rpID: String = rpID, flags: AuthenticatorData.Flags, signCount: UInt32, publicKey: [UInt8]? = nil) -> [UInt8] {
        var bytes = sha256(Array(rpID.utf8)) + [flags.rawValue]
        bytes += [UInt8(signCount >> 24), UInt8(signCount >> 16 & 0xFF), UInt8(signCount >> 8 & 0xFF), UInt8(signCount & 0xFF)]
        if flags.contains(.attestedCredentialData) {
            bytes += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
            bytes += publicKey ?? key.coseBytes
        }
        return bytes
    }

    struct Registration {
        var clientDataJSON: [UInt8]
        var attestationObject: [UInt8]
    }

    /// A registration response. `format` "packed" signs a self-attestation with the credential's key.
    func register(
        challenge: [UInt8], origin: String = origin, rpID: String = rpID, type: String = "webauthn.create",
        flags: AuthenticatorData.Flags = present.union(.attestedCredentialData), signCount: UInt32 = 0, format: String = "none",
        statement: CBOR? = nil, publicKey: [UInt8]? = nil, crossOrigin: Bool = false
    ) -> Registration {
        let client = Self.clientDataJSON(type: type, challenge: challenge, origin: origin, crossOrigin: crossOrigin)
        let data = authenticatorData(rpID: rpID, flags: flags, signCount: signCount, publicKey: publicKey)
        let attestation: CBOR = statement ?? (format == "packed"
            ? .map([CBORPair(.text("alg"), CBOR(key.algorithm.rawValue)), CBORPair(.text("sig"), .bytes(key.sign(data + sha256(client))))])
            : .map([]))
        let object = CBOR.map([CBORPair(.text("fmt"), .text(format)), CBORPair(.text("attStmt"), attestation), CBORPair(.text("authData"), .bytes(data))])
        return Registration(clientDataJSON: client, attestationObject: object.encoded()!)
    }

    struct Assertion {
        var clientDataJSON: [UInt8]
        var authenticatorData: [UInt8]
        var signature: [UInt8]
    }

    func assert(
        challenge: [UInt8], signCount: UInt32, origin: String = origin, rpID: String = rpID, type: String = "webauthn.get",
        flags: AuthenticatorData.Flags = present, signer: TestKey? = nil
    ) -> Assertion {
        let client = Self.clientDataJSON(type: type, challenge: challenge, origin: origin)
        let data = authenticatorData(rpID: rpID, flags: flags, signCount: signCount)
        return Assertion(clientDataJSON: client, authenticatorData: data, signature: (signer ?? key).sign(data + sha256(client)))
    }
}

/// The WebAuthnError `body` throws; nil when it throws nothing (any other error is a failure).
func refusal<Value>(_ body: () throws -> Value) -> WebAuthnError? {
    do {
        _ = try body()
        return nil
    } catch let error as WebAuthnError {
        return error
    } catch {
        Issue.record("not a WebAuthnError: \(error)")
        return nil
    }
}
