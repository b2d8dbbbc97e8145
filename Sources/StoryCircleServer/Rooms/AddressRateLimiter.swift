import Locking
import StoryCircleCore

/// Token buckets per client address: `burst` tries at once, refilled at `perSecond`. Thread-safe.
///
/// Used two ways (`RoomRegistry`): as a limit that refuses (`allow`, the hellos of one address), and as a
/// budget that is spent into debt (`debit`, wrong room codes and tokens), whose debt is a wait
/// (`wait`) rather than a refusal, so that a school behind one address is slowed by a guesser, not shut out.
public final class AddressRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedAt: ServerTime
    }

    private let burst: Double
    private let perSecond: Double
    /// How far `debit` may take a bucket below empty: as far as `maxWait` reaches, and no further.
    private let floor: Double
    /// The longest `wait`, in milliseconds (nil: as long as the refill takes).
    private let maxWait: Int?
    private let buckets = Locked<[String: Bucket]>([:])

    /// `maxWaitSeconds`: the longest `wait`, however deep the debt (nil: no longest; `debit` stops at empty).
    public init(burst: Double, perSecond: Double, maxWaitSeconds: Double? = nil) {
        self.burst = burst
        self.perSecond = perSecond
        maxWait = maxWaitSeconds.map { Int(($0 * 1_000).rounded()) }
        floor = maxWaitSeconds.map { perSecond > 0 ? min(0, 1 - $0 * perSecond) : 0 } ?? 0
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

    /// Spends one try for `address` whether or not it has one left, down to the floor: each spent beyond
    /// the budget makes the address's next `wait` longer, up to `maxWaitSeconds`.
    public func debit(_ address: String, at now: ServerTime) {
        buckets.withLock { buckets in
            var bucket = refreshed(buckets[address], at: now)
            bucket.tokens = max(floor, bucket.tokens - 1)
            buckets[address] = bucket
            if buckets.count > 10_000 { forgetFull(&buckets, at: now) }
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

    /// Milliseconds until `address` has a try again (0: it has one now).
    public func wait(_ address: String, at now: ServerTime) -> Int {
        buckets.withLock { buckets in
            let tokens = refreshed(buckets[address], at: now).tokens
            guard tokens < 1 else { return 0 }
            let refill = perSecond > 0 ? Int(min(((1 - tokens) / perSecond * 1_000).rounded(.up), 86_400_000)) : 86_400_000
            return min(refill, maxWait ?? refill)
        }
    }

    /// Whole seconds until `address` has a try again, at least 1: what a refusal tells the page to wait.
    public func retryAfterSeconds(_ address: String, at now: ServerTime) -> Int {
        let milliseconds = wait(address, at: now)
        guard milliseconds < 3_600_000 else { return 3_600 }
        return max(1, Int((Double(milliseconds) / 1_000).rounded(.up)))
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
