import RoomStoreSupport
import Sodium

/// Argon2id (`Sodium.hashPassword`, OWASP's cost: 19 MiB, about 30 ms of a core) on two threads of its own:
/// never on Swift's cooperative pool, where one hash would hold a thread every room needs, nor on the
/// transport's service thread. Two threads: the server's two cores stay free for the rooms at least half the
/// time however many people sign in at once, and at most 38 MiB is taken by hashing. Callers queue in order.
public final class PasswordHasher: Sendable {
    private let threads: StoreThreads
    /// A hash of a password nobody knows, verified against when there is no account or no password, so that
    /// an unknown login takes as long to refuse as a wrong password.
    private let stand: Task<String, any Error>

    public init(threads count: Int = 2) {
        let threads = StoreThreads(name: "password-hash", count: count)
        self.threads = threads
        stand = Task { try await threads.run { Sodium.hashPassword(Sodium.randomBytes(24).map { String($0, radix: 16) }.joined()) } }
    }

    /// The password's Argon2id hash (libsodium's encoded form), with a fresh salt.
    public func hash(_ password: String) async throws -> String {
        try await threads.run { Sodium.hashPassword(password) }
    }

    /// Whether `password` matches `hash`. With no hash (no such account, or no password set) a hash of a
    /// password nobody knows is checked all the same, and the answer is false: the same work, the same time.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let checked: String
        if let hash { checked = hash } else { checked = try await stand.value }
        let matches = try await threads.run { Sodium.verifyPassword(password, hash: checked) }
        return hash != nil && matches
    }

    /// Whether `hash` was made at another cost than today's: hash the password again after it verified.
    public func needsRehash(_ hash: String) -> Bool {
        Sodium.passwordNeedsRehash(hash)
    }

    /// Lets what is queued finish, then ends the threads.
    public func shutDown() async {
        _ = try? await stand.value
        await threads.shutDown()
    }
}
