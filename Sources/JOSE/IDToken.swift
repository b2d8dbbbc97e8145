import FoundationEssentials
import Sodium

/// What this sign-in expects of its ID token (OpenID Connect Core §3.1.3.7).
public struct IDTokenExpectation: Sendable {
    /// The provider's issuer identifier, exactly as its discovery document gives it.
    public var issuer: String
    /// This relying party's client id at the provider.
    public var clientID: String
    /// The nonce this sign-in sent in its authorization request.
    public var nonce: String
    /// Seconds since 1970 (the caller's clock, injectable in tests).
    public var now: Int64
    /// How far the provider's clock may be from ours.
    public var allowedSkew: Int64
    /// How old a token fresh from the token endpoint may be.
    public var maximumAge: Int64

    public init(issuer: String, clientID: String, nonce: String, now: Int64, allowedSkew: Int64 = 120, maximumAge: Int64 = 600) {
        self.issuer = issuer
        self.clientID = clientID
        self.nonce = nonce
        self.now = now
        self.allowedSkew = allowedSkew
        self.maximumAge = maximumAge
    }
}

/// The claims StoryCircle reads from a verified ID token; every other claim is ignored and never stored.
public struct IDTokenClaims: Sendable, Equatable {
    public var issuer: String
    public var subject: String
    public var audience: [String]
    public var authorizedParty: String?
    public var expires: Int64
    public var issuedAt: Int64
    public var notBefore: Int64?
    public var nonce: String?
    public var email: String?
    /// Whether the provider says it verified `email` (absent means no).
    public var emailVerified: Bool

    public init(
        issuer: String, subject: String, audience: [String], authorizedParty: String? = nil, expires: Int64, issuedAt: Int64,
        notBefore: Int64? = nil, nonce: String? = nil, email: String? = nil, emailVerified: Bool = false
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.authorizedParty = authorizedParty
        self.expires = expires
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.nonce = nonce
        self.email = email
        self.emailVerified = emailVerified
    }
}

public enum IDToken {
    /// The claims of `token` once its signature verifies with `keys` and every check of `expected` holds.
    /// The signature is checked before the payload is read.
    public static func verify(_ token: String, keys: JSONWebKeySet, expecting expected: IDTokenExpectation) throws(JOSEError) -> IDTokenClaims {
        let jws = try CompactJWS(token)
        try jws.verify(with: keys)
        let claims = try parse(jws.payload)
        try check(claims, expected)
        return claims
    }

    static func check(_ claims: IDTokenClaims, _ expected: IDTokenExpectation) throws(JOSEError) {
        guard claims.issuer == expected.issuer else { throw .wrongIssuer }
        guard claims.audience.contains(expected.clientID) else { throw .wrongAudience }
        if claims.audience.count > 1 || claims.authorizedParty != nil {
            guard claims.authorizedParty == expected.clientID else { throw .wrongAuthorizedParty }
        }
        let now = expected.now, skew = expected.allowedSkew
        guard now < claims.expires.addingReportingOverflow(skew).partialValue else { throw .expired }
        if let notBefore = claims.notBefore, notBefore > now + skew { throw .notYetValid }
        guard claims.issuedAt <= now + skew else { throw .issuedInTheFuture }
        guard claims.issuedAt >= now - skew - expected.maximumAge else { throw .issuedTooLongAgo }
        guard let nonce = claims.nonce, !nonce.isEmpty, Sodium.constantTimeEquals(Array(nonce.utf8), Array(expected.nonce.utf8)) else {
            throw .nonceMismatch
        }
    }

    private struct Fields: Decodable {
        var iss: String?
        var sub: String?
        var aud: Audience?
        var azp: String?
        var exp: Double?
        var iat: Double?
        var nbf: Double?
        var nonce: String?
        var email: String?
        var email_verified: Flag?
    }

    /// `aud` is one string or an array of them (RFC 7519 §4.1.3).
    private struct Audience: Decodable {
        var values: [String]
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) {
                values = [one]
            } else {
                values = try container.decode([String].self)
            }
        }
    }

    /// `email_verified` is a boolean; some providers send it as the string "true".
    private struct Flag: Decodable {
        var value: Bool
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                value = flag
            } else {
                value = try container.decode(String.self) == "true"
            }
        }
    }

    static func parse(_ payload: [UInt8]) throws(JOSEError) -> IDTokenClaims {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(payload))
        } catch {
            throw .malformed("the payload is not a JSON object of claims")
        }
        guard let issuer = fields.iss, !issuer.isEmpty else { throw .missingClaim("iss") }
        guard let subject = fields.sub, (1...255).contains(subject.utf8.count) else { throw .missingClaim("sub") }
        guard let audience = fields.aud?.values, !audience.isEmpty else { throw .missingClaim("aud") }
        guard let expires = seconds(fields.exp) else { throw .missingClaim("exp") }
        guard let issuedAt = seconds(fields.iat) else { throw .missingClaim("iat") }
        var notBefore: Int64?
        if fields.nbf != nil {
            guard let value = seconds(fields.nbf) else { throw .missingClaim("nbf") }
            notBefore = value
        }
        let texts = [issuer] + audience + [fields.azp, fields.nonce, fields.email].compactMap { $0 }
        guard texts.allSatisfy({ $0.utf8.count <= JOSELimits.text }), audience.count <= 16 else { throw .tooLarge(field: "claim") }
        return IDTokenClaims(
            issuer: issuer, subject: subject, audience: audience, authorizedParty: fields.azp, expires: expires, issuedAt: issuedAt,
            notBefore: notBefore, nonce: fields.nonce, email: fields.email, emailVerified: fields.email_verified?.value ?? false)
    }

    /// A NumericDate (RFC 7519 §2): seconds, possibly fractional; nil when not a sane time.
    private static func seconds(_ value: Double?) -> Int64? {
        guard let value, value.isFinite, value >= 0, value < 1e12 else { return nil }
        return Int64(value)
    }
}
