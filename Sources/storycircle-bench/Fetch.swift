import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange with the server under test, awaited (the scenarios' room creation, health, audio and
/// `/metrics` requests).
func fetch(_ request: URLRequest, session: URLSession = .shared) async throws -> (Data, URLResponse) {
    try await withCheckedThrowingContinuation { continuation in
        session.dataTask(with: request) { data, response, error in
            if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: (data ?? Data(), response!)) }
        }.resume()
    }
}

func fetch(_ url: URL, session: URLSession = .shared) async throws -> (Data, URLResponse) {
    try await fetch(URLRequest(url: url), session: session)
}
