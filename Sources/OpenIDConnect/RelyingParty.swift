import FoundationEssentials
import JOSE
import Sodium
import WebAuthn

/// An identity provider as a school configured it. The secret is never logged or shown: `description`
/// leaves it out.
public struct OpenIDProvider: Sendable, Equatable, CustomStringConvertible {
    public var id: String
    public var issuer: String
    public var clientID: String
    public var clientSecret: String

    public init(id: String, issuer: String, clientID: String, clientSecret: String) {
        self.id = id
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    public var description: String { "OpenIDProvider(\(id), \(issuer), client \(clientID))" }
}

/// One outbound request: a GET, or a POST of a form.
public struct OpenIDRequest: Sendable {
    public var url: String
    public var form: [(String, String)]?
    public var headers: [(String, String)]

    public init(url: String, form: [(String, String)]?, headers: [(String, String)]) {
        self.url = url
        self.form = form
        self.headers = headers
    }
}

public struct OpenIDResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// What carries requests to providers (`HTTPSOpenIDTransport` over OpenSSL; tests give their own).
public protocol OpenIDTransport: Sendable {
    func send(_ request: OpenIDRequest) async throws(OpenIDError) -> OpenIDResponse
}

/// A sign-in started here and not yet finished: what the callback needs, derived from its `state`.
public struct PendingSignIn: Sendable, Equatable {
    public var providerID: String
    public var nonce: String
    public var verifier: String
}

/// This node's OpenID Connect relying party: the authorization code flow with PKCE (S256), `state` and
/// `nonce` (OpenID Connect Core §3.1). Each provider's discovery document is kept for `metadataLifetime`,
/// its key set until a token names a key it lacks (fetched again then, at most once every
/// `keyRefreshInterval`).
///
/// A started sign-in is kept on the server, keyed by its `state` (`ChallengeBook`: one use, `lifetime`,
/// a bounded number per address), so the callback works in another tab and without third-party cookies.
/// The nonce and the PKCE verifier are the state's HMAC under a key of this process: nothing else is
/// stored, and neither can be guessed from the state. The state carries the provider's id after its
/// random part, so the callback knows whom to ask once the state proves the sign-in was started here.
public actor OpenIDRelyingParty {
    public typealias Clock = @Sendable () -> Int64

    private let transport: any OpenIDTransport
    private let now: Clock
    public let metadataLifetime: Int64
    public let keyRefreshInterval: Int64
    private var metadata: [String: (value: ProviderMetadata, fetchedAt: Int64)] = [:]
    private var keys: [String: (value: JSONWebKeySet, fetchedAt: Int64)] = [:]
    private var pending: ChallengeBook
    private let secret = Sodium.randomBytes(32)

    /// Ten minutes to sign in at the provider (a password forgotten and reset included).
    public static let lifetime: Int64 = 600_000
    public static let providerIDLength = 1...64
    static let stateLength = 44 + 64

    /// `now` is milliseconds since 1970.
    public init(transport: any OpenIDTransport, now: @escaping Clock, metadataLifetime: Int64 = 3_600_000, keyRefreshInterval: Int64 = 60_000,
                perAddress: Int = 16) {
        self.transport = transport
        self.now = now
        self.metadataLifetime = metadataLifetime
        self.keyRefreshInterval = keyRefreshInterval
        pending = ChallengeBook(lifetime: Self.lifetime, perRequester: perAddress)
    }

    /// The provider's authorization URL for a new sign-in from `address`, coming back to `redirectURI`.
    public func start(_ provider: OpenIDProvider, redirectURI: String, address: String) async throws(OpenIDError) -> String {
        guard Self.isProviderID(provider.id) else { throw .unknownProvider }
        let metadata = try await self.metadata(for: provider)
        let state = Base64URL.encode(Sodium.randomBytes(32)) + "." + provider.id
        pending.issue(Array(state.utf8), for: .authentication, by: address, at: now())
        let signIn = derive(state, providerID: provider.id)
        let query = ProviderURL.form([
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI), ("scope", "openid email"),
            ("state", state), ("nonce", signIn.nonce), ("code_challenge", Self.challenge(signIn.verifier)), ("code_challenge_method", "S256"),
        ])
        return metadata.authorizationEndpoint + (metadata.authorizationEndpoint.contains("?") ? "&" : "?") + query
    }

    /// Uses up `state`: the sign-in it started, if it was started here and is still fresh. Called before
    /// anything else the callback does (no store is read for a state that proves nothing).
    public func take(state: String) throws(OpenIDError) -> PendingSignIn {
        guard state.utf8.count <= Self.stateLength, let dot = state.firstIndex(of: ".") else { throw .unknownState }
        let providerID = String(state[state.index(after: dot)...])
        guard Self.isProviderID(providerID) else { throw .unknownState }
        do throws(WebAuthnError) {
            try pending.take(Array(state.utf8), for: .authentication, at: now())
        } catch {
            throw .unknownState
        }
        return derive(state, providerID: providerID)
    }

