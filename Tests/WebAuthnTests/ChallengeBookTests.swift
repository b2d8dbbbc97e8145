import Testing
import WebAuthn

/// Challenges: single-use, short-lived, tied to their ceremony, bounded in number, on the test's own clock.
struct ChallengeBookTests {
    let alice = ChallengeBook.Ceremony.registration(accountID: "acc_alice")

    @Test func aChallengeIsRandomAnd32BytesLong() {
        let challenges = (0..<100).map { _ in ChallengeBook.randomChallenge() }
        #expect(challenges.allSatisfy { $0.count == 32 })
        #expect(Set(challenges).count == 100)
    }

    @Test func aChallengeCountsOnceOnly() throws {
        var book = ChallengeBook()
        let challenge = ChallengeBook.randomChallenge()
        book.issue(challenge, for: .authentication, at: 1_000)
        try book.take(challenge, for: .authentication, at: 2_000)
        #expect(refusal { try book.take(challenge, for: .authentication, at: 2_001) } == .unknownChallenge)
        #expect(refusal { try book.take(ChallengeBook.randomChallenge(), for: .authentication, at: 2_001) } == .unknownChallenge)
        #expect(book.count == 0)
    }

    @Test func aChallengeExpiresAfterItsLifetime() throws {
        var book = ChallengeBook(lifetime: 60_000)
        let (early, late) = (ChallengeBook.randomChallenge(), ChallengeBook.randomChallenge())
        book.issue(early, for: alice, at: 0)
        book.issue(late, for: alice, at: 0)
        try book.take(early, for: alice, at: 59_999)
        #expect(refusal { try book.take(late, for: alice, at: 60_000) } == .challengeExpired)
        // Expired ones are used up too, and pruned.
        #expect(refusal { try book.take(late, for: alice, at: 60_001) } == .unknownChallenge)
        book.issue(early, for: alice, at: 0)
        book.prune(at: 60_000)
        #expect(book.count == 0)
    }

    @Test func aChallengeIsForItsCeremonyOnlyAndUsedUpByAnyOther() {
        var book = ChallengeBook()
        let challenge = ChallengeBook.randomChallenge()
        book.issue(challenge, for: alice, at: 0)
        #expect(refusal { try book.take(challenge, for: .registration(accountID: "acc_bob"), at: 1) } == .unknownChallenge)
        #expect(refusal { try book.take(challenge, for: alice, at: 2) } == .unknownChallenge)
        book.issue(challenge, for: alice, at: 0)
        #expect(refusal { try book.take(challenge, for: .authentication, at: 1) } == .unknownChallenge)
    }

    @Test func aFullBookDropsItsOldestChallenge() throws {
        var book = ChallengeBook(lifetime: 1_000_000, capacity: 3)
        let challenges = (0..<4).map { _ in ChallengeBook.randomChallenge() }
        for (time, challenge) in challenges.enumerated() { book.issue(challenge, for: .authentication, at: Int64(time)) }
        #expect(book.count == 3)
        #expect(refusal { try book.take(challenges[0], for: .authentication, at: 10) } == .unknownChallenge)
        for challenge in challenges.dropFirst() { try book.take(challenge, for: .authentication, at: 10) }
    }
}
