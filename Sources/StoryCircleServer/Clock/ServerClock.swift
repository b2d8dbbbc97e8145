import Foundation
import StoryCircleCore

/// The server's clock: the only source of "now" for rooms, and the only way they wait. Tests inject a
/// `ManualClock` so time moves only when they say.
public protocol ServerClock: Sendable {
    func now() -> ServerTime
    /// Suspends until `deadline` (or returns at once if it has passed); throws if the task is cancelled.
    func sleep(until deadline: ServerTime) async throws
}

/// Wall-clock time in milliseconds since the epoch, which browsers can compare with `Date.now()` after
/// correcting by their measured offset.
public struct SystemClock: ServerClock {
    public init() {}

    public func now() -> ServerTime {
        ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
    }

    public func sleep(until deadline: ServerTime) async throws {
        let remaining = deadline - now()
        if remaining > 0 {
            try await Task.sleep(for: .milliseconds(remaining))
        }
    }
}
