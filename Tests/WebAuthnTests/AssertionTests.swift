import Testing
import WebAuthn

/// Sign-ins (`navigator.credentials.get()` responses) signed with real keys, for the three algorithms,
/// and each thing the relying party must refuse.
struct AssertionTests {
    let rp = TestAuthenticator.relyingParty
    let challenge = ChallengeBook.randomChallenge()

    private func verify(
        _ assertion: TestAuthenticator.Assertion, key: TestKey, stored: UInt32 = 0, rp: RelyingParty? = nil
    ) throws(WebAuthnError) -> RelyingParty.Assertion {
        try (rp ?? self.rp).verifyAssertion(
            clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData, signature: assertion.signature,
            challenge: challenge, publicKey: key.coseBytes, storedSignCount: stored)
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func aSignatureByTheCredentialSignsIn(algorithm: COSEAlgorithm) throws {
        let authenticator = TestAuthenticator(algorithm)
        let outcome = try verify(authenticator.assert(challenge: challenge, signCount: 8), key: authenticator.key, stored: 7)
        #expect(outcome == RelyingParty.Assertion(signCount: 8, userVerified: true, backedUp: false))
        // Authenticators without a counter (synced passkeys) send 0 every time.
        #expect(try verify(authenticator.assert(challenge: challenge, signCount: 0), key: authenticator.key).signCount == 0)
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func aBadSignatureIsRefused(algorithm: COSEAlgorithm) {
        let authenticator = TestAuthenticator(algorithm)
        var assertion = authenticator.assert(challenge: challenge, signCount: 1)
        assertion.signature[assertion.signature.count / 2] ^= 0x01
        #expect(refusal { try verify(assertion, key: authenticator.key) } == .badSignature)
        // Signed by another key of the same kind.
        let stranger = algorithm == .rs256 ? TestKey.generate(.rs256) : TestKey.generate(algorithm)
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, signer: stranger), key: authenticator.key) }
            == .badSignature)
        // The signature covers the authenticator data: raising the counter afterwards breaks it.
        var raised = authenticator.assert(challenge: challenge, signCount: 1)
        raised.authenticatorData[36] = 9
        #expect(refusal { try verify(raised, key: authenticator.key) } == .badSignature)
        assertion.signature = []
        #expect(refusal { try verify(assertion, key: authenticator.key) } == .badSignature)
    }

    @Test func aCounterThatDoesNotIncreaseIsReportedAsAPossibleClone() throws {
        let authenticator = TestAuthenticator(.es256)
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 4), key: authenticator.key, stored: 5) }
            == .signCountNotIncreased(stored: 5, received: 4))
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 5), key: authenticator.key, stored: 5) }
            == .signCountNotIncreased(stored: 5, received: 5))
        // A counter that stopped (0 after a real count) is as suspicious.
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 0), key: authenticator.key, stored: 5) }
            == .signCountNotIncreased(stored: 5, received: 0))
        #expect(WebAuthnError.signCountNotIncreased(stored: 5, received: 4).code == "possible_clone")
        // A forged response with a stale counter is a bad signature first.
        var forged = authenticator.assert(challenge: challenge, signCount: 2)
        forged.signature[8] ^= 0x40
        #expect(refusal { try verify(forged, key: authenticator.key, stored: 5) } == .badSignature)
    }

    @Test func theClientDataMustBeThisCeremonysOnThisServer() {
        let authenticator = TestAuthenticator(.rs256)
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, origin: "https://evil.example"), key: authenticator.key) }
            == .originNotAllowed("https://evil.example"))
        #expect(refusal { try verify(authenticator.assert(challenge: [9, 9, 9], signCount: 1), key: authenticator.key) } == .challengeMismatch)
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, type: "webauthn.create"), key: authenticator.key) }
            == .wrongType(expected: "webauthn.get", received: "webauthn.create"))
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, origin: "https://localhost:8443"), key: authenticator.key) } == nil)
    }

    /// A passkey from another site: signed for its relying party id, from its origin, or both.
    @Test func aPasskeyFromAnotherSiteIsRefused() {
        let authenticator = TestAuthenticator(.edDSA)
        let elsewhere = authenticator.assert(challenge: challenge, signCount: 1, origin: "https://evil.example", rpID: "evil.example")
        #expect(refusal { try verify(elsewhere, key: authenticator.key) } == .originNotAllowed("https://evil.example"))
        let otherRP = authenticator.assert(challenge: challenge, signCount: 1, rpID: "evil.example")
        #expect(refusal { try verify(otherRP, key: authenticator.key) } == .relyingPartyMismatch)
        #expect(WebAuthnError.relyingPartyMismatch.description == "the passkey is for another site (relying party id)")
    }

    @Test func theFlagsMustShowAPerson() throws {
        let authenticator = TestAuthenticator(.es256)
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, flags: [.userVerified]), key: authenticator.key) }
            == .userNotPresent)
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, flags: [.userPresent]), key: authenticator.key) }
            == .userNotVerified)
        // A credential's data belongs to a registration; in a sign-in it is refused, even signed.
        #expect(refusal { try verify(authenticator.assert(challenge: challenge, signCount: 1, flags: TestAuthenticator.present.union(.attestedCredentialData)), key: authenticator.key) }
            == .malformedAuthenticatorData("attested credential data in a sign-in"))
        var lenient = rp
        lenient.requireUserVerification = false
        #expect(try verify(authenticator.assert(challenge: challenge, signCount: 1, flags: [.userPresent]), key: authenticator.key, rp: lenient).userVerified == false)
    }

    @Test func malformedInputsAreRefusedBeforeAnySignatureIsChecked() {
        let authenticator = TestAuthenticator(.es256)
        var assertion = authenticator.assert(challenge: challenge, signCount: 1)
        let data = assertion.authenticatorData
        assertion.authenticatorData = Array(data.prefix(36))
        #expect(refusal { try verify(assertion, key: authenticator.key) } == .malformedAuthenticatorData("shorter than 37 bytes"))
        // The extension flag with no extensions, and extensions that are not a map.
        assertion.authenticatorData = Array(data.prefix(32)) + [data[32] | 0x80] + Array(data[33...])
        #expect(refusal { try verify(assertion, key: authenticator.key) }
            == .malformedAuthenticatorData("the extensions: the CBOR ends inside an item"))
        assertion.authenticatorData = Array(data.prefix(32)) + [data[32] | 0x80] + Array(data[33...]) + [0x01]
        #expect(refusal { try verify(assertion, key: authenticator.key) } == .malformedAuthenticatorData("the extensions are not a map"))
        assertion = authenticator.assert(challenge: challenge, signCount: 1)
        assertion.signature = [UInt8](repeating: 1, count: WebAuthnLimits.signature + 1)
        #expect(refusal { try verify(assertion, key: authenticator.key) } == .tooLarge(field: "signature"))
        assertion = authenticator.assert(challenge: challenge, signCount: 1)
        assertion.clientDataJSON = [UInt8](repeating: 0x20, count: WebAuthnLimits.clientDataJSON + 1)
        #expect(refusal { try verify(assertion, key: authenticator.key) } == .tooLarge(field: "clientDataJSON"))
        #expect(refusal {
            try rp.verifyAssertion(
                clientDataJSON: assertion.clientDataJSON.prefix(10).map { $0 }, authenticatorData: data, signature: [1], challenge: challenge,
                publicKey: [0xA1, 0x01], storedSignCount: 0)
        } == .malformedClientData("not the JSON object a browser sends"))
        let good = authenticator.assert(challenge: challenge, signCount: 1)
        #expect(refusal {
            try rp.verifyAssertion(
                clientDataJSON: good.clientDataJSON, authenticatorData: good.authenticatorData, signature: good.signature, challenge: challenge,
                publicKey: [0xA1, 0x01], storedSignCount: 0)
        } == .invalidPublicKey("the CBOR ends inside an item"))
    }
}
