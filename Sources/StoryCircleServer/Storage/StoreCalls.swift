import Foundation

/// Runs a blocking store call (a database round trip, a wait for the writer) on a thread of its own, never
/// on Swift's cooperative pool.
enum StoreCalls {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    private static let queue = DispatchQueue(label: "storycircle.store-calls", attributes: .concurrent)
}
