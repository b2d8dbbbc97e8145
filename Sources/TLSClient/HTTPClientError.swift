/// Why an exchange failed, in words a teacher can act on (`description` is one clause, no full stop).
public enum HTTPClientError: Error, Equatable, CustomStringConvertible {
    case invalidRequest(String)
    case unknownHost(String)
    case connectionRefused
    case timedOut
    case network(String)
    /// The certificate chain does not lead to a trusted authority; the payload is OpenSSL's reason.
    case untrustedCertificate(String)
    /// The certificate is trusted but names other hosts.
    case wrongName(String)
    case tls(String)
    case cannotReadAuthorities(String)
    case malformed(String)
    case tooLarge(String)

    public var description: String {
        switch self {
        case .invalidRequest(let why): return why
        case .unknownHost(let host): return "unknown host \(host)"
        case .connectionRefused: return "connection refused"
        case .timedOut: return "no answer in time"
        case .network(let why): return why
        case .untrustedCertificate(let why): return "the server's certificate is not trusted (\(why))"
        case .wrongName(let host): return "the server's certificate does not name \(host)"
        case .tls(let why): return "the secure connection failed (\(why))"
        case .cannotReadAuthorities(let file): return "cannot read the certificate authority file \(file)"
        case .malformed(let why): return why
        case .tooLarge(let why): return why
        }
    }
}
