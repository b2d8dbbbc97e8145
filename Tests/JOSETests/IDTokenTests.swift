import JOSE
import Testing

@Suite struct IDTokenTests {
    static let issuer = "https://id.school.example"
    static let now: Int64 = 1_800_000_000
    let keys = try! keySet([SigningKey.rsa.jwk(), SigningKey.ec.jwk()])
    let expected = IDTokenExpectation(issuer: issuer, clientID: "storycircle", nonce: "n-0S6_WzA2Mj", now: now)

    /// An ID token's claims as JSON, each overridable (a nil removes it).
    static func claims(_ changes: [String: String?] = [:]) -> String {
        var claims: [String: String] = [
            "iss": #""\#(issuer)""#, "sub": #""248289761001""#, "aud": #""storycircle""#, "nonce": #""n-0S6_WzA2Mj""#,
            "exp": "\(now + 300)", "iat": "\(now - 5)", "email": #""ada@school.example""#, "email_verified": "true",
        ]
        for (name, value) in changes { claims[name] = value }
        return "{" + claims.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    func signed(_ claims: String, key: SigningKey = .rsa) -> String {
        token(header: #"{"alg":"\#(key.algorithm.rawValue)","kid":"\#(key.kid)","typ":"JWT"}"#, claims: claims, key: key)
    }

    func verify(_ changes: [String: String?], expected: IDTokenExpectation? = nil) -> JOSEError? {
        refusal { try IDToken.verify(signed(Self.claims(changes)), keys: keys, expecting: expected ?? self.expected) }
    }

    @Test(arguments: [SigningKey.rsa, SigningKey.ec])
    func aValidIDTokenGivesItsClaims(key: SigningKey) throws {
        let claims = try IDToken.verify(signed(Self.claims(), key: key), keys: keys, expecting: expected)
        #expect(claims == IDTokenClaims(
            issuer: Self.issuer, subject: "248289761001", audience: ["storycircle"], authorizedParty: nil, expires: Self.now + 300,
            issuedAt: Self.now - 5, notBefore: nil, nonce: "n-0S6_WzA2Mj", email: "ada@school.example", emailVerified: true))
    }

    @Test func theSignatureIsCheckedBeforeTheClaims() {
        let forged = token(header: #"{"alg":"RS256","kid":"rsa-1"}"#, claims: Self.claims(["iss": #""https://evil.example""#]), key: .otherRSA)
        #expect(refusal { try IDToken.verify(forged, keys: keys, expecting: expected) } == .badSignature)
    }

    @Test func theIssuerMustBeExactlyTheProvidersOwn() {
        #expect(verify(["iss": #""https://evil.example""#]) == .wrongIssuer)
        #expect(verify(["iss": #""https://id.school.example/""#]) == .wrongIssuer)
    }

    @Test func theAudienceMustIncludeThisClient() throws {
        #expect(verify(["aud": #""another-app""#]) == .wrongAudience)
        #expect(verify(["aud": #"["another-app","third"]"#, "azp": #""another-app""#]) == .wrongAudience)
        #expect(verify(["aud": "[]"]) == .missingClaim("aud"))
        #expect(verify(["aud": #"["storycircle"]"#]) == nil)
    }

    @Test func severalAudiencesNeedThisClientAsAuthorizedParty() {
        #expect(verify(["aud": #"["storycircle","other"]"#]) == .wrongAuthorizedParty)
        #expect(verify(["aud": #"["storycircle","other"]"#, "azp": #""other""#]) == .wrongAuthorizedParty)
        #expect(verify(["aud": #""storycircle""#, "azp": #""other""#]) == .wrongAuthorizedParty)
        #expect(verify(["aud": #"["storycircle","other"]"#, "azp": #""storycircle""#]) == nil)
    }

    @Test func expiryAllowsTheClockSkewAndNoMore() {
        #expect(verify(["exp": "\(Self.now - 119)"]) == nil)
        #expect(verify(["exp": "\(Self.now - 120)"]) == .expired)
        #expect(verify(["exp": "\(Self.now - 86_400)"]) == .expired)
        var strict = expected
        strict.allowedSkew = 0
        #expect(verify(["exp": "\(Self.now)"], expected: strict) == .expired)
        #expect(verify(["exp": "\(Self.now + 1)"], expected: strict) == nil)
    }

    @Test func timesInTheFutureBeyondTheSkewAreRefused() {
        #expect(verify(["nbf": "\(Self.now + 120)"]) == nil)
        #expect(verify(["nbf": "\(Self.now + 121)"]) == .notYetValid)
        #expect(verify(["iat": "\(Self.now + 120)"]) == nil)
        #expect(verify(["iat": "\(Self.now + 121)"]) == .issuedInTheFuture)
        #expect(verify(["iat": "\(Self.now - 721)"]) == .issuedTooLongAgo)
        #expect(verify(["iat": "\(Self.now - 720)", "exp": "\(Self.now + 1).5"]) == nil)
    }

    @Test func theNonceMustBeThisSignInsOwn() {
        #expect(verify(["nonce": #""n-0S6_WzA2Mk""#]) == .nonceMismatch)
        #expect(verify(["nonce": nil]) == .nonceMismatch)
        #expect(verify(["nonce": #""""#]) == .nonceMismatch)
    }

    @Test(arguments: ["iss", "sub", "exp", "iat"])
    func requiredClaimsMustBePresent(name: String) {
        #expect(verify([name: nil]) == .missingClaim(name))
    }

    @Test func claimsOfTheWrongTypeAreRefused() {
        #expect(verify(["sub": #""""#]) == .missingClaim("sub"))
        #expect(verify(["sub": #""\#(String(repeating: "s", count: 256))""#]) == .missingClaim("sub"))
        #expect(verify(["exp": #""tomorrow""#]) == .malformed("the payload is not a JSON object of claims"))
        #expect(verify(["exp": "-1"]) == .missingClaim("exp"))
        #expect(verify(["nbf": "1e300"]) == .missingClaim("nbf"))
        #expect(refusal { try IDToken.verify(signed("[1,2]"), keys: keys, expecting: expected) } == .malformed("the payload is not a JSON object of claims"))
    }

    @Test func emailVerifiedIsReadAsABooleanOrTheStringTrue() throws {
        func verified(_ value: String?) throws -> Bool {
            try IDToken.verify(signed(Self.claims(["email_verified": value])), keys: keys, expecting: expected).emailVerified
        }
        #expect(try verified("true") && verified(#""true""#))
        #expect(try !verified("false") && !verified(#""yes""#) && !verified(nil))
    }

    @Test func aTokenSignedWithAnAlgorithmAnyoneCanForgeIsRefused() {
        let unsigned = "eyJhbGciOiJub25lIn0." + token(header: "{}", claims: Self.claims(), key: .rsa).split(separator: ".")[1] + "."
        #expect(refusal { try IDToken.verify(unsigned, keys: keys, expecting: expected) } == .algorithmRefused("none"))
    }
}
