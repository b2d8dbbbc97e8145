import JOSE
import Sodium
import Testing

@Suite struct KeySetTests {
    @Test func keysOfOtherKindsAreSkipped() throws {
        let set = try keySet([
            SigningKey.rsa.jwk(), SigningKey.ec.jwk(),
            #"{"kty":"oct","kid":"secret","k":"c2VjcmV0"}"#,
            #"{"kty":"OKP","kid":"ed","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
            SigningKey.ec.jwk(kid: "p384", extra: ["crv": "P-384"]),
            SigningKey.rsa.jwk(kid: "encryption", extra: ["use": "enc"]),
            SigningKey.rsa.jwk(kid: "ps256", extra: ["alg": "PS256"]),
        ])
        #expect(set.keys.map(\.kid) == ["rsa-1", "ec-1"])
        #expect(set.keys.map(\.algorithm) == [.rs256, .es256])
        #expect(set.refused.isEmpty)
    }

    @Test func aKeyOpenSSLRefusesIsRememberedByItsKid() throws {
        var ec = SigningKey.ec.members
        var y = Base64URL.decode(ec["y"]!)!
        y[31] ^= 1  // off the curve
        ec["y"] = Base64URL.encode(y)
        let offCurve = #"{"kty":"EC","crv":"P-256","kid":"bent","x":"\#(ec["x"]!)","y":"\#(ec["y"]!)"}"#
        let set = try keySet([SigningKey.weakRSA.jwk(), offCurve, #"{"kty":"RSA","kid":"half","n":"AQAB"}"#, SigningKey.rsa.jwk()])
        #expect(set.keys.map(\.kid) == ["rsa-1"])
        #expect(set.refused == ["weak": "the RSA key has 1024 bits", "bent": "OpenSSL refused the EC key", "half": "an RSA key needs n and e"])
        let signed = token(header: #"{"alg":"RS256","kid":"weak"}"#, claims: "{}", key: SigningKey.weakRSA)
        #expect(refusal { try CompactJWS(signed).verify(with: set) } == .unusableKey("the RSA key has 1024 bits"))
    }

    @Test(arguments: [#"{"keys":{}}"#, #"{"key":[]}"#, "[]", "not json", #"{"keys":[1]}"#])
    func aDocumentThatIsNotAKeySetIsRefused(json: String) {
        #expect(refusal { try JSONWebKeySet(json: Array(json.utf8)) } == .malformedKeySet("not a JSON object with a keys array"))
    }

    @Test func oversizedKeySetsAreRefused() {
        #expect(refusal { try JSONWebKeySet(json: [UInt8](repeating: 0x20, count: JOSELimits.keySet + 1)) } == .tooLarge(field: "key set"))
        let many = Array(repeating: #"{"kty":"oct"}"#, count: JOSELimits.keys + 1)
        #expect(refusal { try JSONWebKeySet(json: Array(#"{"keys":[\#(many.joined(separator: ","))]}"#.utf8)) } == .tooLarge(field: "key set"))
    }
}
