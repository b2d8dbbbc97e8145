import Sodium
import FoundationEssentials

/// The browser's clientDataJSON (WebAuthn §5.8.1): what the page asked for, as the browser (not the page)
/// saw it. The relying party compares these fields; it hashes the bytes as received.
public struct ClientData: Sendable, Equatable {
    /// "webauthn.create" or "webauthn.get".
    public var type: String
    public var challenge: [UInt8]
    /// The page's origin, as the browser knows it ("https://school.example:8443").
    public var origin: String
    public var crossOrigin: Bool
    public var topOrigin: String?

    private struct Fields: Decodable {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool?
        var topOrigin: String?
    }

    public init(json: [UInt8]) throws(WebAuthnError) {
        guard json.count <= WebAuthnLimits.clientDataJSON else { throw .tooLarge(field: "clientDataJSON") }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(json))
        } catch {
            throw .malformedClientData("not the JSON object a browser sends")
        }
        guard let challenge = Base64URL.decode(fields.challenge), !challenge.isEmpty else {
            throw .malformedClientData("the challenge is not base64url")
        }
        type = fields.type
        self.challenge = challenge
        origin = fields.origin
        crossOrigin = fields.crossOrigin ?? false
        topOrigin = fields.topOrigin
    }
}
