import Foundation
import Glibc

/// The CLI's HTTP/1.1 client, for http:// and https:// alike: one request per connection
/// (`Connection: close`). HTTPS verifies the server's chain (the system's authorities, plus
/// `authorityFile`, e.g. the laptop's own CA from `storycircle tls init`) and that it names the host.
/// The blocking socket work runs on a thread of its own, never on Swift's cooperative pool.
public struct HTTPClient: Sendable {
    public var authorityFile: String?
    /// How long any one step (connecting, the handshake, one read or write) may wait: an idle limit, as
    /// URLSession's, so a large story still downloads on a slow link.
    public var timeout: TimeInterval
    public var limits: HTTPResponseParser.Limits

    public init(authorityFile: String? = nil, timeout: TimeInterval = 15, limits: HTTPResponseParser.Limits = .init()) {
        self.authorityFile = authorityFile
        self.timeout = timeout
        self.limits = limits
    }

    public func send(_ method: String, _ url: URL, headers: [(String, String)] = [], body: Data? = nil) async throws(HTTPClientError) -> HTTPResponse {
        let target = try Target(url)
        let request = try Self.request(method, target: target, headers: headers, body: body)
        let outcome: Result<HTTPResponse, HTTPClientError> = await withCheckedContinuation { continuation in
            let thread = Thread { [self] in
                continuation.resume(returning: Result { () throws(HTTPClientError) in try exchange(target, request) })
            }
            thread.name = "storycircle-http"
            thread.start()
        }
        return try outcome.get()
    }

    private func exchange(_ target: Target, _ request: [UInt8]) throws(HTTPClientError) -> HTTPResponse {
        // OpenSSL writes with write(2): to a server that already closed, that raises SIGPIPE, which would end
        // the CLI. Blocked on this thread (its own), the write just fails with EPIPE.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        let connection = try Connection(host: target.host, port: target.port, timeout: timeout)
        if target.secure { try connection.startTLS(host: target.host, authorityFile: authorityFile) }
        try connection.write(request)
        var parser = HTTPResponseParser(limits: limits)
        while true {
            let bytes = try connection.read()
            if bytes.isEmpty { return try parser.finish() }
            if try parser.feed(bytes), let response = parser.response { return response }
        }
    }

    /// Where a URL points: scheme, host, port and the request target.
    struct Target {
        var secure: Bool
        var host: String
        var port: Int
        var hostHeader: String
        var path: String

        init(_ url: URL) throws(HTTPClientError) {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                  let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  var host = components.host, !host.isEmpty else {
                throw .invalidRequest("'\(url.absoluteString)' is not an http:// or https:// URL")
            }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            secure = scheme == "https"
            let defaultPort = secure ? 443 : 80
            port = components.port ?? defaultPort
            guard (1...65_535).contains(port) else { throw .invalidRequest("'\(url.absoluteString)' has no valid port") }
            self.host = host
            let named = host.contains(":") ? "[\(host)]" : host
            hostHeader = port == defaultPort ? named : "\(named):\(port)"
            let encodedPath = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            path = encodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
    }

    static func request(_ method: String, target: Target, headers: [(String, String)], body: Data?) throws(HTTPClientError) -> [UInt8] {
        // Nothing a caller passes may end a line early or split the request line.
        // Bytes, not Characters: "\r\n" is one Character and equals neither "\r" nor "\n".
        let forbidden: (String) -> Bool = { $0.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 } }
        guard !method.isEmpty, method.allSatisfy({ $0.isASCII && $0.isUppercase }),
              !forbidden(target.path), !target.path.utf8.contains(32), !forbidden(target.hostHeader),
              headers.allSatisfy({ !forbidden($0.0) && !forbidden($0.1) && !$0.0.contains(":") && !$0.0.isEmpty }) else {
            throw .invalidRequest("the request is not valid HTTP")
        }
        var head = "\(method) \(target.path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nUser-Agent: storycircle\r\nAccept-Encoding: identity\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if body != nil || method == "POST" || method == "PUT" || method == "PATCH" { head += "Content-Length: \(body?.count ?? 0)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (body.map { Array($0) } ?? [])
    }
}
