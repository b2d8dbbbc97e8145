import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer

/// One-time sign-in codes, by the clock handed in: no socket, no thread.
@Suite("Sign-in codes")
struct SignInCodesTests {
    let start = ServerTime(milliseconds: 1_700_000_000_000)
    let grant = SignInGrant(room: "123456", teacherToken: "teacher", dashboardToken: "board", adminToken: "admin")

    @Test func aCodeIsGrantedOnceOnly() {
        var codes = SignInCodes()
        let code = codes.issue(grant, now: start)
        #expect(SignInCodes.isWellFormed(code))
        #expect(codes.redeem(code, from: "10.0.0.1", now: start + 1_000) == .granted(grant))
        #expect(codes.redeem(code, from: "10.0.0.1", now: start + 2_000) == .refused)
        #expect(codes.pendingCount == 0)
    }

    @Test func aCodeExpiresAfterItsLifetime() {
        var codes = SignInCodes()
        let lifetime = codes.limits.lifetimeMilliseconds
        let late = codes.issue(grant, now: start)
        let inTime = codes.issue(grant, now: start)
        #expect(codes.redeem(inTime, from: "10.0.0.1", now: start + (lifetime - 1)) == .granted(grant))
        #expect(codes.redeem(late, from: "10.0.0.1", now: start + lifetime) == .refused)
    }

    @Test func codesAreRandomAndDistinct() {
        var codes = SignInCodes()
        let issued = (0..<16).map { _ in codes.issue(grant, now: start) }
        #expect(Set(issued).count == 16)
        #expect(issued.allSatisfy { $0.count == 22 && SignInCodes.isWellFormed($0) })
    }

    @Test func aWrongOrMalformedCodeIsRefusedAndGrantsNothing() {
        var codes = SignInCodes()
        let code = codes.issue(grant, now: start)
        var wrong = Array(code)
        wrong[0] = wrong[0] == "A" ? "B" : "A"
        #expect(codes.redeem(String(wrong), from: "10.0.0.1", now: start) == .refused)
        #expect(codes.redeem("", from: "10.0.0.2", now: start) == .refused)
        #expect(codes.redeem(code + "x", from: "10.0.0.3", now: start) == .refused)
        #expect(codes.redeem(String(repeating: "é", count: 22), from: "10.0.0.4", now: start) == .refused)
        // The right code still works: a wrong one does not use it up.
        #expect(codes.redeem(code, from: "10.0.0.5", now: start) == .granted(grant))
    }

    @Test func theNumberOfPendingCodesIsBoundedAndTheOldestGoFirst() {
        var limits = SignInCodes.Limits()
        limits.maxPending = 3
        var codes = SignInCodes(limits: limits)
        let issued = (0..<5).map { codes.issue(grant, now: start + $0) }
        #expect(codes.pendingCount == 3)
        #expect(codes.redeem(issued[0], from: "10.0.0.1", now: start + 10) == .refused)
        #expect(codes.redeem(issued[1], from: "10.0.0.1", now: start + 10) == .refused)
        for code in issued[2...] { #expect(codes.redeem(code, from: "10.0.0.1", now: start + 10) == .granted(grant)) }
    }

    @Test func wrongCodesFromOneAddressAreRateLimitedUntilTheWindowEnds() {
        var codes = SignInCodes()
        let limits = codes.limits
        let code = codes.issue(grant, now: start)
        for _ in 0..<limits.failuresPerWindow { #expect(codes.redeem("nope", from: "10.0.0.9", now: start) == .refused) }
        // Even the right code is refused from there until the window ends: guessing gets no answer at all.
        #expect(codes.redeem(code, from: "10.0.0.9", now: start + 1_000) == .rateLimited(retryAfterMilliseconds: limits.failureWindowMilliseconds - 1_000))
        // Another address is not held back by it.
        let other = codes.issue(grant, now: start + 1_000)
        #expect(codes.redeem(other, from: "10.0.0.10", now: start + 1_000) == .granted(grant))
        #expect(codes.redeem(code, from: "10.0.0.9", now: start + limits.failureWindowMilliseconds) == .granted(grant))
    }

    @Test func theAddressesRememberedForFailuresAreBounded() {
        var limits = SignInCodes.Limits()
        limits.maxAddresses = 4
        limits.failuresPerWindow = 1
        var codes = SignInCodes(limits: limits)
        for address in 0..<10 { _ = codes.redeem("nope", from: "10.0.1.\(address)", now: start + address) }
        // The earliest addresses were forgotten; the latest are still held back.
        #expect(codes.redeem("nope", from: "10.0.1.0", now: start + 20) == .refused)
        #expect(codes.redeem("nope", from: "10.0.1.9", now: start + 20) == .rateLimited(retryAfterMilliseconds: limits.failureWindowMilliseconds - 11))
    }
}
