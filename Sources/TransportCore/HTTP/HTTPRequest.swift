/// An HTTP request to a dynamic route (`/api`, `/healthz`, `/metrics`, `/audio`), read by the transport and
/// handed to the application.
public struct HTTPRequest: Sendable {
    /// Identifies this request for the transport's `respond(to:with:)`.
    public struct ID: Hashable, Sendable {
        package let connection: UInt64
        package let sequence: UInt64

        package init(connection: UInt64, sequence: UInt64) {
            self.connection = connection
            self.sequence = sequence
        }
    }

    public var id: ID
    public var method: HTTPMethod
    /// The path, percent-decoded, without the query.
    public var path: String
    public var query: [String: String]
    /// Header values by lowercase name (only the headers the server uses are read).
    public var headers: [String: String]
    public var body: [UInt8]
    /// The client's address (the first `X-Forwarded-For` hop when proxies are trusted).
    public var peer: String

    public init(id: ID, method: HTTPMethod, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = [], peer: String = "") {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
    }
}

public struct HTTPResponse: Sendable, Equatable {
    public var status: HTTPStatus
    /// Extra headers (`Content-Type` and `Content-Length` are set from `contentType` and `body`).
    public var headers: [(name: String, value: String)]
    public var contentType: String
    public var body: [UInt8]

    public init(status: HTTPStatus, contentType: String = "text/plain; charset=utf-8", headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.body == rhs.body
            && lhs.headers.map { "\($0.name):\($0.value)" } == rhs.headers.map { "\($0.name):\($0.value)" }
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
