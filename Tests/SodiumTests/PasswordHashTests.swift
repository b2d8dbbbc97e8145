import Foundation
import Testing
import Sodium

/// Passwords hashed with Argon2id at OWASP's cost, in libsodium's encoded form.
@Suite("Password hashes", .serialized)
struct PasswordHashTests {
    /// Hashed on a thread of its own, as the server does (`PasswordHasher`): each hash is tens of
    /// milliseconds of a core and 19 MiB, and the other suites in this process need the cooperative pool.
    func hash(_ password: String) async -> String {
        await offPool { Sodium.hashPassword(password) }
    }

    func verify(_ password: String, hash: String) async -> Bool {
        await offPool { Sodium.verifyPassword(password, hash: hash) }
    }

    @Test func aHashIsArgon2idAtOWASPsCostAndVerifiesOnlyItsOwnPassword() async {
        let hash = await self.hash("correct horse battery staple")
        // m in KiB: 19 MiB; two passes; one lane.
        #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"), "got \(hash.prefix(32))")
        #expect(await verify("correct horse battery staple", hash: hash))
        #expect(!(await verify("correct horse battery stapl", hash: hash)))
        #expect(!(await verify("Correct horse battery staple", hash: hash)))
        #expect(!(await verify("", hash: hash)))
        #expect(!hash.contains("correct"), "the password itself is never in its hash")
    }

    @Test func theSamePasswordHashesDifferentlyEachTimeAndBothVerify() async {
        let first = await self.hash("twelve chars!")
        let second = await self.hash("twelve chars!")
        #expect(first != second, "a fresh salt each time")
        #expect(await verify("twelve chars!", hash: first))
        #expect(await verify("twelve chars!", hash: second))
    }

    @Test func unicodeAndEmptyPasswordsHashAndVerify() async {
        let hash = await self.hash("Mañana 🦊 пароль")
        #expect(await verify("Mañana 🦊 пароль", hash: hash))
        // The same letters in another Unicode form are other bytes: the routes compare what was typed.
        #expect(!(await verify("Man\u{303}ana 🦊 пароль", hash: hash)))
        let empty = await self.hash("")
        #expect(await verify("", hash: empty))
        #expect(!(await verify(" ", hash: empty)))
    }

    @Test func aHashThatIsNotArgon2idNeverVerifies() async {
        let hash = await self.hash("a password of mine")
        #expect(!(await verify("a password of mine", hash: "")))
        #expect(!(await verify("a password of mine", hash: "plain text")))
        #expect(!(await verify("a password of mine", hash: String(hash.dropLast(4)))))
        // Argon2i (not id) from the same library, and an absurdly long string, are refused without a match.
        #expect(!(await verify("a password of mine", hash: hash.replacingOccurrences(of: "$argon2id$", with: "$argon2i$"))))
        #expect(!(await verify("a password of mine", hash: hash + String(repeating: "A", count: 200))))
    }

    @Test func aHashAtAnotherCostNeedsRehashingAndTodaysDoesNot() async {
        let today = await self.hash("a password of mine")
        #expect(!Sodium.passwordNeedsRehash(today))
        // The same hash with a lower memory cost written into it: libsodium reads the cost from the string.
        let cheaper = today.replacingOccurrences(of: "m=19456", with: "m=8192")
        #expect(Sodium.passwordNeedsRehash(cheaper))
        #expect(Sodium.passwordNeedsRehash(today.replacingOccurrences(of: "t=2", with: "t=1")))
        #expect(Sodium.passwordNeedsRehash("not a hash"))
        #expect(Sodium.passwordNeedsRehash(""))
    }
}

private func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
