import Locking
import StoryCircleCore
import StoryCircleServer

/// This node's side of signing in: the sign-in throttle (`SignInThrottle`), the short cache of session
/// lookups, and the bound on password checks waiting for Argon2id.
///
/// A session is looked up in the store at most once a second per cookie on a node: an answer younger than
/// `cacheMilliseconds` is used as it is, so a session ended anywhere (sign-out, sign-out everywhere, an
/// account disabled or its password reset: each deletes the sessions in the store) is refused on every
/// node within a second. Lookups that find nothing are not kept.
///
/// Argon2id takes ~30 ms of a core and 19 MiB: `verify` runs it on threads of its own (`PasswordHasher`),
/// never on Swift's cooperative pool or the transport's thread, and at most `maxWaiting` checks wait for
/// them (beyond that a sign-in is told to try again, rather than memory and latency growing without end).
final class SessionDesk: Sendable {
    let book: any AccountBook
    let clock: any ServerClock
    /// Whether a password matches a stored hash, off the cooperative pool; with no hash (no such account,
    /// no password set) the same work against a stand-in, and false.
    let verify: @Sendable (_ password: String, _ hash: String?) async throws -> Bool

    static let cacheMilliseconds = 1_000
    static let maxCached = 10_000
    /// A session proved this recently may send its route's larger body before it is looked up again
    /// (`Router.admitHead`: the transport's thread reads no store); `admit` still has the last word. A
    /// session ended on this node is forgotten at once (`end`, `endAll`, `forget`); one ended on another
    /// node keeps the larger body for at most this long, and only until its next request is looked up.
    static let knownMilliseconds = 60_000
    static let maxWaiting = 64

    private struct Cached {
        var session: SessionRecord
        var account: Account
        var checkedAt: ServerTime
    }

    private let throttle: Locked<SignInThrottle>
    private let cache = Locked<[String: Cached]>([:])
    private let waiting = Locked(0)

    init(book: any AccountBook, clock: any ServerClock, limits: SignInThrottle.Limits = .init(), verify: @escaping @Sendable (String, String?) async throws -> Bool) {
        self.book = book
        self.clock = clock
        self.verify = verify
        throttle = Locked(SignInThrottle(limits: limits))
    }
    // MARK: - Sessions

    /// The live session whose cookie carries `token`, and its enabled account; nil when there is none.
    func session(token: String) async throws -> (session: SessionRecord, account: Account)? {
        let tokenHash = SessionCookies.tokenHash(token)
        let now = clock.now()
        if let cached = cache.withLock({ $0[tokenHash] }), now - cached.checkedAt < Self.cacheMilliseconds, cached.session.expiresAt > now {
            return (cached.session, cached.account)
        }
        guard let found = try await book.session(tokenHash: tokenHash, at: now), !found.account.disabled, found.session.expiresAt > now else {
            cache.withLock { $0[tokenHash] = nil }
            return nil
        }
        cache.withLock { cache in
            cache[tokenHash] = Cached(session: found.session, account: found.account, checkedAt: now)
            if cache.count > Self.maxCached {
                cache = cache.filter { now - $0.value.checkedAt < Self.knownMilliseconds && $0.value.session.expiresAt > now }
                while cache.count > Self.maxCached, let oldest = cache.min(by: { $0.value.checkedAt < $1.value.checkedAt })?.key { cache[oldest] = nil }
            }
        }
        return found
    }

    /// Whether this node proved the cookie's session lately (no store read: the transport's thread asks).
    func isKnown(token: String) -> Bool {
        let tokenHash = SessionCookies.tokenHash(token)
        let now = clock.now()
        guard let cached = cache.withLock({ $0[tokenHash] }) else { return false }
        return now - cached.checkedAt < Self.knownMilliseconds && cached.session.expiresAt > now
    }

    /// A new session for `account`, stored; the secret its cookie carries and the record. Nil when the
    /// store refuses it: the account was disabled, or (`ifPasswordHash` given) its password changed, since
    /// the caller read it. The session of the cookie the browser still sent (`replacing`) is ended first: a
    /// session planted in the browser before sign-in (session fixation) never becomes the signed-in one,
    /// and a shared computer keeps one session, not one per sign-in.
    func start(_ account: Account, method: String, ifPasswordHash passwordHash: String? = nil, replacing old: String? = nil) async throws -> (token: String, record: SessionRecord)? {
        if let old {
            let oldHash = SessionCookies.tokenHash(old)
            try await book.deleteSession(tokenHash: oldHash)
            cache.withLock { $0[oldHash] = nil }
        }
        let now = clock.now()
        let (token, record) = SessionCookies.newSession(accountID: account.id, method: method, now: now)
        guard try await book.createSession(record, ifPasswordHash: passwordHash) else { return nil }
        cache.withLock { $0[record.tokenHash] = Cached(session: record, account: account, checkedAt: now) }
        return (token, record)
    }

    /// Ends one session (this browser's).
    func end(_ session: SessionRecord) async throws {
        try await book.deleteSession(tokenHash: session.tokenHash)
        cache.withLock { $0[session.tokenHash] = nil }
    }

    /// Ends every session of the account, on every node (this one at once, others within a second).
    func endAll(accountID: String) async throws -> Int {
        let ended = try await book.deleteSessions(accountID: accountID)
        forget(accountID: accountID)
        return ended
    }

    /// Forgets what this node remembers of the account's sessions: the account was changed here (disabled,
    /// its role or school changed, its password reset), so its next request is looked up in the store.
    func forget(accountID: String) {
        cache.withLock { cache in cache = cache.filter { $0.value.account.id != accountID } }
    }

    // MARK: - Passwords

    func begin(login: String, address: String) -> SignInThrottle.Decision {
        let now = clock.now()
        return throttle.withLock { $0.begin(login: login, address: address, now: now) }
    }

    func succeeded(_ ticket: SignInThrottle.Ticket) {
        let now = clock.now()
        throttle.withLock { $0.succeeded(ticket, now: now) }
    }

    enum PasswordCheck: Equatable {
        case right
        case wrong
        /// Too many checks wait for the password threads already.
        case busy
    }

    /// Whether `password` is the one `hash` was made from (nil: no hash, and the answer is wrong after the
    /// same work), or `.busy` when too many checks wait already.
    func check(_ password: String, against hash: String?) async throws -> PasswordCheck {
        let admitted = waiting.withLock { count in
            guard count < Self.maxWaiting else { return false }
            count += 1
            return true
        }
        guard admitted else { return .busy }
        defer { waiting.withLock { $0 -= 1 } }
        return try await verify(password, hash) && hash != nil ? .right : .wrong
    }
}
