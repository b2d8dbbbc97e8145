/// Why a registration or a sign-in with a passkey was refused. `code` is stable (for the HTTP API's
/// errors and the audit trail); `description` is one sentence for a log or an administrator.
public enum WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An input is larger than its limit (`WebAuthnLimits`), before anything in it was read.
    case tooLarge(field: String)
    case malformedClientData(String)
    case malformedAttestationObject(String)
    case malformedAuthenticatorData(String)
    /// clientDataJSON's type is not the ceremony's ("webauthn.create" to register, "webauthn.get" to sign in).
    case wrongType(expected: String, received: String)
    /// The response answers another challenge than the one this ceremony issued.
    case challengeMismatch
    /// The challenge was never issued, was used already, or was for another ceremony.
    case unknownChallenge
    case challengeExpired
    /// The page that asked is not one of this server's origins (a passkey ceremony run by another site).
    case originNotAllowed(String)
    /// The ceremony ran in a frame of another origin.
    case crossOrigin
    /// The authenticator signed for another relying party id (a passkey made for another site).
    case relyingPartyMismatch
    /// The user-present flag is not set: nobody touched or unlocked the authenticator.
    case userNotPresent
    case userNotVerified
    /// The backup-state flag without the backup-eligible flag: authenticator data no authenticator makes.
    case inconsistentBackupFlags
    /// A registration without attested credential data.
    case missingCredential
    case unsupportedAlgorithm(Int)
    case invalidPublicKey(String)
    case unsupportedAttestationFormat(String)
    case invalidAttestation(String)
    /// The signature does not verify with the credential's public key.
    case badSignature
    /// The authenticator's signature counter did not increase: two copies of one credential are in use
    /// (a cloned authenticator), or a response was replayed.
    case signCountNotIncreased(stored: UInt32, received: UInt32)

    public var code: String {
        switch self {
        case .tooLarge: "too_large"
        case .malformedClientData: "malformed_client_data"
        case .malformedAttestationObject: "malformed_attestation_object"
        case .malformedAuthenticatorData: "malformed_authenticator_data"
        case .wrongType: "wrong_type"
        case .challengeMismatch: "challenge_mismatch"
        case .unknownChallenge: "unknown_challenge"
        case .challengeExpired: "challenge_expired"
        case .originNotAllowed: "origin_not_allowed"
        case .crossOrigin: "cross_origin"
        case .relyingPartyMismatch: "relying_party_mismatch"
        case .userNotPresent: "user_not_present"
        case .userNotVerified: "user_not_verified"
        case .inconsistentBackupFlags: "inconsistent_backup_flags"
        case .missingCredential: "missing_credential"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .invalidPublicKey: "invalid_public_key"
        case .unsupportedAttestationFormat: "unsupported_attestation_format"
        case .invalidAttestation: "invalid_attestation"
        case .badSignature: "bad_signature"
        case .signCountNotIncreased: "possible_clone"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let field): "\(field) is larger than allowed"
        case .malformedClientData(let reason): "clientDataJSON is malformed: \(reason)"
        case .malformedAttestationObject(let reason): "the attestation object is malformed: \(reason)"
        case .malformedAuthenticatorData(let reason): "the authenticator data is malformed: \(reason)"
        case .wrongType(let expected, let received): "clientDataJSON's type is \(received.debugDescription), not \(expected.debugDescription)"
        case .challengeMismatch: "the response answers another challenge"
        case .unknownChallenge: "the challenge was never issued here or was used already"
        case .challengeExpired: "the challenge has expired"
        case .originNotAllowed(let origin): "the origin \(origin.debugDescription) is not this server's"
        case .crossOrigin: "the ceremony ran in a frame of another origin"
        case .relyingPartyMismatch: "the passkey is for another site (relying party id)"
        case .userNotPresent: "the authenticator did not confirm that a person was present"
        case .userNotVerified: "the authenticator did not verify the person (PIN or biometrics)"
        case .inconsistentBackupFlags: "the authenticator data claims a backup without being backup-eligible"
        case .missingCredential: "the registration carries no credential"
        case .unsupportedAlgorithm(let algorithm): "the COSE algorithm \(algorithm) is not supported (ES256, EdDSA and RS256 are)"
        case .invalidPublicKey(let reason): "the credential's public key is invalid: \(reason)"
        case .unsupportedAttestationFormat(let format): "the attestation format \(format.debugDescription) is unknown"
        case .invalidAttestation(let reason): "the attestation statement is invalid: \(reason)"
        case .badSignature: "the signature does not verify with the passkey's public key"
        case .signCountNotIncreased(let stored, let received):
            "the signature counter went from \(stored) to \(received): the passkey may have been cloned"
        }
    }
}

/// The most this relying party reads of a response, checked before any parsing.
public enum WebAuthnLimits {
    public static let clientDataJSON = 4_096
    /// Room for an RSA-4096 key, a packed statement and a certificate chain.
    public static let attestationObject = 16_384
    public static let authenticatorData = 4_096
    public static let signature = 1_024
    /// WebAuthn Level 3 caps credential ids at 1023 bytes.
    public static let credentialID = 1_023
    public static let cborDepth = 16
}
