/// An HTTP status code. Named constants for the ones the server answers with; an integer literal is a
/// status too (`HTTPResponse(status: 200)`), so a table of codes reads as the RFC does.
public struct HTTPStatus: Sendable, Hashable, Comparable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public let code: Int

    public init(_ code: Int) {
        self.code = code
    }

    public init(integerLiteral code: Int) {
        self.code = code
    }

    public static func < (lhs: HTTPStatus, rhs: HTTPStatus) -> Bool { lhs.code < rhs.code }

    public var description: String { String(code) }

    /// 2xx.
    public var isSuccess: Bool { (200..<300).contains(code) }

    /// The reason phrase of the status line, for the responses the transport writes itself (lws writes the
    /// others' status line).
    public var reasonPhrase: String {
        switch code {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    public static let ok: HTTPStatus = 200
    public static let created: HTTPStatus = 201
    public static let noContent: HTTPStatus = 204
    public static let notModified: HTTPStatus = 304
    public static let permanentRedirect: HTTPStatus = 308
    public static let badRequest: HTTPStatus = 400
    public static let unauthorized: HTTPStatus = 401
    public static let forbidden: HTTPStatus = 403
    public static let notFound: HTTPStatus = 404
    public static let methodNotAllowed: HTTPStatus = 405
    public static let conflict: HTTPStatus = 409
    public static let contentTooLarge: HTTPStatus = 413
    public static let unprocessableContent: HTTPStatus = 422
    public static let tooManyRequests: HTTPStatus = 429
    public static let internalServerError: HTTPStatus = 500
    public static let serviceUnavailable: HTTPStatus = 503
}
