import Locking
import RoomStoreSupport
import Sodium

/// Argon2id (`Sodium.hashPassword`, OWASP's cost: 19 MiB, about 30 ms of a core) on two threads of its own:
/// never on Swift's cooperative pool, where one hash would hold a thread every room needs, nor on the
/// transport's service thread. Two threads: a burst of sign-ins is hashed two at a time, in the order it
/// came (at most 38 MiB at once), while the rooms keep their own threads.
public final class PasswordHasher: Sendable {
    private let threads: StoreThreads
    /// A hash of a password nobody knows, verified against when there is no account or no password, so that
    /// an unknown login takes as long to refuse as a wrong password. Made the first time it is needed: a
    /// server nobody signs in to never spends a hash on it.
    private let stand = Locked<Task<String, any Error>?>(nil)

    public init(threads count: Int = 2) {
        threads = StoreThreads(name: "password-hash", count: count)
    }

    /// The password's Argon2id hash (libsodium's encoded form), with a fresh salt.
    public func hash(_ password: String) async throws -> String {
        try await threads.run { Sodium.hashPassword(password) }
    }

    /// Whether `password` matches `hash`. With no hash (no such account, or no password set) a hash of a
    /// password nobody knows is checked all the same, and the answer is false: the same work, the same time.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let checked: String
        if let hash { checked = hash } else { checked = try await standIn().value }
        let matches = try await threads.run { Sodium.verifyPassword(password, hash: checked) }
        return hash != nil && matches
    }

    private func standIn() -> Task<String, any Error> {
        stand.withLock { stand in
            if let made = stand { return made }
            let made = Task { [threads] in try await threads.run { Sodium.hashPassword(Sodium.randomBytes(24).map { String($0, radix: 16) }.joined()) } }
            stand = made
            return made
        }
    }

    /// Whether `hash` was made at another cost than today's: hash the password again after it verified.
    public func needsRehash(_ hash: String) -> Bool {
        Sodium.passwordNeedsRehash(hash)
    }

    /// Lets what is queued finish, then ends the threads.
    public func shutDown() async {
        _ = try? await stand.withLock { $0 }?.value
        await threads.shutDown()
    }
}
