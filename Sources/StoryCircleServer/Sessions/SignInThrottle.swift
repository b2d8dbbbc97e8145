import StoryCircleCore

/// How many password sign-ins are tried, per account and per address: each has a bucket of tries that
/// refills slowly, and a try must find one in both before its password is even looked at. A value with no
/// clock and no lock (the time is handed in, as for `SignInCodes`); `SessionDesk` keeps one per node.
///
/// A try takes one from each bucket when it begins (so a hundred tries sent at once are counted at once,
/// not after each has been hashed) and gives them back when the password was right: only wrong passwords,
/// unknown logins and disabled accounts spend the allowance. While a bucket is empty every try is answered
/// "wait" without the password being checked, so a guess that happens to be right gets nowhere either.
///
/// The numbers (docs/operations.md, "Signing in"), by default:
/// - an account: 10 tries, then one more every 3 minutes (20 an hour). 10,000 guesses at one account, from
///   one address or from a hundred, take about 3 weeks and are answered 429 all that time;
/// - an address: 20 tries, then one every 30 seconds (120 an hour), whatever the accounts: one computer
///   trying a common password against every login of a school gets as far as 120 logins an hour;
/// - an address the account signed in from in the last 30 days (up to 4 per account, remembered by this
///   node) has a bucket of its own for the account, of the account's size: guesses from elsewhere do not
///   lock the teacher out at the school's computer, and from a new address the account is open again at
///   most 3 minutes after the guessing stops (never locked for good).
/// Unknown logins have buckets as known ones do, so the answers say nothing about which logins exist.
public struct SignInThrottle: Sendable {
    public struct Limits: Sendable, Equatable {
        public var accountBurst = 10
        public var accountRefillMilliseconds = 180_000
        public var addressBurst = 20
        public var addressRefillMilliseconds = 30_000
        public var trustedAddressesPerAccount = 4
        public var trustMilliseconds = 30 * 86_400_000
        /// The most buckets of each kind kept at once: full ones are forgotten first (they carry nothing),
        /// then the fullest, so a flood of made-up logins cannot push out an account's empty bucket early.
        /// Past the bound they are forgotten down to three quarters of it at once: the next sweep is a quarter
        /// of the bound of new entries away, so the work per try stays O(log n) amortised.
        public var maxEntries = 100_000

        public init() {}
    }

    /// A try under way: handed back to `succeeded` when its password was right.
    public struct Ticket: Sendable, Equatable {
        public let login: String
        public let address: String
        let accountKey: String
    }

    public enum Decision: Sendable, Equatable {
        case go(Ticket)
        /// Too many tries just now; the first bucket to have a try again has one after this long.
        case limited(retryAfterMilliseconds: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updatedAt: ServerTime
    }

    public let limits: Limits
    private var accounts: [String: Bucket] = [:]
    private var addresses: [String: Bucket] = [:]
    /// By login: the addresses it signed in from, and when last.
    private var trusted: [String: [String: ServerTime]] = [:]

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether a try at `login` (normalised) from `address` may check its password now; if so it has taken
    /// its share of both buckets.
    public mutating func begin(login: String, address: String, now: ServerTime) -> Decision {
        let accountKey = isTrusted(login, from: address, now: now) ? "\(login)\n\(address)" : login
        var account = refreshed(accounts[accountKey], burst: limits.accountBurst, refill: limits.accountRefillMilliseconds, now: now)
        var place = refreshed(addresses[address], burst: limits.addressBurst, refill: limits.addressRefillMilliseconds, now: now)
        defer {
            accounts[accountKey] = account
            addresses[address] = place
            bound(&accounts, burst: limits.accountBurst, refill: limits.accountRefillMilliseconds, now: now)
            bound(&addresses, burst: limits.addressBurst, refill: limits.addressRefillMilliseconds, now: now)
        }
        guard account.tokens >= 1, place.tokens >= 1 else {
            let wait = max(
                account.tokens >= 1 ? 0 : Self.wait(account, refill: limits.accountRefillMilliseconds),
                place.tokens >= 1 ? 0 : Self.wait(place, refill: limits.addressRefillMilliseconds)
            )
            return .limited(retryAfterMilliseconds: max(1, wait))
        }
        account.tokens -= 1
        place.tokens -= 1
        return .go(Ticket(login: login, address: address, accountKey: accountKey))
    }

