import FoundationEssentials
import OpenIDConnect
import Testing

/// What keeps a sign-in with a provider from being turned against the person or the server: the state is
/// bound to the browser that started it, a withdrawn key stops verifying, and nothing reaches this machine
/// or a private address unless a test allows it.
@Suite struct SignInSafetyTests {
    let provider = ScriptedProvider()
    let clock = TestClock()
    let school = OpenIDProvider(id: "prov_1", issuer: ScriptedProvider.issuer, clientID: "storycircle", clientSecret: "s3cret")
    let tests = RelyingPartyTests()

    var party: OpenIDRelyingParty { OpenIDRelyingParty(transport: provider, now: clock.read) }

    func started(_ party: OpenIDRelyingParty, browser: String = RelyingPartyTests.browser) async throws -> String {
        let url = try await party.start(school, redirectURI: RelyingPartyTests.redirect, address: "192.0.2.1", browserBinding: browser)
        let query = tests.query(url)
        provider.state.withLock { $0.nonce = query["nonce"] ?? "" }
        return query["state"] ?? ""
    }

    @Test func aCallbackURLOpenedInAnotherBrowserSignsNobodyIn() async throws {
        let party = party
        let state = try await started(party)  // the attacker's sign-in, finished at the provider
        for colleague in ["the-colleagues-own-cookie-0002", "", String(repeating: "c", count: 200)] {
            await #expect(throws: OpenIDError.unknownState) { try await party.take(state: state, browserBinding: colleague) }
        }
        // Refused without using it up: the browser that started it still finishes it.
        let signIn = try await party.take(state: state, browserBinding: RelyingPartyTests.browser)
        #expect(signIn.providerID == "prov_1")
    }

    /// The provider's tokens from now on are issued at `seconds` (and good for five minutes).
    func issueTokens(at seconds: Int64) {
        provider.state.withLock { $0.claims = ["iat": "\(seconds)", "exp": "\(seconds + 300)"] }
    }

    @Test func aWithdrawnKeyStopsVerifyingOnceTheKeySetIsAnHourOld() async throws {
        let party = party
        var signIn = try await party.take(state: started(party), browserBinding: RelyingPartyTests.browser)
        _ = try await party.redeem("code", for: signIn, provider: school, redirectURI: RelyingPartyTests.redirect)
        // The provider withdraws rsa-1 (say it leaked); whoever holds it still signs tokens with it.
        provider.state.withLock { $0.keys = [.ec] }
        clock.advance(seconds: 3_599)
        issueTokens(at: IDTokenTests.now + 3_599)
        signIn = try await party.take(state: started(party), browserBinding: RelyingPartyTests.browser)
        _ = try await party.redeem("code", for: signIn, provider: school, redirectURI: RelyingPartyTests.redirect)
        clock.advance(seconds: 1)
        issueTokens(at: IDTokenTests.now + 3_600)
        signIn = try await party.take(state: started(party), browserBinding: RelyingPartyTests.browser)
        await #expect(throws: OpenIDError.idToken(.unknownKey("rsa-1"))) {
            try await party.redeem("code", for: signIn, provider: school, redirectURI: RelyingPartyTests.redirect)
        }
        #expect(provider.urls.filter { $0.hasSuffix("/jwks") }.count == 2)
    }

    @Test func onlyHTTPSToANamedHostUnlessATestAllowsThisMachine() {
        let local = [
            "http://127.0.0.1:9000/token", "http://localhost/token", "http://[::1]/token", "https://127.0.0.1/token", "https://[::1]:8008/",
            "https://localhost:2379/v2/keys", "https://db.localhost/", "https://10.0.0.5/jwks", "https://169.254.169.254/latest/meta-data",
            "https://192.168.1.1./", "https://2130706433/", "https://0x7f.1/", "https://017700000001/", "https://[fd00::1]/",
        ]
        for url in local { #expect(!ProviderURL.isAcceptable(url), "\(url)") }
        for url in ["https://id.school.example/token", "https://login.microsoftonline.com/tenant/v2.0/.well-known/openid-configuration"] {
            #expect(ProviderURL.isAcceptable(url) && ProviderURL.isAcceptable(url, allowingLocal: true), "\(url)")
        }
        #expect(ProviderURL.isAcceptable("http://127.0.0.1:9000/token", allowingLocal: true))
        #expect(ProviderURL.isAcceptable("https://127.0.0.1:9000/token", allowingLocal: true))
        #expect(!ProviderURL.isAcceptable("http://id.school.example/token", allowingLocal: true))
        #expect(!ProviderURL.isAcceptable("http://10.0.0.5/token", allowingLocal: true))
    }

    @Test func anIssuerOrEndpointOnThisMachineIsNeverAsked() async throws {
        let local = OpenIDProvider(id: "prov_2", issuer: "http://127.0.0.1:8008", clientID: "storycircle", clientSecret: "s3cret")
        await #expect(throws: OpenIDError.providerNonsense("the issuer is not an https URL of a named host")) {
            try await party.start(local, redirectURI: RelyingPartyTests.redirect, address: "192.0.2.1", browserBinding: RelyingPartyTests.browser)
        }
        #expect(provider.urls.isEmpty)
        // The school's issuer is fine, but its discovery document sends the code to etcd on this node.
        provider.state.withLock {
            $0.discovery.body = Array(#"{"issuer":"https://id.school.example","authorization_endpoint":"https://id.school.example/authorize","token_endpoint":"https://127.0.0.1:2379/v2/keys","jwks_uri":"https://id.school.example/jwks"}"#.utf8)
        }
        await #expect(throws: OpenIDError.providerNonsense("the discovery document lacks an https endpoint")) { try await started(party) }
        let allowing = OpenIDRelyingParty(transport: provider, now: clock.read, allowsLocalProviders: true)
        #expect(try await started(allowing).hasSuffix(".prov_1"))
    }
}
