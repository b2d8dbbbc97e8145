import COpenSSL
import SignatureKeys

/// The COSE algorithms a passkey may use here (IANA's COSE registry): what every platform's authenticators
/// make (ES256 almost always, RS256 on some Windows Hello, EdDSA on some security keys).
public enum COSEAlgorithm: Int, Sendable, CaseIterable {
    case es256 = -7
    case edDSA = -8
    case rs256 = -257
}

/// A credential's public key, read from its COSE_Key into a `VerifyingKey` (OpenSSL checks it).
public final class PublicKey: Sendable {
    private let key: VerifyingKey
    public let algorithm: COSEAlgorithm

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
    public init(cose key: CBOR) throws(WebAuthnError) {
        guard key.pairs != nil else { throw .invalidPublicKey("not a CBOR map") }
        guard let algorithmNumber = key[3]?.int else { throw .invalidPublicKey("no algorithm") }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmNumber) else { throw .unsupportedAlgorithm(algorithmNumber) }
        let keyType = key[1]?.int
        switch algorithm {
        case .es256:
            guard keyType == 2, key[-1]?.int == 1 else { throw .invalidPublicKey("ES256 needs an EC2 key on P-256") }
            self.key = try Self.read { () throws(KeyRefusal) in try .p256(x: key[-2]?.bytes ?? [], y: key[-3]?.bytes ?? []) }
        case .edDSA:
            guard keyType == 1, key[-1]?.int == 6 else { throw .invalidPublicKey("EdDSA needs an OKP key on Ed25519") }
            self.key = try Self.read { () throws(KeyRefusal) in try .ed25519(key[-2]?.bytes ?? []) }
        case .rs256:
            guard keyType == 3 else { throw .invalidPublicKey("RS256 needs an RSA key") }
            self.key = try Self.read { () throws(KeyRefusal) in try .rsa(modulus: key[-1]?.bytes ?? [], exponent: key[-2]?.bytes ?? []) }
        }
        self.algorithm = algorithm
    }

    /// Whether `signature` is this key's over `message` (SHA-256 for ES256 and RS256 with PKCS #1 v1.5
    /// padding, the ECDSA signature DER-encoded as WebAuthn sends it; pure Ed25519 for EdDSA).
    public func verify(signature: [UInt8], over message: [UInt8]) -> Bool {
        signature.count <= WebAuthnLimits.signature && key.verify(signature: signature, over: message)
    }

    private static func read(_ make: () throws(KeyRefusal) -> VerifyingKey) throws(WebAuthnError) -> VerifyingKey {
        do throws(KeyRefusal) {
            return try make()
        } catch {
            throw .invalidPublicKey(error.reason)
        }
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