    /// The password was right: the try is given back to both buckets, and the address is one the account
    /// signs in from.
    public mutating func succeeded(_ ticket: Ticket, now: ServerTime) {
        if var account = accounts[ticket.accountKey] {
            account.tokens = min(Double(limits.accountBurst), account.tokens + 1)
            accounts[ticket.accountKey] = account
        }
        if var place = addresses[ticket.address] {
            place.tokens = min(Double(limits.addressBurst), place.tokens + 1)
            addresses[ticket.address] = place
        }
        var known = trusted[ticket.login, default: [:]].filter { now - $0.value < limits.trustMilliseconds }
        known[ticket.address] = now
        while known.count > max(0, limits.trustedAddressesPerAccount), let oldest = known.min(by: { $0.value < $1.value })?.key {
            known[oldest] = nil
        }
        trusted[ticket.login] = known.isEmpty ? nil : known
        if trusted.count > limits.maxEntries {
            // The accounts signed in from longest ago are forgotten first.
            var lastSeen: [(login: String, at: ServerTime)] = []
            lastSeen.reserveCapacity(trusted.count)
            for (login, addresses) in trusted {
                if let last = addresses.values.max(), now - last < limits.trustMilliseconds { lastSeen.append((login, last)) }
                else { trusted[login] = nil }
            }
            guard lastSeen.count > keptEntries else { return }
            lastSeen.sort { $0.at < $1.at }
            for entry in lastSeen.prefix(lastSeen.count - keptEntries) { trusted[entry.login] = nil }
        }
    }

    /// How many buckets and trusted accounts are kept just now (bounded by `Limits.maxEntries` each).
    public var entries: (accounts: Int, addresses: Int, trusted: Int) { (accounts.count, addresses.count, trusted.count) }

    private var keptEntries: Int { limits.maxEntries - limits.maxEntries / 4 }

    /// How many tries the account has left for an address it is not trusted from (tests and the log).
    public func triesLeft(login: String, now: ServerTime) -> Int {
        Int(refreshed(accounts[login], burst: limits.accountBurst, refill: limits.accountRefillMilliseconds, now: now).tokens)
    }

    private func isTrusted(_ login: String, from address: String, now: ServerTime) -> Bool {
        guard let last = trusted[login]?[address] else { return false }
        return now - last < limits.trustMilliseconds
    }

    private func refreshed(_ bucket: Bucket?, burst: Int, refill: Int, now: ServerTime) -> Bucket {
        guard var bucket else { return Bucket(tokens: Double(burst), updatedAt: now) }
        let elapsed = Double(max(0, now - bucket.updatedAt))
        bucket.tokens = min(Double(burst), bucket.tokens + elapsed / Double(max(1, refill)))
        bucket.updatedAt = max(bucket.updatedAt, now)
        return bucket
    }

    private static func wait(_ bucket: Bucket, refill: Int) -> Int {
        Int(((1 - bucket.tokens) * Double(refill)).rounded(.up))
    }

    private func bound(_ buckets: inout [String: Bucket], burst: Int, refill: Int, now: ServerTime) {
        guard buckets.count > limits.maxEntries else { return }
        var partial: [(key: String, tokens: Double)] = []
        partial.reserveCapacity(buckets.count)
        for (key, bucket) in buckets {
            let tokens = refreshed(bucket, burst: burst, refill: refill, now: now).tokens
            if tokens < Double(burst) { partial.append((key, tokens)) } else { buckets[key] = nil }
        }
        guard partial.count > keptEntries else { return }
        partial.sort { $0.tokens > $1.tokens }
        for entry in partial.prefix(partial.count - keptEntries) { buckets[entry.key] = nil }
    }
}
