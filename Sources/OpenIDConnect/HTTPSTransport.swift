import Foundation
import Locking
import TLSClient

/// Requests to providers over OpenSSL (`TLSClient.HTTPClient`: the system's authorities, the host's name
/// checked), on threads of their own, never Swift's cooperative pool. Each answer is bounded in size, each
/// step in time (`stepTimeout`), and the whole exchange by `deadline`: a provider that trickles its answer
/// is given up on then, and the sign-in says the provider is unavailable. Only `ProviderURL.isAcceptable`
/// URLs are asked; `allowsLocalProviders` (tests only: production configuration leaves it off) lets them
/// reach this machine.
public struct HTTPSOpenIDTransport: OpenIDTransport {
    public var client: HTTPClient
    public var deadline: Duration
    public var allowsLocalProviders: Bool

    public init(authorityFile: String? = nil, stepTimeout: TimeInterval = 5, deadline: Duration = .seconds(10), allowsLocalProviders: Bool = false) {
        client = HTTPClient(authorityFile: authorityFile, timeout: stepTimeout, limits: .init(headerBytes: 16_384, bodyBytes: 65_536))
        self.deadline = deadline
        self.allowsLocalProviders = allowsLocalProviders
    }

    public func send(_ request: OpenIDRequest) async throws(OpenIDError) -> OpenIDResponse {
        guard ProviderURL.isAcceptable(request.url, allowingLocal: allowsLocalProviders), let url = URL(string: request.url) else {
            throw .providerNonsense("an endpoint is not an https URL")
        }
        var headers = request.headers
        let body = request.form.map { Data(ProviderURL.form($0).utf8) }
        if body != nil { headers.append(("Content-Type", "application/x-www-form-urlencoded")) }
        let client = client
        let method = body == nil ? "GET" : "POST"
        let outcome = await Self.race(deadline: deadline) { [headers] () async -> Result<TLSClient.HTTPResponse, HTTPClientError> in
            do throws(HTTPClientError) {
                return .success(try await client.send(method, url, headers: headers, body: body))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .none: throw .providerUnavailable("no answer in time")
        case .failure(let error): throw .providerUnavailable(error.description)
        case .success(let response): return OpenIDResponse(status: response.status, body: response.body)
        }
    }
}

extension HTTPSOpenIDTransport {
    /// What `work` gives, or nil once `deadline` has passed first. The loser is cancelled: no sleeping
    /// task outlives an answer, and a request given up on is told to stop. Neither is awaited (a request
    /// blocked in a TLS step ends at its own `stepTimeout`), so the deadline holds whatever `work` does.
    static func race<Value: Sendable>(deadline: Duration, _ work: @escaping @Sendable () async -> Value) async -> Value? {
        await race(work, deadline: { try? await Task.sleep(for: deadline) })
    }

    /// `race` with the deadline as a task of its own (tests give one they can watch).
    static func race<Value: Sendable>(_ work: @escaping @Sendable () async -> Value, deadline: @escaping @Sendable () async -> Void) async -> Value? {
        let once = Once<Value>()
        return await withCheckedContinuation { continuation in
            once.wait(continuation)
            once.hold(Task { once.resume(await work()) })
            once.hold(Task {
                await deadline()
                once.resume(nil)
            })
        }
    }
}

/// A continuation resumed by whichever comes first, the answer or the deadline, which then cancels the
/// tasks of both (the winner's cancellation is a no-op).
private final class Once<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value?, Never>?
        var tasks: [Task<Void, Never>] = []
        var finished = false
    }

    private let state = Locked(State())

    func wait(_ continuation: CheckedContinuation<Value?, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Keeps `task` to cancel when the race is over, or cancels it at once when it is over already.
    func hold(_ task: Task<Void, Never>) {
        let over = state.withLock { state in
            if !state.finished { state.tasks.append(task) }
            return state.finished
        }
        if over { task.cancel() }
    }

    func resume(_ value: Value?) {
        let losers: [Task<Void, Never>] = state.withLock { state in
            guard !state.finished else { return [] }
            state.finished = true
            state.continuation?.resume(returning: value)
            state.continuation = nil
            defer { state.tasks = [] }
            return state.tasks
        }
        for task in losers { task.cancel() }
    }
}
