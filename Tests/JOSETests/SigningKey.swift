import COpenSSL
import JOSE
import Sodium
import Testing

/// A provider's signing key, made by OpenSSL in the test: its JWK as a provider publishes it, and
/// tokens signed with it the way a provider signs them (ES256 as raw r || s, RFC 7518 §3.4).
final class SigningKey: @unchecked Sendable {
    let pointer: OpaquePointer
    let algorithm: JWSAlgorithm
    let kid: String

    init(_ algorithm: JWSAlgorithm, kid: String, rsaBits: Int32 = 2_048) {
        self.algorithm = algorithm
        self.kid = kid
        let context = EVP_PKEY_CTX_new_from_name(nil, algorithm == .rs256 ? "RSA" : "EC", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        if algorithm == .es256 { precondition(EVP_PKEY_CTX_set_group_name(context, "P-256") == 1) }
        if algorithm == .rs256 { precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, rsaBits) == 1) }
        var key: OpaquePointer?
        precondition(EVP_PKEY_generate(context, &key) == 1)
        pointer = key!
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Keys are slow to make (RSA above all): a few for the whole run.
    static let rsa = SigningKey(.rs256, kid: "rsa-1")
    static let otherRSA = SigningKey(.rs256, kid: "rsa-2")
    static let ec = SigningKey(.es256, kid: "ec-1")
    static let weakRSA = SigningKey(.rs256, kid: "weak", rsaBits: 1_024)

    /// The public key's JWK members (without `kid`).
    var members: [String: String] {
        switch algorithm {
        case .rs256:
            return ["kty": "RSA", "n": Base64URL.encode(number(OSSL_PKEY_PARAM_RSA_N)), "e": Base64URL.encode(number(OSSL_PKEY_PARAM_RSA_E))]
        case .es256:
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            precondition(EVP_PKEY_get_octet_string_param(pointer, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length) == 1 && length == 65)
            return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(Array(point[1..<33])), "y": Base64URL.encode(Array(point[33..<65]))]
        }
    }

    func jwk(kid: String? = nil, extra: [String: String] = [:]) -> String {
        var all = members.merging(extra) { $1 }
        all["kid"] = kid ?? self.kid
        return "{" + all.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
    }

    private func number(_ name: String) -> [UInt8] {
        var number: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(pointer, name, &number) == 1)
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }

    /// The signature over `message`: PKCS #1 v1.5 for RS256, r || s for ES256 (or DER when `der`).
    func sign(_ message: [UInt8], der: Bool = false) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        signature = Array(signature.prefix(length))
        guard algorithm == .es256, !der else { return signature }
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
