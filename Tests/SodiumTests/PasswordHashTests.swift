import Foundation
import Testing
import Sodium

/// Passwords hashed with Argon2id at OWASP's cost, in libsodium's encoded form.
@Suite("Password hashes")
struct PasswordHashTests {
    @Test func aHashIsArgon2idAtOWASPsCostAndVerifiesOnlyItsOwnPassword() {
        let hash = Sodium.hashPassword("correct horse battery staple")
        // m in KiB: 19 MiB; two passes; one lane.
        #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"), "got \(hash.prefix(32))")
        #expect(Sodium.verifyPassword("correct horse battery staple", hash: hash))
        #expect(!Sodium.verifyPassword("correct horse battery stapl", hash: hash))
        #expect(!Sodium.verifyPassword("Correct horse battery staple", hash: hash))
        #expect(!Sodium.verifyPassword("", hash: hash))
        #expect(!hash.contains("correct"), "the password itself is never in its hash")
    }

    @Test func theSamePasswordHashesDifferentlyEachTimeAndBothVerify() {
        let first = Sodium.hashPassword("twelve chars!")
        let second = Sodium.hashPassword("twelve chars!")
        #expect(first != second, "a fresh salt each time")
        #expect(Sodium.verifyPassword("twelve chars!", hash: first))
        #expect(Sodium.verifyPassword("twelve chars!", hash: second))
    }

    @Test func unicodeAndEmptyPasswordsHashAndVerify() {
        let hash = Sodium.hashPassword("Mañana 🦊 пароль")
        #expect(Sodium.verifyPassword("Mañana 🦊 пароль", hash: hash))
        // The same letters in another Unicode form are other bytes: the routes compare what was typed.
        #expect(!Sodium.verifyPassword("Man\u{303}ana 🦊 пароль", hash: hash))
        let empty = Sodium.hashPassword("")
        #expect(Sodium.verifyPassword("", hash: empty))
        #expect(!Sodium.verifyPassword(" ", hash: empty))
    }

    @Test func aHashThatIsNotArgon2idNeverVerifies() {
        let hash = Sodium.hashPassword("a password of mine")
        #expect(!Sodium.verifyPassword("a password of mine", hash: ""))
        #expect(!Sodium.verifyPassword("a password of mine", hash: "plain text"))
        #expect(!Sodium.verifyPassword("a password of mine", hash: String(hash.dropLast(4))))
        // Argon2i (not id) from the same library, and an absurdly long string, are refused without a match.
        #expect(!Sodium.verifyPassword("a password of mine", hash: hash.replacingOccurrences(of: "$argon2id$", with: "$argon2i$")))
        #expect(!Sodium.verifyPassword("a password of mine", hash: hash + String(repeating: "A", count: 200)))
    }

    @Test func aHashAtAnotherCostNeedsRehashingAndTodaysDoesNot() {
        let today = Sodium.hashPassword("a password of mine")
        #expect(!Sodium.passwordNeedsRehash(today))
        // The same hash with a lower memory cost written into it: libsodium reads the cost from the string.
        let cheaper = today.replacingOccurrences(of: "m=19456", with: "m=8192")
        #expect(Sodium.passwordNeedsRehash(cheaper))
        #expect(Sodium.passwordNeedsRehash(today.replacingOccurrences(of: "t=2", with: "t=1")))
        #expect(Sodium.passwordNeedsRehash("not a hash"))
        #expect(Sodium.passwordNeedsRehash(""))
    }
}
