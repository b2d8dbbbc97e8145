import JOSE
import SignatureKeysTesting
import Sodium
import Testing

/// A provider's signing key, made by OpenSSL in the test: its JWK as a provider publishes it, and
/// tokens signed with it the way a provider signs them (ES256 as raw r || s, RFC 7518 §3.4).
final class SigningKey: Sendable {
    let pair: TestKeyPair
    let algorithm: JWSAlgorithm
    let kid: String

    init(_ algorithm: JWSAlgorithm, kid: String, rsaBits: Int32 = 2_048) {
        self.algorithm = algorithm
        self.kid = kid
        pair = TestKeyPair(algorithm == .rs256 ? .rsa(bits: rsaBits) : .p256)
    }

    /// Keys are slow to make (RSA above all): a few for the whole run.
    static let rsa = SigningKey(.rs256, kid: "rsa-1")
    static let otherRSA = SigningKey(.rs256, kid: "rsa-2")
    static let ec = SigningKey(.es256, kid: "ec-1")
    static let weakRSA = SigningKey(.rs256, kid: "weak", rsaBits: 1_024)

    /// The public key's JWK members (without `kid`).
    var members: [String: String] {
        switch algorithm {
        case .rs256:
            let numbers = pair.rsaNumbers
            return ["kty": "RSA", "n": Base64URL.encode(numbers.n), "e": Base64URL.encode(numbers.e)]
        case .es256:
            let point = pair.point
            return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(point.x), "y": Base64URL.encode(point.y)]
        }
    }

    func jwk(kid: String? = nil, extra: [String: String] = [:]) -> String {
        var all = members.merging(extra) { $1 }
        all["kid"] = kid ?? self.kid
        return "{" + all.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
    }

    /// The signature over `message`: PKCS #1 v1.5 for RS256, r || s for ES256 (or DER when `der`).
    func sign(_ message: [UInt8], der: Bool = false) -> [UInt8] {
        let signature = pair.sign(message)
        return algorithm == .es256 && !der ? TestKeyPair.rawECDSA(der: signature) : signature
    }
}

/// A compact JWS as a provider makes one: `header` and `claims` are JSON text, signed by `key` unless
/// `signature` is given.
func token(header: String, claims: String, key: SigningKey, signature: [UInt8]? = nil) -> String {
    let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
    return input + "." + Base64URL.encode(signature ?? key.sign(Array(input.utf8)))
}

func keySet(_ jwks: [String]) throws -> JSONWebKeySet {
    try JSONWebKeySet(json: Array(#"{"keys":[\#(jwks.joined(separator: ","))]}"#.utf8))
}

/// The JOSEError `body` throws; nil when it throws nothing (any other error is a failure).
func refusal<Value>(_ body: () throws -> Value) -> JOSEError? {
    do {
        _ = try body()
        return nil
    } catch let error as JOSEError {
        return error
    } catch {
        Issue.record("not a JOSEError: \(error)")
        return nil
    }
}
