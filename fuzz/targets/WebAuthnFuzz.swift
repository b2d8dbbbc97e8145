// libFuzzer target: the passkey parsers (libcbor behind Sources/WebAuthn, keys through OpenSSL). Any bytes,
// read as CBOR, an attestation object, authenticator data or a COSE key, are refused with a reason or read,
// never a crash; CBOR that decodes encodes to bytes that decode and encode to the same bytes again, and an
// attestation object's credential key is exactly the CBOR it was read from.
import WebAuthn
import Sodium

private let relyingParty = RelyingParty(id: "school.example", origins: ["https://school.example"])
private let challenge: [UInt8] = Array(repeating: 7, count: 32)
private let clientDataJSON = Array(
    #"{"type":"webauthn.create","challenge":"\#(Base64URL.encode(challenge))","origin":"https://school.example"}"#.utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebAuthn(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? CBOR.decode(bytes) {
        guard let once = value.encoded() else { preconditionFailure("a decoded value does not encode") }
        guard let again = try? CBOR.decode(once) else { preconditionFailure("an encoded value does not decode") }
        precondition(again.encoded() == once, "encoding is not stable")
    }
    if let object = try? AttestationObject(bytes) {
        precondition(!object.format.isEmpty && object.statement.pairs != nil, "an attestation object without fmt or attStmt")
        if let credential = object.authenticatorData.attestedCredential {
            precondition((1...WebAuthnLimits.credentialID).contains(credential.credentialID.count), "a credential id out of bounds")
            precondition((try? CBOR.decode(credential.publicKeyBytes)) == credential.publicKey, "the key is not its bytes")
        }
    }
    if let authenticatorData = try? AuthenticatorData(bytes) {
        precondition(authenticatorData.rpIDHash.count == 32 && authenticatorData.bytes == bytes, "authenticator data misread")
    }
    _ = try? PublicKey(cose: bytes)
    _ = try? relyingParty.verifyRegistration(clientDataJSON: clientDataJSON, attestationObject: bytes, challenge: challenge)
    return 0
}
