import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer

/// The password sign-in throttle, by the clock handed in: no socket, no thread.
@Suite("Sign-in throttle")
struct SignInThrottleTests {
    let start = ServerTime(milliseconds: 1_700_000_000_000)

    /// Tries `count` wrong passwords at `login`, `spacing` apart, from the addresses in turn; how many were
    /// let through to a password check.
    private func guess(_ throttle: inout SignInThrottle, login: String, count: Int, from addresses: [String], spacing: Int, at first: ServerTime) -> Int {
        var checked = 0
        for index in 0..<count {
            if case .go = throttle.begin(login: login, address: addresses[index % addresses.count], now: first + index * spacing) { checked += 1 }
        }
        return checked
    }

    @Test func tenThousandGuessesFromOneAddressGetNowhere() {
        var throttle = SignInThrottle()
        // 10,000 guesses, ten a second: 1,000 seconds.
        let checked = guess(&throttle, login: "ada", count: 10_000, from: ["198.51.100.7"], spacing: 100, at: start)
        let limits = throttle.limits
        #expect(checked <= limits.accountBurst + 1_000_000 / limits.accountRefillMilliseconds + 1)
        #expect(checked >= limits.accountBurst)
    }

    @Test func tenThousandGuessesFromAHundredAddressesGetNowhere() {
        var throttle = SignInThrottle()
        let addresses = (0..<100).map { "203.0.113.\($0)" }
        let checked = guess(&throttle, login: "ada", count: 10_000, from: addresses, spacing: 100, at: start)
        #expect(checked <= throttle.limits.accountBurst + 1_000_000 / throttle.limits.accountRefillMilliseconds + 1)
        // At the default rate, 10,000 guesses are checked only over weeks.
        let limits = throttle.limits
        let days = Double((10_000 - limits.accountBurst) * limits.accountRefillMilliseconds) / 86_400_000
        #expect(days > 14)
    }

    @Test func whileLimitedEvenTheRightPasswordIsNotChecked() {
        var throttle = SignInThrottle()
        _ = guess(&throttle, login: "ada", count: 50, from: ["198.51.100.7"], spacing: 0, at: start)
        guard case .limited(let wait) = throttle.begin(login: "ada", address: "192.0.2.50", now: start) else {
            Issue.record("a new address was let through an empty account bucket")
            return
        }
        #expect(wait > 0 && wait <= throttle.limits.accountRefillMilliseconds)
    }

    @Test func theTeacherIsNotLockedOutForGood() {
        var throttle = SignInThrottle()
        _ = guess(&throttle, login: "ada", count: 1_000, from: ["198.51.100.7", "198.51.100.8"], spacing: 10, at: start)
        let stopped = start + 10_000
        #expect(!isGo(throttle.begin(login: "ada", address: "192.0.2.50", now: stopped)))
        // One refill after the guessing stops, the account is open again from anywhere.
        #expect(isGo(throttle.begin(login: "ada", address: "192.0.2.50", now: stopped + throttle.limits.accountRefillMilliseconds)))
    }

    @Test func anAddressTheAccountSignedInFromIsNotHeldUpByGuessesFromElsewhere() {
        var throttle = SignInThrottle()
        guard case .go(let ticket) = throttle.begin(login: "ada", address: "192.0.2.50", now: start) else {
            Issue.record("the first try was refused")
            return
        }
        throttle.succeeded(ticket, now: start)
        // Guesses from a hundred addresses empty the account's bucket ...
        _ = guess(&throttle, login: "ada", count: 10_000, from: (0..<100).map { "203.0.113.\($0)" }, spacing: 10, at: start + 1_000)
        #expect(!isGo(throttle.begin(login: "ada", address: "192.0.2.99", now: start + 102_000)))
        // ... and the teacher at the school's computer signs in all the same.
        #expect(isGo(throttle.begin(login: "ada", address: "192.0.2.50", now: start + 102_000)))
    }

    @Test func rightPasswordsSpendNothing() {
        var throttle = SignInThrottle()
        for index in 0..<500 {
            guard case .go(let ticket) = throttle.begin(login: "teacher\(index % 7)", address: "192.0.2.1", now: start + index) else {
                Issue.record("sign-in \(index) was refused")
                return
            }
            throttle.succeeded(ticket, now: start + index)
        }
    }

    @Test func triesAreCountedWhenTheyBeginNotWhenTheyEnd() {
        var throttle = SignInThrottle()
        let burst = throttle.limits.accountBurst
        for _ in 0..<burst { #expect(isGo(throttle.begin(login: "ada", address: "192.0.2.1", now: start))) }
        #expect(!isGo(throttle.begin(login: "ada", address: "192.0.2.1", now: start)))
    }

    @Test func oneAddressTryingEveryLoginIsLimitedByItsOwnBucket() {
        var throttle = SignInThrottle()
        let checked = (0..<1_000).filter { isGo(throttle.begin(login: "login\($0)", address: "198.51.100.7", now: start + $0)) }.count
        #expect(checked == throttle.limits.addressBurst)
        // Unknown and known logins alike: another address is not held up by this one.
        #expect(isGo(throttle.begin(login: "login1", address: "198.51.100.8", now: start + 1_000)))
    }

    @Test func aFloodOfMadeUpLoginsKeepsMemoryBoundedAndTheEmptyBucket() {
        var limits = SignInThrottle.Limits()
        limits.maxEntries = 100
        limits.addressBurst = 1_000_000
        var throttle = SignInThrottle(limits: limits)
        _ = guess(&throttle, login: "ada", count: 20, from: ["198.51.100.7"], spacing: 0, at: start)
        for index in 0..<1_000 { _ = throttle.begin(login: "made-up-\(index)", address: "198.51.100.\(index % 200)", now: start + 1) }
        #expect(!isGo(throttle.begin(login: "ada", address: "192.0.2.1", now: start + 2)))
    }

    /// 100,000 addresses each trying once, on the clock handed in: memory stays within the bound, and the
    /// work per try does not grow with it (a sort of every bucket per try took hours here; now seconds).
    @Test(.timeLimit(.minutes(2)))
    func aHundredThousandAddressesAreForgottenInTimeOrderWithinTheBound() {
        var limits = SignInThrottle.Limits()
        limits.maxEntries = 10_000
        var throttle = SignInThrottle(limits: limits)
        _ = guess(&throttle, login: "ada", count: 20, from: ["198.51.100.7"], spacing: 0, at: start)
        for index in 0..<100_000 {
            let address = "10.\(index / 65_536).\(index / 256 % 256).\(index % 256)"
            _ = throttle.begin(login: "made-up-\(index)", address: address, now: start + index)
            if case .go(let ticket) = throttle.begin(login: "ok-\(index % 20_000)", address: address, now: start + index) { throttle.succeeded(ticket, now: start + index) }
            let kept = throttle.entries
            guard kept.accounts <= limits.maxEntries, kept.addresses <= limits.maxEntries, kept.trusted <= limits.maxEntries else {
                Issue.record("past the bound after \(index): \(kept)")
                return
            }
        }
        #expect(!isGo(throttle.begin(login: "ada", address: "192.0.2.1", now: start + 100_000)), "the emptied account is still remembered")
    }

    private func isGo(_ decision: SignInThrottle.Decision) -> Bool {
        if case .go = decision { return true }
        return false
    }
}
