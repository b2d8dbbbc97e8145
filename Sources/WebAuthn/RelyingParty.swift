import Sodium

/// This server as a WebAuthn relying party: its id (a domain, the one passkeys are bound to) and the
/// origins its pages are served from. It verifies registrations (§7.1) and assertions (§7.2).
///
/// Attestation: the server asks for none (`attestation: "none"`): a passkey is trusted because a signed-in
/// teacher registered it, not because of the authenticator's make, and the server holds no attestation
/// roots. So "none" is accepted (its statement must be empty); "packed" self-attestation (no x5c) is
/// verified (the credential's own key signed authData ‖ clientDataHash with the algorithm it names); every
/// other registered format ("packed" with a certificate chain, "tpm", "android-key",
/// "android-safetynet", "fido-u2f", "apple") is accepted as if it were "none": its statement is not
/// checked and it proves nothing about the authenticator. An unknown format is refused.
public struct RelyingParty: Sendable, Equatable {
    /// The relying party id: a registrable domain suffix of the origins' host ("school.example"), or the
    /// host itself ("localhost").
    public var id: String
    /// Exact origins allowed ("https://school.example:8443").
    public var origins: [String]
    /// Whether the authenticator must verify the person (PIN, biometrics), not only see one present.
    public var requireUserVerification: Bool

    public init(id: String, origins: [String], requireUserVerification: Bool = true) {
        self.id = id
        self.origins = origins
        self.requireUserVerification = requireUserVerification
    }

    public static let registeredFormats: Set<String> = ["none", "packed", "tpm", "android-key", "android-safetynet", "fido-u2f", "apple"]

    /// A verified registration: what to store.
    public struct NewCredential: Sendable, Equatable {
        public var credentialID: [UInt8]
        /// The COSE_Key's CBOR bytes.
        public var publicKey: [UInt8]
        public var algorithm: COSEAlgorithm
        public var signCount: UInt32
        public var aaguid: [UInt8]
        /// The attestation format as sent ("none", "packed", …).
        public var attestationFormat: String
        /// True only for verified "packed" self-attestation.
        public var selfAttested: Bool
        public var userVerified: Bool
        public var backupEligible: Bool
        public var backedUp: Bool
    }

    /// A verified assertion.
    public struct Assertion: Sendable, Equatable {
        /// The counter to store (unchanged at 0 for authenticators that keep none).
        public var signCount: UInt32
        public var userVerified: Bool
        public var backedUp: Bool

        public init(signCount: UInt32, userVerified: Bool, backedUp: Bool) {
            self.signCount = signCount
            self.userVerified = userVerified
            self.backedUp = backedUp
        }
    }

    /// Verifies `navigator.credentials.create()`'s response against the challenge this ceremony issued.
    public func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8]) throws(WebAuthnError) -> NewCredential {
        guard attestationObject.count <= WebAuthnLimits.attestationObject else { throw .tooLarge(field: "attestationObject") }
        try checkClientData(clientDataJSON, type: "webauthn.create", challenge: challenge)
        let object = try AttestationObject(attestationObject)
        let data = object.authenticatorData
        try checkAuthenticatorData(data)
        guard data.flags.contains(.attestedCredentialData), let credential = data.attestedCredential else { throw .missingCredential }
        let key = try PublicKey(cose: credential.publicKey)
        let selfAttested = try checkAttestation(object, key: key, clientDataHash: Digest.sha256(clientDataJSON))
        return NewCredential(
            credentialID: credential.credentialID, publicKey: credential.publicKeyBytes, algorithm: key.algorithm,
            signCount: data.signCount, aaguid: credential.aaguid, attestationFormat: object.format, selfAttested: selfAttested,
            userVerified: data.flags.contains(.userVerified), backupEligible: data.flags.contains(.backupEligible),
            backedUp: data.flags.contains(.backedUp))
    }

    /// Verifies `navigator.credentials.get()`'s response for a stored credential (its COSE key and last
    /// counter). The signature is checked before the counter, so a forgery reads as a bad signature and
    /// only a genuine signature with a stale counter as a possible clone.
    public func verifyAssertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], challenge: [UInt8],
        publicKey: [UInt8], storedSignCount: UInt32
    ) throws(WebAuthnError) -> Assertion {
        guard signature.count <= WebAuthnLimits.signature else { throw .tooLarge(field: "signature") }
        try checkClientData(clientDataJSON, type: "webauthn.get", challenge: challenge)
        let data = try AuthenticatorData(authenticatorData)
        // Only a registration carries a credential (WebAuthn §7.2): a sign-in with one is no authenticator's.
        guard !data.flags.contains(.attestedCredentialData) else { throw .malformedAuthenticatorData("attested credential data in a sign-in") }
        try checkAuthenticatorData(data)
        let key = try PublicKey(cose: publicKey)
        guard key.verify(signature: signature, over: authenticatorData + Digest.sha256(clientDataJSON)) else { throw .badSignature }
        if data.signCount != 0 || storedSignCount != 0, data.signCount <= storedSignCount {
            throw .signCountNotIncreased(stored: storedSignCount, received: data.signCount)
        }
        return Assertion(signCount: data.signCount, userVerified: data.flags.contains(.userVerified), backedUp: data.flags.contains(.backedUp))
    }

    private func checkClientData(_ json: [UInt8], type: String, challenge: [UInt8]) throws(WebAuthnError) {
        let client = try ClientData(json: json)
        guard client.type == type else { throw .wrongType(expected: type, received: String(client.type.prefix(40))) }
        guard Sodium.constantTimeEquals(client.challenge, challenge) else { throw .challengeMismatch }
        guard origins.contains(client.origin) else { throw .originNotAllowed(String(client.origin.prefix(200))) }
        guard !client.crossOrigin else { throw .crossOrigin }
    }

    private func checkAuthenticatorData(_ data: AuthenticatorData) throws(WebAuthnError) {
        guard data.rpIDHash == Digest.sha256(Array(id.utf8)) else { throw .relyingPartyMismatch }
        guard data.flags.contains(.userPresent) else { throw .userNotPresent }
        guard !requireUserVerification || data.flags.contains(.userVerified) else { throw .userNotVerified }
        guard data.flags.contains(.backupEligible) || !data.flags.contains(.backedUp) else { throw .inconsistentBackupFlags }
    }

    /// Whether the statement is a verified self-attestation; throws when it is one that does not verify.
    private func checkAttestation(_ object: AttestationObject, key: PublicKey, clientDataHash: [UInt8]) throws(WebAuthnError) -> Bool {
        switch object.format {
        case "none":
            guard object.statement.pairs?.isEmpty == true else { throw .invalidAttestation("\"none\" with a statement") }
            return false
        case "packed" where object.statement["x5c"] == nil:
            guard let algorithm = object.statement["alg"]?.int, let signature = object.statement["sig"]?.bytes else {
                throw .invalidAttestation("\"packed\" without alg and sig")
            }
            guard algorithm == key.algorithm.rawValue else { throw .invalidAttestation("the self-attestation's algorithm is not the credential's") }
            guard signature.count <= WebAuthnLimits.signature,
                key.verify(signature: signature, over: object.authenticatorData.bytes + clientDataHash)
            else { throw .invalidAttestation("the self-attestation's signature does not verify") }
            return true
        case let format where Self.registeredFormats.contains(format):
            return false
        case let format:
            throw .unsupportedAttestationFormat(String(format.prefix(32)))
        }
    }
}
