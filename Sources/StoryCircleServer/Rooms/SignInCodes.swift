import Foundation
import Sodium
import Locking
import StoryCircleCore

/// What a one-time sign-in code stands for: the tokens a page is handed, and the room whose teacher page it
/// goes to (none: the school's pages).
public struct SignInGrant: Sendable, Equatable, Encodable {
    public var room: String?
    public var teacherToken: String?
    public var dashboardToken: String?
    public var adminToken: String?
    /// The account the link also signs the browser into (a session cookie): the laptop's teacher.
    public var accountID: String?

    public init(room: String? = nil, teacherToken: String? = nil, dashboardToken: String? = nil, adminToken: String? = nil, accountID: String? = nil) {
        self.room = room
        self.teacherToken = teacherToken
        self.dashboardToken = dashboardToken
        self.adminToken = adminToken
        self.accountID = accountID
    }
}

/// One-time sign-in codes: a link the terminal prints instead of the room's and the school's long-lived
/// tokens, so that what a projector mirrors holds no key. A code is 128 random bits, lives a few minutes, is
/// used once, and says nothing about why it was refused (used, expired or never issued look the same).
/// The codes are kept in memory, by the node that issued them: a sign-in link works on that node only, and
/// not after a restart (the terminal makes a new one). A value with no clock and no lock: the time is
/// handed in, so tests move it by hand.
public struct SignInCodes: Sendable {
    public struct Limits: Sendable {
        /// How long a code can be used after it is printed.
        public var lifetimeMilliseconds = 5 * 60_000
        /// The most codes waiting at once; a new one pushes out the oldest.
        public var maxPending = 16
        /// Wrong codes one address may try in a window before every try of it is refused until the window ends.
        public var failuresPerWindow = 5
        public var failureWindowMilliseconds = 60_000
        /// The most addresses whose failures are remembered at once.
        public var maxAddresses = 1_024

        public init() {}
    }

    public enum Redemption: Sendable, Equatable {
        case granted(SignInGrant)
        /// Never issued, already used, or expired: the caller is told the same for each.
        case refused
        /// Too many wrong codes from this address just now; try again after this long.
        case rateLimited(retryAfterMilliseconds: Int)
    }

    private struct Pending {
        var grant: SignInGrant
        var expires: ServerTime
    }

    private struct Failures {
        var count: Int
        var windowEnds: ServerTime
    }

    public let limits: Limits
    private var pending: [String: Pending] = [:]
    private var failures: [String: Failures] = [:]

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// How many codes wait to be used (expired ones count until the next issue or redemption sweeps them).
    public var pendingCount: Int { pending.count }

    /// A new code for `grant`, usable once until `now` + the lifetime.
    public mutating func issue(_ grant: SignInGrant, now: ServerTime) -> String {
        sweep(now)
        while pending.count >= max(1, limits.maxPending), let oldest = pending.min(by: { $0.value.expires < $1.value.expires })?.key {
            pending[oldest] = nil
        }
        var code = Self.newCode()
        while pending[code] != nil { code = Self.newCode() }
        pending[code] = Pending(grant: grant, expires: now + limits.lifetimeMilliseconds)
        return code
    }

    /// The grant of `code`, which is used up by this; or why not.
    public mutating func redeem(_ code: String, from address: String, now: ServerTime) -> Redemption {
        sweep(now)
        if let failed = failures[address], failed.count >= limits.failuresPerWindow {
            return .rateLimited(retryAfterMilliseconds: max(1, failed.windowEnds - now))
        }
        guard Self.isWellFormed(code), let found = pending.removeValue(forKey: code) else {
            recordFailure(address, now: now)
            return .refused
        }
        return .granted(found.grant)
    }

    /// Codes look like this: 22 characters of base64url.
    public static func isWellFormed(_ code: String) -> Bool {
        code.utf8.count == 22 && code.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// 128 bits from the system's generator (getrandom), base64url without padding.
    static func newCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    private mutating func recordFailure(_ address: String, now: ServerTime) {
        var failed = failures[address] ?? Failures(count: 0, windowEnds: now + limits.failureWindowMilliseconds)
        failed.count += 1
        failures[address] = failed
        // A flood of addresses forgets the ones whose windows end first, never grows without end.
        while failures.count > max(1, limits.maxAddresses), let first = failures.min(by: { $0.value.windowEnds < $1.value.windowEnds })?.key {
            failures[first] = nil
        }
    }

    private mutating func sweep(_ now: ServerTime) {
        pending = pending.filter { $0.value.expires > now }
        failures = failures.filter { $0.value.windowEnds > now }
    }
}

/// The codes of one server, shared by the terminal that prints them and the route that takes them back, on
/// the server's clock.
public final class SignInDesk: Sendable {
    private let codes: Locked<SignInCodes>
    private let clock: any ServerClock

    public init(clock: any ServerClock, limits: SignInCodes.Limits = .init()) {
        self.clock = clock
        codes = Locked(SignInCodes(limits: limits))
    }

    public func issue(_ grant: SignInGrant) -> String {
        let now = clock.now()
        return codes.withLock { $0.issue(grant, now: now) }
    }

    public func redeem(_ code: String, from address: String) -> SignInCodes.Redemption {
        let now = clock.now()
        return codes.withLock { $0.redeem(code, from: address, now: now) }
    }
}
