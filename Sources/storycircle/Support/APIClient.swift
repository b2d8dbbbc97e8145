import Foundation
import TLSClient

/// The CLI's side of the HTTP API. HTTPS is checked against the system's
/// authorities and `authorityFile`. Failures come back as one sentence: an unreachable server is a hint to
/// start one, an API refusal is the server's own message.
struct APIClient {
    let server: String
    /// A certificate authority to trust besides the system's (the laptop's own, from `storycircle tls init`).
    var authorityFile: String? = nil

    struct Response {
        var status: Int
        var body: Data
    }

    func send(_ method: String, _ path: String, token: String?, json: Data? = nil, contentType: String = "application/json") async throws(CommandFailure) -> Response {
        let response = try await exchange(method, path, token: token, json: json, contentType: contentType)
        guard (200..<300).contains(response.status) else { throw CommandFailure(Self.refusal(response)) }
        return response
    }

    /// The server's answer whatever its status (a refusal's body has details a command may show); throws
    /// only when the server cannot be reached.
    func exchange(_ method: String, _ path: String, token: String?, json: Data? = nil, contentType: String = "application/json") async throws(CommandFailure) -> Response {
        guard let url = URL(string: server.trimmingSuffix("/") + path), url.scheme == "http" || url.scheme == "https" else {
            throw CommandFailure("'\(server)' is not a server URL (expected something like http://127.0.0.1:8080).")
        }
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if json != nil { headers.append(("Content-Type", contentType)) }
        do {
            let response = try await HTTPClient(authorityFile: authorityFile).send(method, url, headers: headers, body: json)
            return Response(status: response.status, body: Data(response.body))
        } catch {
            throw CommandFailure(Self.explain(error, server: server, authorityFile: authorityFile))
        }
    }

    static func refusal(_ response: Response) -> String {
        struct Body: Decodable {
            struct Refusal: Decodable { var code: String; var message: String }
            var error: Refusal
        }
        if let body = try? JSONDecoder().decode(Body.self, from: response.body) {
            return "\(body.error.message) [\(body.error.code)]"
        }
        return "the server answered HTTP \(response.status)."
    }

    /// One sentence for the teacher: a certificate problem says how to trust the laptop's authority, anything
    /// else is a hint that no server is there.
    static func explain(_ error: HTTPClientError, server: String, authorityFile: String?) -> String {
        switch error {
        case .untrustedCertificate:
            let trusted = authorityFile.map { "; it was checked against \($0)" } ?? ""
            return "\(error.description)\(trusted). Pass --ca-file <data>/tls/ca.crt (or set STORYCIRCLE_CA_FILE), or run this on the laptop that ran 'storycircle tls init'."
        case .wrongName:
            return "\(error.description) (\(server)). Use --server with a name the certificate lists, or run 'storycircle tls init --name ...' for it."
        case .cannotReadAuthorities, .invalidRequest:
            return "\(error.description)."
        case .tls:
            return "cannot talk securely to the StoryCircle server at \(server): \(error.description)."
        case .malformed, .tooLarge:
            return "the StoryCircle server at \(server) sent an answer the CLI cannot read (\(error.description))."
        case .unknownHost, .connectionRefused, .timedOut, .network:
            return "cannot reach the StoryCircle server at \(server) (\(error.description)). Is it running? Start one with 'storycircle serve', or pass --server."
        }
    }
}

extension String {
    func trimmingSuffix(_ suffix: Character) -> String {
        var result = self
        while result.last == suffix { result.removeLast() }
        return result
    }
}
