/// The authenticator data (WebAuthn §6.1): what the authenticator signs. 32 bytes of rpIdHash, one of
/// flags, a 4-byte big-endian signature counter, then the attested credential data (AT) and the
/// extensions (ED), each present exactly when its flag says so; nothing may follow.
public struct AuthenticatorData: Sendable, Equatable {
    public struct Flags: OptionSet, Sendable, Equatable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// A new credential, as the authenticator reports it when registering.
    public struct AttestedCredential: Sendable, Equatable {
        /// The authenticator's model (16 bytes; all zero when attestation is "none").
        public var aaguid: [UInt8]
        public var credentialID: [UInt8]
        /// The COSE_Key, decoded.
        public var publicKey: CBOR
        /// Its CBOR bytes, as the authenticator sent them (what the store keeps).
        public var publicKeyBytes: [UInt8]
    }

    /// The bytes as received: signatures cover exactly these.
    public var bytes: [UInt8]
    public var rpIDHash: [UInt8]
    public var flags: Flags
    public var signCount: UInt32
    public var attestedCredential: AttestedCredential?
    public var extensions: CBOR?

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= WebAuthnLimits.authenticatorData else { throw .tooLarge(field: "authenticatorData") }
        guard bytes.count >= 37 else { throw .malformedAuthenticatorData("shorter than 37 bytes") }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw .malformedAuthenticatorData("the attested credential data is cut short") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard (1...WebAuthnLimits.credentialID).contains(idLength) else {
                throw .malformedAuthenticatorData("a credential id of \(idLength) bytes")
            }
            guard bytes.count >= offset + idLength else { throw .malformedAuthenticatorData("the credential id is cut short") }
            let credentialID = Array(bytes[offset..<offset + idLength])
            offset += idLength
            let (publicKey, keyLength) = try Self.item(bytes[offset...], "the credential public key")
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialID: credentialID, publicKey: publicKey, publicKeyBytes: Array(bytes[offset..<offset + keyLength]))
            offset += keyLength
        }
        if flags.contains(.extensionData) {
            let (extensions, length) = try Self.item(bytes[offset...], "the extensions")
            guard extensions.pairs != nil else { throw .malformedAuthenticatorData("the extensions are not a map") }
            self.extensions = extensions
            offset += length
        }
        guard offset == bytes.count else { throw .malformedAuthenticatorData("\(bytes.count - offset) bytes after the data its flags announce") }
    }

    private static func item(_ bytes: ArraySlice<UInt8>, _ what: String) throws(WebAuthnError) -> (CBOR, Int) {
        do {
            return try CBOR.decodePrefix(bytes, maxBytes: WebAuthnLimits.authenticatorData, maxDepth: WebAuthnLimits.cborDepth)
        } catch {
            throw .malformedAuthenticatorData("\(what): \(error.description)")
        }
    }
}

/// The attestation object a registration returns (WebAuthn §6.5): a CBOR map of "fmt", "attStmt" and
/// "authData".
public struct AttestationObject: Sendable, Equatable {
    public var format: String
    public var statement: CBOR
    public var authenticatorData: AuthenticatorData

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= WebAuthnLimits.attestationObject else { throw .tooLarge(field: "attestationObject") }
        let object: CBOR
        do {
            object = try CBOR.decode(bytes, maxBytes: WebAuthnLimits.attestationObject, maxDepth: WebAuthnLimits.cborDepth)
        } catch {
            throw .malformedAttestationObject(error.description)
        }
        guard let pairs = object.pairs else { throw .malformedAttestationObject("not a CBOR map") }
        guard let format = object["fmt"]?.text, !format.isEmpty, format.utf8.count <= 32 else {
            throw .malformedAttestationObject("no attestation format (fmt)")
        }
        guard let statement = object["attStmt"], statement.pairs != nil else {
            throw .malformedAttestationObject("no attestation statement (attStmt)")
        }
        guard let authData = object["authData"]?.bytes else { throw .malformedAttestationObject("no authenticator data (authData)") }
        guard pairs.count == 3 else { throw .malformedAttestationObject("fields other than fmt, attStmt and authData") }
        self.format = format
        self.statement = statement
        authenticatorData = try AuthenticatorData(authData)
    }
}
