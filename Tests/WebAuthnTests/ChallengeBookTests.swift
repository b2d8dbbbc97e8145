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

    /// One address asking in a loop loses its own oldest challenges, never another's.
    @Test func oneRequesterCannotPushOutAnothersChallenge() throws {
        var book = ChallengeBook(lifetime: 1_000_000, capacity: 100, perRequester: 4)
        let teachers = ChallengeBook.randomChallenge()
        book.issue(teachers, for: .authentication, by: "10.0.0.7", at: 0)
        var flood: [[UInt8]] = []
        for time in 1...100_000 {
            let challenge = ChallengeBook.randomChallenge()
            book.issue(challenge, for: .authentication, by: "10.0.0.66", at: Int64(time))
            flood.append(challenge)
        }
        #expect(book.count == 5)
        // The teacher's live challenge at the front kept every place behind it; they are not kept forever.
        #expect(book.placesKept <= 2 * 1_024 + 1)
        try book.take(teachers, for: .authentication, at: 100_001)
        #expect(refusal { try book.take(flood[99_995], for: .authentication, at: 100_001) } == .unknownChallenge)
        for challenge in flood.suffix(4) { try book.take(challenge, for: .authentication, at: 100_001) }
        #expect(book.count == 0)
    }

    /// Many requesters fill the book: then the oldest goes, whoever asked for it; expired ones go first.
    @Test func manyRequestersFillTheBookOldestFirstAndExpiredOnesGoOnTheirOwn() throws {
        var book = ChallengeBook(lifetime: 1_000, capacity: 3)
        let challenges = (0..<5).map { _ in ChallengeBook.randomChallenge() }
        for (index, challenge) in challenges.prefix(4).enumerated() { book.issue(challenge, for: .authentication, by: "a\(index)", at: Int64(index)) }
        #expect(book.count == 3)
        #expect(refusal { try book.take(challenges[0], for: .authentication, at: 10) } == .unknownChallenge)
        try book.take(challenges[2], for: .authentication, at: 10)
        book.issue(challenges[4], for: .authentication, by: "a4", at: 1_002)
        // 1 and 3 were issued at 1 and 3: at 1,002 the first has expired and is gone, the other is not.
        #expect(book.count == 2)
        try book.take(challenges[3], for: .authentication, at: 1_002)
        try book.take(challenges[4], for: .authentication, at: 1_002)
    }
}
