import COpenSSL
import Testing
import WebAuthn

/// Registrations (`navigator.credentials.create()` responses) made with real keys, for the three
/// algorithms, and each thing the relying party must refuse.
struct RegistrationTests {
    let rp = TestAuthenticator.relyingParty
    let challenge = ChallengeBook.randomChallenge()

    private func verify(_ registration: TestAuthenticator.Registration, rp: RelyingParty? = nil) throws(WebAuthnError) -> RelyingParty.NewCredential {
        try (rp ?? self.rp).verifyRegistration(
            clientDataJSON: registration.clientDataJSON, attestationObject: registration.attestationObject, challenge: challenge)
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func noneAttestationRegistersTheCredential(algorithm: COSEAlgorithm) throws {
        let authenticator = TestAuthenticator(algorithm)
        let credential = try verify(authenticator.register(challenge: challenge, signCount: 3))
        #expect(credential.credentialID == authenticator.credentialID)
        #expect(credential.algorithm == algorithm)
        #expect(credential.publicKey == authenticator.key.coseBytes)
        #expect(credential.signCount == 3)
        #expect(credential.attestationFormat == "none" && !credential.selfAttested)
        #expect(credential.userVerified && credential.backupEligible && !credential.backedUp)
        // The stored key verifies the authenticator's signatures, and no other key's.
        let key = try PublicKey(cose: credential.publicKey)
        let message: [UInt8] = Array("authenticator data and a client data hash".utf8)
        #expect(key.verify(signature: authenticator.key.sign(message), over: message))
        #expect(!key.verify(signature: authenticator.key.sign(message), over: message + [0]))
        let stranger = TestKey.generate(algorithm == .rs256 ? .es256 : algorithm)
        #expect(!key.verify(signature: stranger.sign(message), over: message))
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func packedSelfAttestationIsVerified(algorithm: COSEAlgorithm) throws {
        let authenticator = TestAuthenticator(algorithm)
        let credential = try verify(authenticator.register(challenge: challenge, format: "packed"))
        #expect(credential.selfAttested && credential.attestationFormat == "packed")

        let other = TestKey.generate(algorithm == .rs256 ? .es256 : algorithm)
        let data = authenticator.authenticatorData(flags: TestAuthenticator.present.union(.attestedCredentialData), signCount: 0)
        let forged = CBOR.map([CBORPair(.text("alg"), CBOR(algorithm.rawValue)), CBORPair(.text("sig"), .bytes(other.sign(data)))])
        #expect(refusal { try verify(authenticator.register(challenge: challenge, format: "packed", statement: forged)) }
            == .invalidAttestation("the self-attestation's signature does not verify"))
        let otherAlgorithm = CBOR.map([CBORPair(.text("alg"), CBOR(algorithm == .es256 ? -8 : -7)), CBORPair(.text("sig"), .bytes([1, 2, 3]))])
        #expect(refusal { try verify(authenticator.register(challenge: challenge, format: "packed", statement: otherAlgorithm)) }
            == .invalidAttestation("the self-attestation's algorithm is not the credential's"))
        #expect(refusal { try verify(authenticator.register(challenge: challenge, format: "packed", statement: .map([]))) }
            == .invalidAttestation("\"packed\" without alg and sig"))
    }

    @Test func otherRegisteredFormatsCountAsNoneAndUnknownOnesAreRefused() throws {
        let authenticator = TestAuthenticator(.es256)
        let statement = CBOR.map([CBORPair(.text("sig"), .bytes([1])), CBORPair(.text("x5c"), .array([.bytes([2])]))])
        for format in ["fido-u2f", "tpm", "apple", "packed"] {
            let credential = try verify(authenticator.register(challenge: challenge, format: format, statement: statement))
            #expect(!credential.selfAttested && credential.attestationFormat == format)
        }
        #expect(refusal { try verify(authenticator.register(challenge: challenge, format: "homemade")) } == .unsupportedAttestationFormat("homemade"))
        #expect(refusal { try verify(authenticator.register(challenge: challenge, format: "none", statement: statement)) }
            == .invalidAttestation("\"none\" with a statement"))
    }

    @Test func theClientDataMustBeThisCeremonysOnThisServer() {
        let authenticator = TestAuthenticator(.es256)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, origin: "https://evil.example")) }
            == .originNotAllowed("https://evil.example"))
        #expect(refusal { try verify(authenticator.register(challenge: challenge, origin: "http://school.example:8443")) }
            == .originNotAllowed("http://school.example:8443"))
        #expect(refusal { try verify(authenticator.register(challenge: ChallengeBook.randomChallenge())) } == .challengeMismatch)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, type: "webauthn.get")) }
            == .wrongType(expected: "webauthn.create", received: "webauthn.get"))
        #expect(refusal { try verify(authenticator.register(challenge: challenge, crossOrigin: true)) } == .crossOrigin)
        var garbled = authenticator.register(challenge: challenge)
        garbled.clientDataJSON = Array("{\"type\":".utf8)
        #expect(refusal { try verify(garbled) } == .malformedClientData("not the JSON object a browser sends"))
        garbled.clientDataJSON = Array(#"{"type":"webauthn.create","challenge":"+/+/","origin":"https://school.example:8443"}"#.utf8)
        #expect(refusal { try verify(garbled) } == .malformedClientData("the challenge is not base64url"))
    }

    /// A passkey made for another site: its authenticator data names another relying party.
    @Test func aCredentialForAnotherRelyingPartyIsRefused() {
        let authenticator = TestAuthenticator(.edDSA)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, rpID: "evil.example")) } == .relyingPartyMismatch)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, rpID: "example")) } == .relyingPartyMismatch)
    }

    @Test func theFlagsMustShowAPersonAndACredential() throws {
        let authenticator = TestAuthenticator(.es256)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, flags: [.userVerified, .attestedCredentialData])) } == .userNotPresent)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, flags: [.userPresent, .attestedCredentialData])) } == .userNotVerified)
        var lenient = rp
        lenient.requireUserVerification = false
        let credential = try verify(authenticator.register(challenge: challenge, flags: [.userPresent, .attestedCredentialData]), rp: lenient)
        #expect(!credential.userVerified)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, flags: [.userPresent, .userVerified, .backedUp, .attestedCredentialData])) }
            == .inconsistentBackupFlags)
    }

    @Test func aRegistrationWithoutACredentialIsRefused() {
        let authenticator = TestAuthenticator(.es256)
        let challenge = challenge
        let client = TestAuthenticator.clientDataJSON(type: "webauthn.create", challenge: challenge)
        let data = authenticator.authenticatorData(flags: TestAuthenticator.present, signCount: 0)
        let object = CBOR.map([CBORPair(.text("fmt"), .text("none")), CBORPair(.text("attStmt"), .map([])), CBORPair(.text("authData"), .bytes(data))])
        #expect(refusal { try rp.verifyRegistration(clientDataJSON: client, attestationObject: object.encoded()!, challenge: challenge) }
            == .missingCredential)
    }

    @Test func unsupportedAndInvalidKeysAreRefused() {
        let authenticator = TestAuthenticator(.es256)
        let es384 = CBOR.map([CBORPair(CBOR(1), CBOR(2)), CBORPair(CBOR(3), CBOR(-35)), CBORPair(CBOR(-1), CBOR(2))])
        #expect(refusal { try verify(authenticator.register(challenge: challenge, publicKey: es384.encoded()!)) } == .unsupportedAlgorithm(-35))
        // A point that is not on P-256.
        let offCurve = CBOR.map([
            CBORPair(CBOR(1), CBOR(2)), CBORPair(CBOR(3), CBOR(-7)), CBORPair(CBOR(-1), CBOR(1)),
            CBORPair(CBOR(-2), .bytes([UInt8](repeating: 1, count: 32))), CBORPair(CBOR(-3), .bytes([UInt8](repeating: 2, count: 32))),
        ])
        #expect(refusal { try verify(authenticator.register(challenge: challenge, publicKey: offCurve.encoded()!)) }
            == .invalidPublicKey("OpenSSL refused the EC key"))
        let weak = TestKey.generate(.rs256, rsaBits: 1_024)
        #expect(refusal { try verify(authenticator.register(challenge: challenge, publicKey: weak.coseBytes)) }
            == .invalidPublicKey("the RSA key has 1024 bits"))
        let mismatched = CBOR.map([CBORPair(CBOR(1), CBOR(1)), CBORPair(CBOR(3), CBOR(-7)), CBORPair(CBOR(-1), CBOR(6)), CBORPair(CBOR(-2), .bytes([1]))])
        #expect(refusal { try verify(authenticator.register(challenge: challenge, publicKey: mismatched.encoded()!)) }
            == .invalidPublicKey("ES256 needs an EC2 key on P-256"))
    }

    @Test func malformedAttestationObjectsAreRefused() {
        let authenticator = TestAuthenticator(.es256)
        var registration = authenticator.register(challenge: challenge)
        let valid = registration.attestationObject
        registration.attestationObject = Array(valid.dropLast(5))
        #expect(refusal { try verify(registration) } == .malformedAttestationObject("the CBOR ends inside an item"))
        registration.attestationObject = valid + [0]
        #expect(refusal { try verify(registration) } == .malformedAttestationObject("bytes follow the CBOR item"))
        registration.attestationObject = [0x9F, 0x01, 0xFF]
        #expect(refusal { try verify(registration) } == .malformedAttestationObject("the CBOR has an indefinite length"))
        registration.attestationObject = CBOR.array([.text("fmt")]).encoded()!
        #expect(refusal { try verify(registration) } == .malformedAttestationObject("not a CBOR map"))
        registration.attestationObject = [UInt8](repeating: 0xA1, count: WebAuthnLimits.attestationObject + 1)
        #expect(refusal { try verify(registration) } == .tooLarge(field: "attestationObject"))
        // Authenticator data with bytes after what its flags announce.
        let data = authenticator.authenticatorData(flags: TestAuthenticator.present.union(.attestedCredentialData), signCount: 0) + [0xA0]
        registration.attestationObject = CBOR.map([
            CBORPair(.text("fmt"), .text("none")), CBORPair(.text("attStmt"), .map([])), CBORPair(.text("authData"), .bytes(data)),
        ]).encoded()!
        #expect(refusal { try verify(registration) } == .malformedAuthenticatorData("1 bytes after the data its flags announce"))
    }
}
