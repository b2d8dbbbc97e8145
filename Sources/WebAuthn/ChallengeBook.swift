import Sodium

/// The challenges this server has issued and not yet seen answered: each is 32 random bytes, good for one
/// ceremony, once, for `lifetime` milliseconds. A pure value: the caller holds it (in an actor or behind a
/// lock) and gives it the time from its clock, so tests run it on a clock of their own.
///
/// It holds at most `capacity` challenges; issuing one more drops the oldest (its ceremony then fails with
/// `unknownChallenge` and the person simply tries again), so a flood of option requests costs bounded
/// memory. Challenges live in one process: a ceremony's two requests must reach the same node.
public struct ChallengeBook: Sendable {
    /// What a challenge was issued for: registering a passkey for an account, or signing in with one.
    public enum Ceremony: Sendable, Hashable {
        case registration(accountID: String)
        case authentication
    }

    private struct Entry: Sendable {
        var ceremony: Ceremony
        var issuedAt: Int64
    }

    /// Five minutes: WebAuthn's recommended ceremony timeout, and what the options ask the browser for.
    public static let defaultLifetime: Int64 = 300_000
    public let lifetime: Int64
    public let capacity: Int
    private var entries: [[UInt8]: Entry] = [:]

    public init(lifetime: Int64 = ChallengeBook.defaultLifetime, capacity: Int = 10_000) {
        precondition(lifetime > 0 && capacity > 0)
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// How many challenges are outstanding (expired ones included until the next `issue` or `prune`).
    public var count: Int { entries.count }

    /// 32 bytes from libsodium's generator.
    public static func randomChallenge() -> [UInt8] { Sodium.randomBytes(32) }

    /// Records `challenge` as issued for `ceremony` at `now` (milliseconds on the caller's clock).
    public mutating func issue(_ challenge: [UInt8], for ceremony: Ceremony, at now: Int64) {
        if entries.count >= capacity { prune(at: now) }
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.issuedAt < $1.value.issuedAt })?.key {
            entries[oldest] = nil
        }
        entries[challenge] = Entry(ceremony: ceremony, issuedAt: now)
    }

    /// Uses up `challenge`: it is removed whatever the outcome (a challenge answered once, rightly or
    /// wrongly, never counts again). Throws `unknownChallenge` when it was never issued, was used, or
    /// was issued for another ceremony (another account's registration, say), `challengeExpired` when
    /// its time has run out.
    public mutating func take(_ challenge: [UInt8], for ceremony: Ceremony, at now: Int64) throws(WebAuthnError) {
        guard let entry = entries.removeValue(forKey: challenge) else { throw .unknownChallenge }
        guard entry.ceremony == ceremony else { throw .unknownChallenge }
        guard now - entry.issuedAt < lifetime, now >= entry.issuedAt else { throw .challengeExpired }
    }

    /// Forgets the challenges whose time has run out.
    public mutating func prune(at now: Int64) {
        entries = entries.filter { now - $0.value.issuedAt < lifetime }
    }
}
