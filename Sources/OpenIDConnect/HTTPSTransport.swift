import Foundation
import Locking
import TLSClient

/// Requests to providers over OpenSSL (`TLSClient.HTTPClient`: the system's authorities, the host's name
/// checked), on threads of their own, never Swift's cooperative pool. Each answer is bounded in size, each
/// step in time (`stepTimeout`), and the whole exchange by `deadline`: a provider that trickles its answer
/// is given up on then, and the sign-in says the provider is unavailable.
public struct HTTPSOpenIDTransport: OpenIDTransport {
    public var client: HTTPClient
    public var deadline: Duration

    public init(authorityFile: String? = nil, stepTimeout: TimeInterval = 5, deadline: Duration = .seconds(10)) {
        client = HTTPClient(authorityFile: authorityFile, timeout: stepTimeout, limits: .init(headerBytes: 16_384, bodyBytes: 65_536))
        self.deadline = deadline
    }

    public func send(_ request: OpenIDRequest) async throws(OpenIDError) -> OpenIDResponse {
        guard ProviderURL.isAcceptable(request.url), let url = URL(string: request.url) else {
            throw .providerNonsense("an endpoint is not an https URL")
        }
        var headers = request.headers
        let body = request.form.map { Data(ProviderURL.form($0).utf8) }
        if body != nil { headers.append(("Content-Type", "application/x-www-form-urlencoded")) }
        let outcome: Result<TLSClient.HTTPResponse, HTTPClientError>? = await withCheckedContinuation { continuation in
            let once = Once(continuation)
            let client = client
            let method = body == nil ? "GET" : "POST"
            Task { [headers] in
                do throws(HTTPClientError) {
                    once.resume(.success(try await client.send(method, url, headers: headers, body: body)))
                } catch {
                    once.resume(.failure(error))
                }
            }
            Task { [deadline] in
                try? await Task.sleep(for: deadline)
                once.resume(nil)
            }
        }
        switch outcome {
        case .none: throw .providerUnavailable("no answer in time")
        case .failure(let error): throw .providerUnavailable(error.description)
        case .success(let response): return OpenIDResponse(status: response.status, body: response.body)
        }
    }
}

/// A continuation resumed by whichever comes first: the answer or the deadline.
private final class Once<Value: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<Value?, Never>?>

    init(_ continuation: CheckedContinuation<Value?, Never>) {
        self.continuation = Locked(continuation)
    }

    func resume(_ value: Value?) {
        continuation.withLock { waiting in
            waiting?.resume(returning: value)
            waiting = nil
        }
    }
}
