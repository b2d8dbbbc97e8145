import FoundationEssentials
import JOSE

/// The part of a provider's discovery document (OpenID Connect Discovery 1.0 §3) a sign-in uses.
public struct ProviderMetadata: Sendable, Equatable {
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var jwksURI: String
    /// Whether the token endpoint takes the client's secret in the form (`client_secret_post`) rather
    /// than in an Authorization header (`client_secret_basic`, the default).
    public var secretInForm: Bool

    /// The longest discovery document read (Google's and Microsoft's are about 2–4 KB).
    public static let maximumBytes = 65_536

    private struct Fields: Decodable {
        var issuer: String?
        var authorization_endpoint: String?
        var token_endpoint: String?
        var jwks_uri: String?
        var response_types_supported: [String]?
        var code_challenge_methods_supported: [String]?
        var id_token_signing_alg_values_supported: [String]?
        var token_endpoint_auth_methods_supported: [String]?
    }

    /// The document of the provider whose issuer is `issuer`: its own `issuer` must be exactly that
    /// (Discovery §4.3), and every endpoint an https URL (http only on this machine, for tests).
    public init(json: [UInt8], issuer expected: String) throws(OpenIDError) {
        guard json.count <= Self.maximumBytes else { throw .providerNonsense("the discovery document is too large") }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(json))
        } catch {
            throw .providerNonsense("the discovery document is not JSON")
        }
        guard fields.issuer == expected else { throw .providerNonsense("the discovery document names another issuer") }
        guard let authorization = fields.authorization_endpoint, let token = fields.token_endpoint, let jwks = fields.jwks_uri,
              [authorization, token, jwks].allSatisfy(ProviderURL.isAcceptable)
        else { throw .providerNonsense("the discovery document lacks an https endpoint") }
        if let types = fields.response_types_supported, !types.contains("code") {
            throw .providerNonsense("the provider does not offer the authorization code flow")
        }
        if let methods = fields.code_challenge_methods_supported, !methods.contains("S256") {
            throw .providerNonsense("the provider does not offer PKCE with S256")
        }
        if let algorithms = fields.id_token_signing_alg_values_supported, !algorithms.contains(where: { JWSAlgorithm(rawValue: $0) != nil }) {
            throw .providerNonsense("the provider signs ID tokens with neither RS256 nor ES256")
        }
        let methods = fields.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]
        issuer = expected
        authorizationEndpoint = authorization
        tokenEndpoint = token
        jwksURI = jwks
        secretInForm = !methods.contains("client_secret_basic") && methods.contains("client_secret_post")
    }

    public init(issuer: String, authorizationEndpoint: String, tokenEndpoint: String, jwksURI: String, secretInForm: Bool = false) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.secretInForm = secretInForm
    }
}

/// Which URLs a provider may send a sign-in to: https, or http to this machine (a provider run by tests).
public enum ProviderURL {
    public static func isAcceptable(_ text: String) -> Bool {
        guard text.utf8.count <= 2_048, let url = URLComponents(string: text), let host = url.host?.lowercased(), !host.isEmpty,
              url.user == nil, url.password == nil, url.fragment == nil else { return false }
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
        default: return false
        }
    }

    /// The discovery document's address for `issuer` (Discovery §4.1).
    public static func discovery(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// `pairs` as application/x-www-form-urlencoded (and a query string): everything but RFC 3986's
    /// unreserved characters percent-encoded, so a `+` in a client id is never read as a space.
    public static func form(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                escaped += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
            }
        }
        return escaped
    }
}