    /// The verified claims of the ID token `provider` gives for `code`.
    public func redeem(_ code: String, for signIn: PendingSignIn, provider: OpenIDProvider, redirectURI: String) async throws(OpenIDError) -> IDTokenClaims {
        guard provider.id == signIn.providerID else { throw .unknownProvider }
        let metadata = try await self.metadata(for: provider)
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", signIn.verifier),
                    ("client_id", provider.clientID)]
        var headers: [(String, String)] = [("Accept", "application/json")]
        if metadata.secretInForm {
            form.append(("client_secret", provider.clientSecret))
        } else {
            // RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined.
            let pair = ProviderURL.escape(provider.clientID) + ":" + ProviderURL.escape(provider.clientSecret)
            headers.append(("Authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
        }
        let response = try await transport.send(OpenIDRequest(url: metadata.tokenEndpoint, form: form, headers: headers))
        let idToken = try Self.idToken(in: response)
        let expectation = IDTokenExpectation(issuer: provider.issuer, clientID: provider.clientID, nonce: signIn.nonce, now: now() / 1_000)
        let keys = try await keySet(for: provider, metadata, refresh: false)
        do throws(JOSEError) {
            return try IDToken.verify(idToken, keys: keys, expecting: expectation)
        } catch {
            guard case .unknownKey = error else { throw .idToken(error) }
        }
        // The provider may have rotated its keys since they were fetched: once more, with new ones.
        return try Self.verified(idToken, try await keySet(for: provider, metadata, refresh: true), expectation)
    }

    private static func verified(_ token: String, _ keys: JSONWebKeySet, _ expectation: IDTokenExpectation) throws(OpenIDError) -> IDTokenClaims {
        do throws(JOSEError) {
            return try IDToken.verify(token, keys: keys, expecting: expectation)
        } catch {
            throw .idToken(error)
        }
    }

    /// The ID token in a token endpoint's answer (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3).
    static func idToken(in response: OpenIDResponse) throws(OpenIDError) -> String {
        struct Fields: Decodable {
            var id_token: String?
            var token_type: String?
            var error: String?
        }
        let fields = try? JSONDecoder().decode(Fields.self, from: Data(response.body))
        switch response.status {
        case 200:
            guard let fields else { throw .providerNonsense("the token response is not JSON") }
            guard let token = fields.id_token else { throw .providerNonsense("the token response has no ID token") }
            return token
        case 400, 401:
            throw .tokenRefused(OpenIDError.word(fields?.error))
        default:
            throw .providerUnavailable("the token endpoint answered \(response.status)")
        }
    }

    private func metadata(for provider: OpenIDProvider) async throws(OpenIDError) -> ProviderMetadata {
        let at = now()
        if let kept = metadata[provider.id], kept.value.issuer == provider.issuer, at - kept.fetchedAt < metadataLifetime { return kept.value }
        let response = try await transport.send(OpenIDRequest(url: ProviderURL.discovery(issuer: provider.issuer), form: nil, headers: [("Accept", "application/json")]))
        guard response.status == 200 else { throw .providerUnavailable("the discovery document answered \(response.status)") }
        let value = try ProviderMetadata(json: response.body, issuer: provider.issuer)
        metadata[provider.id] = (value, at)
        return value
    }

    private func keySet(for provider: OpenIDProvider, _ metadata: ProviderMetadata, refresh: Bool) async throws(OpenIDError) -> JSONWebKeySet {
        let at = now()
        if let kept = keys[provider.id], !refresh || at - kept.fetchedAt < keyRefreshInterval { return kept.value }
        let response = try await transport.send(OpenIDRequest(url: metadata.jwksURI, form: nil, headers: [("Accept", "application/json")]))
        guard response.status == 200 else { throw .providerUnavailable("the key set answered \(response.status)") }
        let value: JSONWebKeySet
        do throws(JOSEError) {
            value = try JSONWebKeySet(json: response.body)
        } catch {
            throw .providerNonsense(error.description)
        }
        keys[provider.id] = (value, at)
        return value
    }

    /// The nonce and PKCE verifier of `state`: 43 base64url characters each (RFC 7636 §4.1).
    private func derive(_ state: String, providerID: String) -> PendingSignIn {
        let bytes = Array(state.utf8)
        return PendingSignIn(
            providerID: providerID, nonce: Base64URL.encode(Sodium.hmacSHA256(Array("nonce:".utf8) + bytes, key: secret)),
            verifier: Base64URL.encode(Sodium.hmacSHA256(Array("pkce:".utf8) + bytes, key: secret)))
    }

    /// PKCE's S256 challenge (RFC 7636 §4.2).
    static func challenge(_ verifier: String) -> String {
        Base64URL.encode(Sodium.sha256(Array(verifier.utf8)))
    }

    static func isProviderID(_ id: String) -> Bool {
        providerIDLength.contains(id.utf8.count)
            && id.utf8.allSatisfy(CompactJWS.isBase64URL)
    }
}
