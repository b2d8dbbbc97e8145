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
/// its key set for `keyLifetime` at most (a key the provider withdrew stops verifying then) and fetched
/// again sooner when a token names a key it lacks (at most once every `keyRefreshInterval`).
///
/// A started sign-in is kept on the server, keyed by its `state` (`ChallengeBook`: one use, `lifetime`,
/// a bounded number per address), so the callback works in another tab. The nonce and the PKCE verifier
/// are the state's HMAC under a key of this process: nothing else is stored, and neither can be guessed
/// from the state. The state carries the provider's id after its random part, so the callback knows whom
/// to ask once the state proves the sign-in was started here.
///
/// The state is also bound to the browser that started the sign-in, so a callback URL sent to someone
/// else signs nobody in (login CSRF: an attacker's finished sign-in must not land in a colleague's
/// browser). The routes use it so:
/// - the login route makes `newBrowserBinding()`, sets it as the cookie `browserBindingCookie`
///   (`Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=600`: Lax, because the provider sends the person
///   back by a top-level navigation from its own site) and passes it to `start`;
/// - the callback route passes that cookie's value (empty when there is none) to `take` before it does
///   anything else (before the code is redeemed or a store read), then clears the cookie.
/// Only a MAC of the binding travels in the state (an HMAC under this process's key, compared in
/// constant time); the binding itself is kept nowhere here.
public actor OpenIDRelyingParty {
    public typealias Clock = @Sendable () -> Int64

    private let transport: any OpenIDTransport
    private let now: Clock
    public let metadataLifetime: Int64
    public let keyRefreshInterval: Int64
    public let keyLifetime: Int64
    /// Whether providers on this machine or at a literal address are allowed (`ProviderURL.isAcceptable`):
    /// tests only, production configuration leaves it off.
    public let allowsLocalProviders: Bool
    private var metadata: [String: (value: ProviderMetadata, fetchedAt: Int64)] = [:]
    private var keys: [String: (value: JSONWebKeySet, fetchedAt: Int64)] = [:]
    private var pending: ChallengeBook
    private let secret = Sodium.randomBytes(32)

    /// Ten minutes to sign in at the provider (a password forgotten and reset included).
    public static let lifetime: Int64 = 600_000
    public static let providerIDLength = 1...64
    /// The random part and the binding's MAC (43 characters each, a dot after each), then the provider's id.
    static let stateLength = 44 + 44 + 64
    /// The cookie that carries the browser binding (`__Host-`: set by this origin only, over https, for `/`).
    public static let browserBindingCookie = "__Host-storycircle_oidc"
    /// A binding is at least 128 bits written in base64url, and no longer than a cookie value needs to be.
    public static let browserBindingLength = 22...128

    /// `now` is milliseconds since 1970. `keyLifetime` defaults to `metadataLifetime`.
    public init(transport: any OpenIDTransport, now: @escaping Clock, metadataLifetime: Int64 = 3_600_000, keyRefreshInterval: Int64 = 60_000,
                keyLifetime: Int64? = nil, perAddress: Int = 16, allowsLocalProviders: Bool = false) {
        self.transport = transport
        self.now = now
        self.metadataLifetime = metadataLifetime
        self.keyRefreshInterval = keyRefreshInterval
        self.keyLifetime = keyLifetime ?? metadataLifetime
        self.allowsLocalProviders = allowsLocalProviders
        pending = ChallengeBook(lifetime: Self.lifetime, perRequester: perAddress)
    }

    /// A new browser binding: 32 random bytes in base64url, for the cookie `browserBindingCookie`.
    public static func newBrowserBinding() -> String {
        Base64URL.encode(Sodium.randomBytes(32))
    }

    /// The provider's authorization URL for a new sign-in from `address` in the browser holding
    /// `browserBinding` (see the type's comment), coming back to `redirectURI`.
    public func start(_ provider: OpenIDProvider, redirectURI: String, address: String, browserBinding: String) async throws(OpenIDError) -> String {
        guard Self.isProviderID(provider.id) else { throw .unknownProvider }
        // The binding is the routes' own random value: one that is not is a bug there, never a person's doing.
        precondition(Self.browserBindingLength.contains(browserBinding.utf8.count), "a browser binding is a random value of 22 to 128 bytes")
        let metadata = try await self.metadata(for: provider)
        let random = Base64URL.encode(Sodium.randomBytes(32))
        let state = random + "." + bindingMAC(random, browserBinding) + "." + provider.id
        pending.issue(Array(state.utf8), for: .authentication, by: address, at: now())
        let signIn = derive(state, providerID: provider.id)
        let query = ProviderURL.form([
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI), ("scope", "openid email"),
            ("state", state), ("nonce", signIn.nonce), ("code_challenge", Self.challenge(signIn.verifier)), ("code_challenge_method", "S256"),
        ])
        return metadata.authorizationEndpoint + (metadata.authorizationEndpoint.contains("?") ? "&" : "?") + query
    }

    /// Uses up `state`: the sign-in it started, if it was started here, in the browser that presents
    /// `browserBinding` (its cookie's value), and is still fresh. Called before anything else the callback
    /// does (no store is read for a state that proves nothing). A state presented by another browser is
    /// refused and left as it was.
    public func take(state: String, browserBinding: String) throws(OpenIDError) -> PendingSignIn {
        let parts = state.split(separator: ".", omittingEmptySubsequences: false)
        guard state.utf8.count <= Self.stateLength, parts.count == 3 else { throw .unknownState }
        let providerID = String(parts[2])
        guard Self.isProviderID(providerID), Self.browserBindingLength.contains(browserBinding.utf8.count),
              Sodium.constantTimeEquals(Array(parts[1].utf8), Array(bindingMAC(String(parts[0]), browserBinding).utf8))
        else { throw .unknownState }
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
        let discovery = ProviderURL.discovery(issuer: provider.issuer)
        guard ProviderURL.isAcceptable(discovery, allowingLocal: allowsLocalProviders) else {
            throw .providerNonsense("the issuer is not an https URL of a named host")
        }
        let response = try await transport.send(OpenIDRequest(url: discovery, form: nil, headers: [("Accept", "application/json")]))
        guard response.status == 200 else { throw .providerUnavailable("the discovery document answered \(response.status)") }
        let value = try ProviderMetadata(json: response.body, issuer: provider.issuer, allowingLocal: allowsLocalProviders)
        metadata[provider.id] = (value, at)
        return value
    }

    private func keySet(for provider: OpenIDProvider, _ metadata: ProviderMetadata, refresh: Bool) async throws(OpenIDError) -> JSONWebKeySet {
        let at = now()
        if let kept = keys[provider.id], at - kept.fetchedAt < keyLifetime, !refresh || at - kept.fetchedAt < keyRefreshInterval { return kept.value }
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

    /// The MAC binding the state's random part to the browser that holds `binding`.
    private func bindingMAC(_ random: String, _ binding: String) -> String {
        Base64URL.encode(Sodium.hmacSHA256(Array("browser:\(random).".utf8) + Sodium.sha256(Array(binding.utf8)), key: secret))
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
