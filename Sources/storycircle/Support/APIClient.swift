import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The CLI's side of the HTTP API. Failures come back as one sentence: an unreachable server is a hint to
/// start one, an API refusal is the server's own message.
struct APIClient {
    let server: String

    struct Response {
        var status: Int
        var body: Data
    }

    func send(_ method: String, _ path: String, token: String?, json: Data? = nil) async throws(CommandFailure) -> Response {
        let response = try await exchange(method, path, token: token, json: json)
        guard (200..<300).contains(response.status) else { throw CommandFailure(Self.refusal(response)) }
        return response
    }

    /// The server's answer whatever its status (a refusal's body has details a command may show); throws
    /// only when the server cannot be reached.
    func exchange(_ method: String, _ path: String, token: String?, json: Data? = nil) async throws(CommandFailure) -> Response {
        guard let url = URL(string: server.trimmingSuffix("/") + path), url.scheme == "http" || url.scheme == "https" else {
            throw CommandFailure("'\(server)' is not a server URL (expected something like http://127.0.0.1:8080).")
        }
        var request = URLRequest(url: url, timeoutInterval: 15)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = json
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let outcome: Result<Response, any Error> = await withCheckedContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(error))
                } else {
                    continuation.resume(returning: .success(Response(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data ?? Data())))
                }
            }.resume()
        }
        switch outcome {
        case .success(let response):
            return response
        case .failure(let error):
            throw CommandFailure("cannot reach the StoryCircle server at \(server) (\(Self.describe(error))). Is it running? Start one with 'storycircle serve', or pass --server.")
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

    private static func describe(_ error: any Error) -> String {
        let code = (error as NSError).code
        switch code {
        case NSURLErrorCannotConnectToHost: return "connection refused"
        case NSURLErrorTimedOut: return "no answer in time"
        case NSURLErrorCannotFindHost: return "unknown host"
        default: return (error as NSError).localizedDescription
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
