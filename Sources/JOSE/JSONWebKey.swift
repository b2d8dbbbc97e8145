import FoundationEssentials
import SignatureKeys

/// One signing key of a provider's key set (RFC 7517, RFC 7518 §6): RSA (n, e) for RS256, EC on P-256
/// (x, y) for ES256.
public struct JSONWebKey: Sendable {
    public let kid: String?
    /// The algorithm the key is for.
    public let algorithm: JWSAlgorithm
    public let key: VerifyingKey
}

/// A provider's key set, as its `jwks_uri` serves it. Keys of other types, curves, algorithms or uses are
/// skipped (RFC 7517 §5: a set may hold keys a client does not understand); a key of a known type that
/// OpenSSL refuses is remembered by its `kid`, so a token signed with it is refused for that reason.
public struct JSONWebKeySet: Sendable {
    public let keys: [JSONWebKey]
    /// The `kid`s of keys that were refused, and why.
    public let refused: [String: String]

    private struct Document: Decodable {
        var keys: [Fields]
    }

    private struct Fields: Decodable {
        var kty: String?
        var kid: String?
        var alg: String?
        var use: String?
        var crv: String?
        var n: String?
        var e: String?
        var x: String?
        var y: String?
    }

    public init(json: [UInt8]) throws(JOSEError) {
        guard json.count <= JOSELimits.keySet else { throw .tooLarge(field: "key set") }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(json))
        } catch {
            throw .malformedKeySet("not a JSON object with a keys array")
        }
        guard document.keys.count <= JOSELimits.keys else { throw .tooLarge(field: "key set") }
        var keys: [JSONWebKey] = []
        var refused: [String: String] = [:]
        for fields in document.keys {
            if let kid = fields.kid, kid.utf8.count > JOSELimits.text { continue }
            do throws(KeyRefusal) {
                if let key = try Self.key(fields) { keys.append(key) }
            } catch {
                if let kid = fields.kid { refused[kid] = error.reason }
            }
        }
        self.keys = keys
        self.refused = refused
    }

    public init(keys: [JSONWebKey]) {
        self.keys = keys
        refused = [:]
    }

    /// The key a token with header `kid` and `algorithm` is verified with.
    func key(for kid: String?, algorithm: JWSAlgorithm) throws(JOSEError) -> JSONWebKey {
        if let kid, let reason = refused[kid] { throw .unusableKey(reason) }
        let named = keys.filter { kid == nil || $0.kid == kid }
        guard !named.isEmpty else { throw .unknownKey(kid) }
        let usable = named.filter { $0.algorithm == algorithm }
        guard let key = usable.first else { throw .unusableKey("the key is not for \(algorithm.rawValue)") }
        // Without a kid the key must be the only candidate (OpenID Connect Core §10.1).
        guard kid != nil || usable.count == 1 else { throw .unknownKey(nil) }
        return key
    }

    /// The key in `fields`, nil when it is of a kind this set skips.
    private static func key(_ fields: Fields) throws(KeyRefusal) -> JSONWebKey? {
        if let use = fields.use, use != "sig" { return nil }
        let algorithm: JWSAlgorithm
        switch (fields.kty, fields.crv) {
        case ("RSA", _): algorithm = .rs256
        case ("EC", "P-256"): algorithm = .es256
        default: return nil
        }
        if let named = fields.alg, named != algorithm.rawValue { return nil }
        let key: VerifyingKey
        switch algorithm {
        case .rs256:
            guard let n = number(fields.n), let e = number(fields.e) else { throw KeyRefusal("an RSA key needs n and e") }
            key = try .rsa(modulus: n, exponent: e)
        case .es256:
            guard let x = number(fields.x), let y = number(fields.y) else { throw KeyRefusal("a P-256 key needs 32-byte x and y") }
            key = try .p256(x: x, y: y)
        }
        return JSONWebKey(kid: fields.kid, algorithm: algorithm, key: key)
    }

    private static func number(_ text: String?) -> [UInt8]? {
        guard let text, !text.isEmpty, text.utf8.count <= 1_400 else { return nil }
        return try? CompactJWS.decode(Array(text.utf8)[...], "key")
    }
}
