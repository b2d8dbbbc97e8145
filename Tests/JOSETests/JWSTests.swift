import JOSE
import Sodium
import Testing

@Suite struct JWSTests {
    let keys = try! keySet([SigningKey.rsa.jwk(), SigningKey.ec.jwk()])
    let claims = #"{"iss":"https://id.school.example","sub":"42"}"#

    @Test(arguments: [SigningKey.rsa, SigningKey.ec])
    func aTokenSignedByTheNamedKeyVerifies(key: SigningKey) throws {
        let jws = try CompactJWS(token(header: #"{"alg":"\#(key.algorithm.rawValue)","kid":"\#(key.kid)"}"#, claims: claims, key: key))
        try jws.verify(with: keys)
        #expect(jws.algorithm == key.algorithm && jws.header.kid == key.kid && jws.payload == Array(claims.utf8))
    }

    @Test(arguments: [SigningKey.rsa, SigningKey.ec])
    func aChangedPayloadOrSignatureIsRefused(key: SigningKey) throws {
        let header = #"{"alg":"\#(key.algorithm.rawValue)","kid":"\#(key.kid)"}"#
        let good = token(header: header, claims: claims, key: key)
        let parts = good.split(separator: ".").map(String.init)
        let otherClaims = Base64URL.encode(Array(#"{"iss":"https://id.school.example","sub":"43"}"#.utf8))
        #expect(refusal { try CompactJWS([parts[0], otherClaims, parts[2]].joined(separator: ".")).verify(with: keys) } == .badSignature)
        var signature = Base64URL.decode(parts[2])!
        signature[signature.count / 2] ^= 1
        #expect(refusal { try CompactJWS([parts[0], parts[1], Base64URL.encode(signature)].joined(separator: ".")).verify(with: keys) } == .badSignature)
    }

    @Test func aSignatureByAnotherKeyWithTheSameKidIsRefused() throws {
        let forged = token(header: #"{"alg":"RS256","kid":"rsa-1"}"#, claims: claims, key: SigningKey.otherRSA)
        #expect(refusal { try CompactJWS(forged).verify(with: keys) } == .badSignature)
    }

    /// JOSE's ES256 signature is r || s; the DER form WebAuthn uses is not accepted in a JWS.
    @Test func anES256SignatureInDERIsRefused() throws {
        let key = SigningKey.ec
        let input = Base64URL.encode(Array(#"{"alg":"ES256","kid":"ec-1"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let der = input + "." + Base64URL.encode(key.sign(Array(input.utf8), der: true))
        #expect(refusal { try CompactJWS(der).verify(with: keys) } == .badSignature)
    }

    @Test(arguments: ["none", "None", "HS256", "HS512"])
    func unsignedAndHMACTokensAreRefusedByName(algorithm: String) {
        let text = Base64URL.encode(Array(#"{"alg":"\#(algorithm)"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
        #expect(refusal { try CompactJWS(text) } == .algorithmRefused(algorithm))
    }

    @Test(arguments: ["RS384", "PS256", "ES384", "EdDSA", ""])
    func otherAlgorithmsAreUnsupported(algorithm: String) {
        let text = token(header: #"{"alg":"\#(algorithm)"}"#, claims: claims, key: SigningKey.rsa)
        #expect(refusal { try CompactJWS(text) } == .unsupportedAlgorithm(algorithm))
    }

    @Test func anEmptySignatureWithAnAcceptedAlgorithmIsRefused() {
        let text = Base64URL.encode(Array(#"{"alg":"RS256","kid":"rsa-1"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "."
        #expect(refusal { try CompactJWS(text) } == .malformed("an empty part"))
    }

    @Test func aCriticalHeaderIsRefused() {
        let text = token(header: #"{"alg":"RS256","kid":"rsa-1","crit":["b64"],"b64":false}"#, claims: claims, key: SigningKey.rsa)
        #expect(refusal { try CompactJWS(text) } == .criticalHeader)
    }

    @Test(arguments: [
        ("a.b", "a compact JWS has three parts"), ("a.b.c.d", "a compact JWS has three parts"), ("..", "an empty part"),
        ("eyJhbGciOiJSUzI1NiJ9.e30=.c2ln", "the payload is not base64url"), ("eyJhbGciOiJSUzI1NiJ9.e30.c2l+", "the signature is not base64url"),
        ("eyJhbGciOiJSUzI1NiJ9 .e30.c2ln", "the header is not base64url"), ("e30.e30.c2ln", "the header is not a JSON object with alg"),
        ("WzFd.e30.c2ln", "the header is not a JSON object with alg"), ("eyJhbGciOiJSUzI1NiJ9.e30.c", "the signature is not base64url"),
    ])
    func malformedTokensAreRefused(text: String, reason: String) {
        #expect(refusal { try CompactJWS(text) } == .malformed(reason))
    }

    @Test func anOversizedTokenIsRefusedBeforeParsing() {
        let text = String(repeating: "a", count: JOSELimits.token + 1)
        #expect(refusal { try CompactJWS(text) } == .tooLarge(field: "token"))
        let kid = String(repeating: "k", count: JOSELimits.text + 1)
        #expect(refusal { try CompactJWS(token(header: #"{"alg":"RS256","kid":"\#(kid)"}"#, claims: claims, key: SigningKey.rsa)) }
            == .tooLarge(field: "kid"))
    }

    @Test func anUnknownKidIsReportedSoTheCallerCanFetchTheKeysAgain() throws {
        let text = token(header: #"{"alg":"RS256","kid":"rotated"}"#, claims: claims, key: SigningKey.rsa)
        #expect(refusal { try CompactJWS(text).verify(with: keys) } == .unknownKey("rotated"))
        let rotated = try keySet([SigningKey.rsa.jwk(kid: "rotated")])
        try CompactJWS(text).verify(with: rotated)
    }

    @Test func aKeyOfTheOtherAlgorithmIsNotUsed() {
        let text = token(header: #"{"alg":"RS256","kid":"ec-1"}"#, claims: claims, key: SigningKey.rsa)
        #expect(refusal { try CompactJWS(text).verify(with: keys) } == .unusableKey("the key is not for RS256"))
    }

    @Test func withoutAKidOnlyALoneKeyIsUsed() throws {
        let text = token(header: #"{"alg":"RS256"}"#, claims: claims, key: SigningKey.rsa)
        try CompactJWS(text).verify(with: keys)  // one RSA key, one EC key
        let two = try keySet([SigningKey.rsa.jwk(), SigningKey.otherRSA.jwk()])
        #expect(refusal { try CompactJWS(text).verify(with: two) } == .unknownKey(nil))
    }
}

/// RFC 7515 Appendix A.3: the ES256 example, its key and its r || s signature as the RFC prints them.
@Suite struct RFC7515ExampleTests {
    static let key = #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#
    static let token = "eyJhbGciOiJFUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    @Test func theAppendixA3SignatureVerifies() throws {
        let jws = try CompactJWS(Self.token)
        try jws.verify(with: keySet([Self.key]))
        #expect(String(decoding: jws.payload, as: UTF8.self).hasPrefix(#"{"iss":"joe","#))
    }

    @Test func theAppendixA3SignatureWithOneBitChangedIsRefused() throws {
        let bent = Self.token.replacing(".DtEhU3", with: ".DtEhU4")
        #expect(refusal { try CompactJWS(bent).verify(with: keySet([Self.key])) } == .badSignature)
    }
}
