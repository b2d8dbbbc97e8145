import FoundationEssentials
import JOSE
import Locking
import OpenIDConnect
import Sodium
import Testing

/// A provider in memory: discovery, key set and token endpoint, each answer changeable, every request kept.
final class ScriptedProvider: OpenIDTransport, @unchecked Sendable {
    static let issuer = "https://id.school.example"
    let state = Locked<State>(State())

    struct State {
        var requests: [OpenIDRequest] = []
        var discovery = OpenIDResponse(status: 200, body: Array(#"""
            {"issuer":"https://id.school.example","authorization_endpoint":"https://id.school.example/authorize",
             "token_endpoint":"https://id.school.example/token","jwks_uri":"https://id.school.example/jwks",
             "response_types_supported":["code"],"code_challenge_methods_supported":["S256"],
             "id_token_signing_alg_values_supported":["RS256","ES256"]}
            """#.utf8))
        var keys: [SigningKey] = [.rsa]
        var signer: SigningKey = .rsa
        var tokenStatus = 200
        var tokenBody: String?
        var claims: [String: String?] = [:]
        var nonce = ""
    }

    func send(_ request: OpenIDRequest) async throws(OpenIDError) -> OpenIDResponse {
        state.withLock { state in
            state.requests.append(request)
            switch request.url {
            case "https://id.school.example/.well-known/openid-configuration":
                return state.discovery
            case "https://id.school.example/jwks":
                return OpenIDResponse(status: 200, body: Array(#"{"keys":[\#(state.keys.map { $0.jwk() }.joined(separator: ","))]}"#.utf8))
            case "https://id.school.example/token":
                if let body = state.tokenBody { return OpenIDResponse(status: state.tokenStatus, body: Array(body.utf8)) }
                var claims = state.claims
                if claims["nonce"] == nil { claims["nonce"] = #""\#(state.nonce)""# }
                let idToken = signedToken(IDTokenTests.claims(claims), key: state.signer)
                return OpenIDResponse(status: state.tokenStatus, body: Array(#"{"access_token":"at","token_type":"Bearer","id_token":"\#(idToken)"}"#.utf8))
            default:
                return OpenIDResponse(status: 404, body: [])
            }
        }
    }

    func signedToken(_ claims: String, key: SigningKey) -> String {
        token(header: #"{"alg":"\#(key.algorithm.rawValue)","kid":"\#(key.kid)"}"#, claims: claims, key: key)
    }

    var urls: [String] { state.withLock { $0.requests.map(\.url) } }
}

/// A clock the test moves (milliseconds), starting at `IDTokenTests.now`.
final class TestClock: Sendable {
    let milliseconds = Locked<Int64>(IDTokenTests.now * 1_000)
    func advance(seconds: Int64) { milliseconds.withLock { $0 += seconds * 1_000 } }
    var read: @Sendable () -> Int64 { { [milliseconds] in milliseconds.withLock { $0 } } }
}

@Suite struct RelyingPartyTests {
    let provider = ScriptedProvider()
    let clock = TestClock()
    let school = OpenIDProvider(id: "prov_1", issuer: ScriptedProvider.issuer, clientID: "storycircle", clientSecret: "s3cret+/=")
    static let redirect = "https://storycircle.school.example/api/oidc/callback"

    var party: OpenIDRelyingParty { OpenIDRelyingParty(transport: provider, now: clock.read) }

    /// The query of the authorization URL `start` gave, as name → value.
    func query(_ url: String) -> [String: String] {
        var values: [String: String] = [:]
        for item in URLComponents(string: url)?.queryItems ?? [] { values[item.name] = item.value }
        return values
    }

    /// Starts a sign-in; the provider will put the request's nonce in its token.
    func started(_ party: OpenIDRelyingParty, address: String = "192.0.2.1") async throws -> (state: String, query: [String: String]) {
        let url = try await party.start(school, redirectURI: Self.redirect, address: address)
        #expect(url.hasPrefix("https://id.school.example/authorize?"))
        let query = query(url)
        provider.state.withLock { $0.nonce = query["nonce"] ?? "" }
        return (query["state"] ?? "", query)
    }

    @Test func theCodeFlowWithPKCEGivesTheVerifiedClaims() async throws {
        let party = party
        let (state, query) = try await started(party)
        #expect(query["response_type"] == "code" && query["client_id"] == "storycircle" && query["redirect_uri"] == Self.redirect)
        #expect(query["scope"] == "openid email" && query["code_challenge_method"] == "S256")
        #expect(state.hasSuffix(".prov_1") && (query["nonce"]?.count ?? 0) == 43)
        let signIn = try await party.take(state: state)
        #expect(signIn.providerID == "prov_1")
        // RFC 7636 §4.2: the challenge sent is base64url(SHA-256(verifier)).
        #expect(query["code_challenge"] == Base64URL.encode(Sodium.sha256(Array(signIn.verifier.utf8))))
        let claims = try await party.redeem("the-code", for: signIn, provider: school, redirectURI: Self.redirect)
        #expect(claims.subject == "248289761001" && claims.email == "ada@school.example" && claims.emailVerified)
        let token = try #require(provider.state.withLock { $0.requests.last { $0.url.hasSuffix("/token") } })
        let form = Dictionary(uniqueKeysWithValues: token.form ?? [])
        #expect(form["grant_type"] == "authorization_code" && form["code"] == "the-code" && form["code_verifier"] == signIn.verifier)
        #expect(form["client_secret"] == nil)
        let basic = "Basic " + Data("storycircle:s3cret%2B%2F%3D".utf8).base64EncodedString()
        #expect(token.headers.contains { $0.0 == "Authorization" && $0.1 == basic })
    }

    @Test func aStateIsGoodOnceAndForTenMinutes() async throws {
        let party = party
        let (state, _) = try await started(party)
        _ = try await party.take(state: state)
        await #expect(throws: OpenIDError.unknownState) { try await party.take(state: state) }
        let (late, _) = try await started(party)
        clock.advance(seconds: 600)
        await #expect(throws: OpenIDError.unknownState) { try await party.take(state: late) }
        for forged in ["", "x.prov_1", String(state.dropLast()) + "2", state + String(repeating: "a", count: 200), "nodot"] {
            await #expect(throws: OpenIDError.unknownState) { try await party.take(state: forged) }
        }
    }

    @Test func oneAddressCannotPushOutAnothersSignIns() async throws {
        let party = OpenIDRelyingParty(transport: provider, now: clock.read, perAddress: 4)
        let (mine, _) = try await started(party, address: "192.0.2.1")
        for _ in 0..<10 { _ = try await started(party, address: "198.51.100.7") }
        _ = try await party.take(state: mine)
    }

    @Test func aNonceFromAnotherSignInIsRefused() async throws {
        let party = party
        let (first, _) = try await started(party)
        let (second, _) = try await started(party)  // the provider now signs the second's nonce
        let signIn = try await party.take(state: first)
        _ = second
        await #expect(throws: OpenIDError.idToken(.nonceMismatch)) {
            try await party.redeem("code", for: signIn, provider: school, redirectURI: Self.redirect)
        }
    }

    @Test func rotatedKeysAreFetchedOnceThenNotAgainForAMinute() async throws {
        let party = party
        var signIn = try await party.take(state: started(party).state)
        _ = try await party.redeem("code", for: signIn, provider: school, redirectURI: Self.redirect)
        clock.advance(seconds: 61)
        provider.state.withLock { $0.keys = [.ec]; $0.signer = .ec }
        signIn = try await party.take(state: started(party).state)
        _ = try await party.redeem("code", for: signIn, provider: school, redirectURI: Self.redirect)
        #expect(provider.urls.filter { $0.hasSuffix("/jwks") }.count == 2)
        // A token naming a key nobody published: fetched again only after the interval.
        provider.state.withLock { $0.signer = .otherRSA }
        signIn = try await party.take(state: started(party).state)
        await #expect(throws: OpenIDError.idToken(.unknownKey("rsa-2"))) {
            try await party.redeem("code", for: signIn, provider: school, redirectURI: Self.redirect)
        }
        #expect(provider.urls.filter { $0.hasSuffix("/jwks") }.count == 2)
    }

    @Test func aForgedOrExpiredTokenLetsNobodyIn() async throws {
        let party = party
        provider.state.withLock { $0.signer = SigningKey(.rs256, kid: "rsa-1") }  // the right kid, another key
        var signIn = try await party.take(state: started(party).state)
        await #expect(throws: OpenIDError.idToken(.badSignature)) { try await party.redeem("c", for: signIn, provider: school, redirectURI: Self.redirect) }
        provider.state.withLock { $0.signer = .rsa; $0.claims = ["exp": "\(IDTokenTests.now - 3_600)"] }
        signIn = try await party.take(state: started(party).state)
        await #expect(throws: OpenIDError.idToken(.expired)) { try await party.redeem("c", for: signIn, provider: school, redirectURI: Self.redirect) }
        provider.state.withLock { $0.claims = ["iss": #""https://evil.example""#] }
        signIn = try await party.take(state: started(party).state)
        await #expect(throws: OpenIDError.idToken(.wrongIssuer)) { try await party.redeem("c", for: signIn, provider: school, redirectURI: Self.redirect) }
    }

    @Test func theTokenEndpointsRefusalsAndNonsenseAreNamed() async throws {
        let party = party
        let cases: [(Int, String, OpenIDError)] = [
            (400, #"{"error":"invalid_grant","error_description":"code used"}"#, .tokenRefused("invalid_grant")),
            (401, #"{"error":"bad client\n"}"#, .tokenRefused("unknown")),
            (500, "oops", .providerUnavailable("the token endpoint answered 500")),
            (200, "<html>", .providerNonsense("the token response is not JSON")),
            (200, #"{"access_token":"a"}"#, .providerNonsense("the token response has no ID token")),
            (200, #"{"id_token":"a.b"}"#, .idToken(.malformed("a compact JWS has three parts"))),
        ]
        for (status, body, refusal) in cases {
            provider.state.withLock { $0.tokenStatus = status; $0.tokenBody = body }
            let signIn = try await party.take(state: started(party).state)
            await #expect(throws: refusal) { try await party.redeem("c", for: signIn, provider: school, redirectURI: Self.redirect) }
        }
    }

    @Test func aDiscoveryDocumentThatIsNotTheProvidersStopsTheSignIn() async throws {
        let documents: [(Int, String, OpenIDError)] = [
            (503, "", .providerUnavailable("the discovery document answered 503")),
            (200, "not json", .providerNonsense("the discovery document is not JSON")),
            (200, #"{"issuer":"https://evil.example","authorization_endpoint":"https://a","token_endpoint":"https://t","jwks_uri":"https://j"}"#,
             .providerNonsense("the discovery document names another issuer")),
            (200, #"{"issuer":"https://id.school.example","authorization_endpoint":"http://a.example","token_endpoint":"https://t","jwks_uri":"https://j"}"#,
             .providerNonsense("the discovery document lacks an https endpoint")),
            (200, #"{"issuer":"https://id.school.example","authorization_endpoint":"https://a","token_endpoint":"https://t","jwks_uri":"https://j","code_challenge_methods_supported":["plain"]}"#,
             .providerNonsense("the provider does not offer PKCE with S256")),
        ]
        for (status, body, refusal) in documents {
            provider.state.withLock { $0.discovery = OpenIDResponse(status: status, body: Array(body.utf8)) }
            await #expect(throws: refusal) { try await party.start(school, redirectURI: Self.redirect, address: "192.0.2.1") }
        }
    }

    @Test func theDiscoveryDocumentIsKeptForAnHour() async throws {
        let party = party
        _ = try await started(party)
        _ = try await started(party)
        clock.advance(seconds: 3_600)
        _ = try await started(party)
        #expect(provider.urls.filter { $0.hasSuffix("openid-configuration") }.count == 2)
    }

    @Test func theSecretGoesInTheFormWhenTheProviderOnlyTakesItThere() async throws {
        provider.state.withLock {
            $0.discovery.body = Array(#"{"issuer":"https://id.school.example","authorization_endpoint":"https://id.school.example/authorize","token_endpoint":"https://id.school.example/token","jwks_uri":"https://id.school.example/jwks","token_endpoint_auth_methods_supported":["client_secret_post"]}"#.utf8)
        }
        let party = party
        let signIn = try await party.take(state: started(party).state)
        _ = try await party.redeem("c", for: signIn, provider: school, redirectURI: Self.redirect)
        let token = try #require(provider.state.withLock { $0.requests.last { $0.url.hasSuffix("/token") } })
        #expect(Dictionary(uniqueKeysWithValues: token.form ?? [])["client_secret"] == "s3cret+/=")
        #expect(!token.headers.contains { $0.0 == "Authorization" })
    }

    @Test func theProviderNeverAppearsWithItsSecret() {
        #expect(!String(describing: school).contains("s3cret"))
    }

    @Test func formsEscapeEverythingButUnreservedCharacters() {
        #expect(ProviderURL.form([("a b", "x+y/z=é~")]) == "a%20b=x%2By%2Fz%3D%C3%A9~")
        #expect(ProviderURL.discovery(issuer: "https://id.example/tenant/") == "https://id.example/tenant/.well-known/openid-configuration")
        #expect(ProviderURL.isAcceptable("http://127.0.0.1:9000/token") && !ProviderURL.isAcceptable("http://id.example/token"))
        #expect(!ProviderURL.isAcceptable("https://user:pw@id.example/") && !ProviderURL.isAcceptable("javascript:alert(1)"))
    }
}
