/// Why a token or a key set was refused. `code` is stable (for the audit trail's `sign_in_failed` reason
/// and the page shown); `description` is one sentence for a log or an administrator, never the token.
public enum JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An input is larger than its limit (`JOSELimits`), before anything in it was read.
    case tooLarge(field: String)
    /// Not a compact JWS: not three base64url parts, or a part that is not JSON.
    case malformed(String)
    /// `alg: none` or an HMAC algorithm: a token anyone (or anyone who knows the client secret) could make.
    case algorithmRefused(String)
    case unsupportedAlgorithm(String)
    /// The header names an extension this code does not understand (`crit`, RFC 7515 §4.1.11).
    case criticalHeader
    /// The key set has no key for the token's `kid` (the provider may have rotated its keys: fetch again).
    case unknownKey(String?)
    /// The key named by the token is not one for its algorithm, or OpenSSL refused it.
    case unusableKey(String)
    case malformedKeySet(String)
    case badSignature
    /// A claim the ID token must carry is absent or of the wrong type.
    case missingClaim(String)
    case wrongIssuer
    case wrongAudience
    /// Several audiences and no `azp`, or an `azp` that is not this client.
    case wrongAuthorizedParty
    case expired
    case notYetValid
    case issuedInTheFuture
    case issuedTooLongAgo
    /// The nonce is not the one this sign-in sent (a token from another sign-in, or replayed).
    case nonceMismatch

    public var code: String {
        switch self {
        case .tooLarge: "too_large"
        case .malformed: "malformed_token"
        case .algorithmRefused: "algorithm_refused"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .criticalHeader: "critical_header"
        case .unknownKey: "unknown_key"
        case .unusableKey: "unusable_key"
        case .malformedKeySet: "malformed_key_set"
        case .badSignature: "bad_signature"
        case .missingClaim: "missing_claim"
        case .wrongIssuer: "wrong_issuer"
        case .wrongAudience: "wrong_audience"
        case .wrongAuthorizedParty: "wrong_authorized_party"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .issuedInTheFuture: "issued_in_the_future"
        case .issuedTooLongAgo: "issued_too_long_ago"
        case .nonceMismatch: "nonce_mismatch"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let field): "the \(field) is larger than allowed"
        case .malformed(let reason): "the token is malformed: \(reason)"
        case .algorithmRefused(let name): "the token's algorithm \(name) is never accepted"
        case .unsupportedAlgorithm(let name): "the token's algorithm \(name) is not supported"
        case .criticalHeader: "the token has a critical header extension"
        case .unknownKey(let kid): "no key \(kid ?? "(unnamed)") in the provider's key set"
        case .unusableKey(let reason): "the provider's key cannot verify the token: \(reason)"
        case .malformedKeySet(let reason): "the provider's key set is malformed: \(reason)"
        case .badSignature: "the token's signature does not verify"
        case .missingClaim(let name): "the token has no valid \(name) claim"
        case .wrongIssuer: "the token was issued by another issuer"
        case .wrongAudience: "the token is for another client"
        case .wrongAuthorizedParty: "the token was issued to another client"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet"
        case .issuedInTheFuture: "the token was issued in the future"
        case .issuedTooLongAgo: "the token was issued too long ago"
        case .nonceMismatch: "the token's nonce is not this sign-in's"
        }
    }
}

/// Bounds on what a provider may send, checked before parsing.
public enum JOSELimits {
    /// A compact ID token (Microsoft's and Google's are 1–3 KB; group claims make them larger).
    public static let token = 16_384
    /// A key set document (Google's and Microsoft's are a few KB).
    public static let keySet = 65_536
    public static let keys = 64
    /// The longest `kid` or claim string kept.
    public static let text = 1_024
}
