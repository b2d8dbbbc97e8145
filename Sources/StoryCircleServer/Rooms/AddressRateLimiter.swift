import Locking
import StoryCircleCore

/// Token buckets per client address: `burst` tries at once, refilled at `perSecond`. Room codes are short
/// and guessable by design; this makes guessing them slow. Thread-safe.
public final class AddressRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: ServerTime
    }

    private let burst: Double
    private let perSecond: Double
    private let buckets = Locked<[String: Bucket]>([:])

    public init(burst: Double, perSecond: Double) {
        self.burst = burst
        self.perSecond = perSecond
    }

    /// Takes one try for `address` at `now`; `false` when it has none left.
    public func allow(_ address: String, at now: ServerTime) -> Bool {
        buckets.withLock { buckets in
            var bucket = refreshed(buckets[address], at: now)
            guard bucket.tokens >= 1 else {
                buckets[address] = bucket
                return false
            }
            bucket.tokens -= 1
            buckets[address] = bucket
            if buckets.count > 10_000 { forgetFull(&buckets, at: now) }
            return true
        }
    }

    /// Gives back a try taken for a hello that the server turned away for its own reasons, not the client's.
    public func refund(_ address: String, at now: ServerTime) {
        buckets.withLock { buckets in
            var bucket = refreshed(buckets[address], at: now)
            bucket.tokens = min(burst, bucket.tokens + 1)
            buckets[address] = bucket
        }
    }

    /// Whether `address` has a try left, without taking it.
    public func hasCapacity(_ address: String, at now: ServerTime) -> Bool {
        buckets.withLock { refreshed($0[address], at: now).tokens >= 1 }
    }

    private func refreshed(_ bucket: Bucket?, at now: ServerTime) -> Bucket {
        guard var bucket else { return Bucket(tokens: burst, updatedAt: now) }
        let elapsed = Double(max(0, now - bucket.updatedAt)) / 1_000
        bucket.tokens = min(burst, bucket.tokens + elapsed * perSecond)
        bucket.updatedAt = now
        return bucket
    }

    /// Addresses whose buckets have refilled carry no information; dropping them bounds memory.
    private func forgetFull(_ buckets: inout [String: Bucket], at now: ServerTime) {
        buckets = buckets.filter { refreshed($0.value, at: now).tokens < burst }
    }
}
