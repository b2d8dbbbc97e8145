import Locking
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// Requests refused for want of authority (401), counted per client address: a burst, then a steady rate,
/// beyond which the address is told to wait (429 with `Retry-After`) instead of being told again that its
/// token is wrong. A request with a valid token is never counted or held up here, so one device guessing
/// tokens does not lock out the teachers of its school's address.
///
/// Logged once per burst: its first refusal, and the moment it is limited, each with the address and the
/// route's pattern, never the token. Thread-safe; the transport's service thread asks it too (a body refused
/// before it is read), so every call is a lock and a few sums.
final class RefusedRequests: Sendable {
    struct Limits: Sendable {
        var burst = 20.0
        var perSecond = 0.5
    }

    private struct Bucket {
        var tokens: Double
        var updatedAt: ServerTime
        var limitedLogged = false
    }

    /// What a refused request is answered with now.
    enum Verdict: Equatable {
        case unauthorized
        case limited(retryAfterSeconds: Int)
    }

    private let limits: Limits
    private let buckets = Locked<[String: Bucket]>([:])
    private let logger: StoryCircleLog?

    init(limits: Limits = Limits(), logger: StoryCircleLog? = nil) {
        self.limits = limits
        self.logger = logger
    }

    /// Counts a refusal from `address` to `route` at `now`, and says whether to answer 401 or 429.
    func refuse(_ address: String, route: String, at now: ServerTime) -> Verdict {
        enum Note { case none, firstOfBurst, limited }
        let (verdict, note): (Verdict, Note) = buckets.withLock { buckets in
            let fresh = buckets[address] == nil
            var bucket = refreshed(buckets[address], at: now)
            let full = fresh || bucket.tokens >= limits.burst
            defer {
                buckets[address] = bucket
                if buckets.count > 10_000 { forgetFull(&buckets, at: now) }
            }
            if full { bucket.limitedLogged = false }
            guard bucket.tokens >= 1 else {
                let wait = Int(((1 - bucket.tokens) / limits.perSecond).rounded(.up))
                let note: Note = bucket.limitedLogged ? .none : .limited
                bucket.limitedLogged = true
                return (.limited(retryAfterSeconds: max(1, wait)), note)
            }
            bucket.tokens -= 1
            return (.unauthorized, full ? .firstOfBurst : .none)
        }
        switch note {
        case .none: break
        case .firstOfBurst: logger?.notice("Request refused: no valid token for the route", ["client": address, "route": route])
        case .limited: logger?.warning("Refused requests from one address are limited", ["client": address, "route": route, "burst": String(Int(limits.burst))])
        }
        return verdict
    }

    /// How long `address` must wait, if it is limited now (nothing is counted).
    func waitIfLimited(_ address: String, at now: ServerTime) -> Int? {
        buckets.withLock { buckets in
            guard let bucket = buckets[address] else { return nil }
            let tokens = refreshed(bucket, at: now).tokens
            return tokens >= 1 ? nil : max(1, Int(((1 - tokens) / limits.perSecond).rounded(.up)))
        }
    }

    private func refreshed(_ bucket: Bucket?, at now: ServerTime) -> Bucket {
        guard var bucket else { return Bucket(tokens: limits.burst, updatedAt: now) }
        let elapsed = Double(max(0, now.milliseconds - bucket.updatedAt.milliseconds)) / 1_000
        bucket.tokens = min(limits.burst, bucket.tokens + elapsed * limits.perSecond)
        bucket.updatedAt = now
        return bucket
    }

    /// Addresses whose buckets have refilled carry nothing; dropping them bounds memory.
    private func forgetFull(_ buckets: inout [String: Bucket], at now: ServerTime) {
        buckets = buckets.filter { refreshed($0.value, at: now).tokens < limits.burst }
    }
}

extension APIHandler {
    /// The 429 for an address refused too often just now, if it is (nothing is counted).
    func limitedNow(_ request: HTTPRequest) -> HTTPResponse? {
        guard let refused, let seconds = refused.waitIfLimited(request.peer, at: clock.now()) else { return nil }
        return Self.tooManyRefusals(seconds)
    }

    static func tooManyRefusals(_ seconds: Int) -> HTTPResponse {
        var limited = HTTPError(.rateLimited, "Too many requests without a valid token from this address; try again in \(seconds) seconds.").response
        limited.headers.append(("retry-after", String(seconds)))
        return limited
    }

    /// A 401 counted against its address (`RefusedRequests`): answered as it is within the burst, else 429
    /// with `Retry-After`. Any other response passes through, and so do the refusals of routes open to
    /// anyone: the sign-in link and the password sign-in have throttles of their own (`SignInCodes`,
    /// `SignInThrottle`) that say how long to wait.
    func counted(_ response: HTTPResponse, _ request: HTTPRequest, _ route: Route) -> HTTPResponse {
        guard response.status.code == 401, route.authority != .none, let refused else { return response }
        switch refused.refuse(request.peer, route: "\(route.method.rawValue) \(route.pattern)", at: clock.now()) {
        case .unauthorized:
            return response
        case .limited(let seconds):
            return Self.tooManyRefusals(seconds)
        }
    }
}
