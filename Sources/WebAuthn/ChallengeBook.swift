import Sodium

/// The challenges this server has issued and not yet seen answered: each is 32 random bytes, good for one
/// ceremony, once, for `lifetime` milliseconds. A pure value: the caller holds it (in an actor or behind a
/// lock) and gives it the time from its clock, so tests run it on a clock of their own.
///
/// It holds at most `perRequester` challenges for one requester (an address: 32, for a school whose
/// teachers all come from one address, each ceremony lasting seconds) and `capacity` in all. A
/// requester past its share loses its own oldest challenge, so one address asking for options in a loop
/// cannot push out anyone else's; only many addresses at once fill the book, and then its oldest challenge
/// goes (that ceremony fails with `unknownChallenge` and the person simply tries again). Every operation
/// is O(1) amortised (the book is kept in issue order), so a flood costs bounded memory and time.
/// Challenges live in one process: a ceremony's two requests must reach the same node.
public struct ChallengeBook: Sendable {
    /// What a challenge was issued for: registering a passkey for an account, or signing in with one.
    public enum Ceremony: Sendable, Hashable {
        case registration(accountID: String)
        case authentication
    }

    private struct Entry: Sendable {
        var ceremony: Ceremony
        var issuedAt: Int64
        var requester: String
    }

    /// Five minutes: WebAuthn's recommended ceremony timeout, and what the options ask the browser for.
    public static let defaultLifetime: Int64 = 300_000
    public let lifetime: Int64
    public let capacity: Int
    public let perRequester: Int
    private var entries: [[UInt8]: Entry] = [:]
    /// Challenges in the order they were issued, from `head` on; ones taken since are skipped when reached.
    private var order: [[UInt8]] = []
    private var head = 0
    /// Each requester's outstanding challenges, oldest first (at most `perRequester`).
    private var byRequester: [String: [[UInt8]]] = [:]

    public init(lifetime: Int64 = ChallengeBook.defaultLifetime, capacity: Int = 10_000, perRequester: Int = 32) {
        precondition(lifetime > 0 && capacity > 0 && perRequester > 0)
        self.lifetime = lifetime
        self.capacity = capacity
        self.perRequester = perRequester
    }

    /// How many challenges are outstanding (expired ones included until they are reached or pruned).
    public var count: Int { entries.count }

    /// How many places the issue order holds, taken ones included: never more than about twice the
    /// capacity, whatever the rate of requests.
    public var placesKept: Int { order.count - head }

    /// 32 bytes from libsodium's generator.
    public static func randomChallenge() -> [UInt8] { Sodium.randomBytes(32) }

    /// Records `challenge` as issued to `requester` for `ceremony` at `now` (milliseconds on the caller's clock).
    public mutating func issue(_ challenge: [UInt8], for ceremony: Ceremony, by requester: String = "", at now: Int64) {
        if let mine = byRequester[requester], mine.count >= perRequester { forget(mine[0]) }
        dropFromTheFront(.expired(at: now))
        dropFromTheFront(.overCapacity)
        forget(challenge)
        entries[challenge] = Entry(ceremony: ceremony, issuedAt: now, requester: requester)
        order.append(challenge)
        byRequester[requester, default: []].append(challenge)
        // A requester losing its own oldest leaves their places behind a live challenge at the front: once
        // those outnumber the live ones, the order is rebuilt from them (amortised O(1) per issue).
        if order.count - head > 2 * max(entries.count, 1_024) {
            order = order[head...].filter { entries[$0] != nil }
            head = 0
        }
    }

    /// Uses up `challenge`: it is removed whatever the outcome (a challenge answered once, rightly or
    /// wrongly, never counts again). Throws `unknownChallenge` when it was never issued, was used, or
    /// was issued for another ceremony (another account's registration, say), `challengeExpired` when
    /// its time has run out.
    public mutating func take(_ challenge: [UInt8], for ceremony: Ceremony, at now: Int64) throws(WebAuthnError) {
        guard let entry = forget(challenge) else { throw .unknownChallenge }
        guard entry.ceremony == ceremony else { throw .unknownChallenge }
        guard now - entry.issuedAt < lifetime, now >= entry.issuedAt else { throw .challengeExpired }
    }

    /// Forgets the challenges whose time has run out.
    public mutating func prune(at now: Int64) {
        for (challenge, entry) in entries where now - entry.issuedAt >= lifetime { forget(challenge) }
        dropFromTheFront(.taken)
    }

    /// Removes `challenge` wherever it is kept (its place in `order` is skipped when reached).
    @discardableResult
    private mutating func forget(_ challenge: [UInt8]) -> Entry? {
        guard let entry = entries.removeValue(forKey: challenge) else { return nil }
        byRequester[entry.requester]?.removeAll { $0 == challenge }
        if byRequester[entry.requester]?.isEmpty == true { byRequester[entry.requester] = nil }
        return entry
    }

    /// Which challenges at the front of `order` go: places of challenges already taken always do.
    private enum FrontRule {
        case taken
        case expired(at: Int64)
        case overCapacity
    }

    private func goes(_ challenge: [UInt8], _ rule: FrontRule) -> Bool {
        guard let entry = entries[challenge] else { return true }
        switch rule {
        case .taken: return false
        case .expired(let now): return now - entry.issuedAt >= lifetime
        case .overCapacity: return entries.count >= capacity
        }
    }

    /// Forgets challenges from the oldest on while `rule` says so, then gives back the places passed.
    private mutating func dropFromTheFront(_ rule: FrontRule) {
        while head < order.count, goes(order[head], rule) {
            forget(order[head])
            head += 1
        }
        if head >= 1_024, head * 2 >= order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
