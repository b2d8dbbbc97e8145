import Sodium
import COpenSSL
import SignatureKeysTesting
import Testing
import WebAuthn

/// A key pair made by OpenSSL, as an authenticator holds one: its COSE_Key and its signatures.
final class TestKey: Sendable {
    let pair: TestKeyPair
    let algorithm: COSEAlgorithm

    private init(_ pair: TestKeyPair, _ algorithm: COSEAlgorithm) {
        self.pair = pair
        self.algorithm = algorithm
    }

    static func generate(_ algorithm: COSEAlgorithm, rsaBits: Int32 = 2_048) -> TestKey {
        let kind: TestKeyPair.Kind = switch algorithm {
        case .es256: .p256
        case .edDSA: .ed25519
        case .rs256: .rsa(bits: rsaBits)
        }
        return TestKey(TestKeyPair(kind), algorithm)
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
            let point = pair.point
            return .map([
                CBORPair(CBOR(1), CBOR(2)), CBORPair(CBOR(3), CBOR(-7)), CBORPair(CBOR(-1), CBOR(1)),
                CBORPair(CBOR(-2), .bytes(point.x)), CBORPair(CBOR(-3), .bytes(point.y)),
            ])
        case .edDSA:
            return .map([CBORPair(CBOR(1), CBOR(1)), CBORPair(CBOR(3), CBOR(-8)), CBORPair(CBOR(-1), CBOR(6)), CBORPair(CBOR(-2), .bytes(pair.rawPublicKey))])
        case .rs256:
            let numbers = pair.rsaNumbers
            return .map([
                CBORPair(CBOR(1), CBOR(3)), CBORPair(CBOR(3), CBOR(-257)),
                CBORPair(CBOR(-1), .bytes(numbers.n)), CBORPair(CBOR(-2), .bytes(numbers.e)),
            ])
        }
    }

    var coseBytes: [UInt8] { cose.encoded()! }

    /// What an authenticator signs with this key: SHA-256 for ES256 (DER) and RS256 (PKCS #1 v1.5), pure Ed25519.
    func sign(_ message: [UInt8]) -> [UInt8] { pair.sign(message) }
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
