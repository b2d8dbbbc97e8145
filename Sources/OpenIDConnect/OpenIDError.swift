import JOSE

/// Why a sign-in with an identity provider did not happen. `code` is stable (the audit trail's
/// `sign_in_failed` reason, and the page's message); `description` is one sentence for a log or an
/// administrator: it never holds a code, a token, a secret or what the provider answered in full.
public enum OpenIDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider could not be reached, did not answer in time, or answered with an HTTP error.
    case providerUnavailable(String)
    /// The provider answered something that is not what OpenID Connect says (bad JSON, another issuer,
    /// an endpoint that is not https).
    case providerNonsense(String)
    /// The token endpoint refused the code (its OAuth error code, e.g. `invalid_grant`).
    case tokenRefused(String)
    /// The ID token did not verify.
    case idToken(JOSEError)
    /// The callback's `state` was never issued here, was used already, or has expired.
    case unknownState
    /// The provider sent the person back with an error instead of a code (`access_denied`, say).
    case signInRefused(String)
    case unknownProvider

    public var code: String {
        switch self {
        case .providerUnavailable: "provider_unavailable"
        case .providerNonsense: "provider_nonsense"
        case .tokenRefused: "token_refused"
        case .idToken(let error): "id_token_" + error.code
        case .unknownState: "unknown_state"
        case .signInRefused: "sign_in_refused"
        case .unknownProvider: "unknown_provider"
        }
    }

    public var description: String {
        switch self {
        case .providerUnavailable(let why): "the identity provider cannot be reached: \(why)"
        case .providerNonsense(let why): "the identity provider's answer is not OpenID Connect: \(why)"
        case .tokenRefused(let error): "the identity provider refused the code (\(error))"
        case .idToken(let error): "the ID token was refused: \(error.description)"
        case .unknownState: "the sign-in was not started here, was finished already, or took too long"
        case .signInRefused(let error): "the identity provider did not sign the person in (\(error))"
        case .unknownProvider: "no such identity provider"
        }
    }

    /// An OAuth error code as a provider sends it, kept only when it is a short word (RFC 6749 §5.2's
    /// characters), so nothing else a provider says reaches a log.
    static func word(_ text: String?) -> String {
        guard let text, (1...64).contains(text.utf8.count),
              text.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != 0x20 })
        else { return "unknown" }
        return text
    }
}
