/// The request methods the transport hands to the application. A request with any other method never
/// reaches it: the transport answers it with a 405 itself (`TransportRefusal.methodNotAllowed`).
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case get = "GET"
    case head = "HEAD"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
    case options = "OPTIONS"

    /// The method as written on the wire (`GET`), for `Allow` headers and logs.
    public var description: String { rawValue }

    /// Whether a request with this method carries a body the transport reads before handing it on.
    public var hasBody: Bool {
        switch self {
        case .post, .put, .patch: true
        case .get, .head, .delete, .options: false
        }
    }
}
