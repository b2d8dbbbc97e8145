import Locking
import StoryCircleCore

/// The accounts that are disabled, as this node last read them: a room owned by one of them carries on
/// (its children play, its projector shows it) but is no longer controlled through its teacher token.
/// Rooms ask on every teacher command, on the transport's thread, so the answer is in memory: the server
/// reads the set again from the store at most `refreshMilliseconds` apart (`ClassroomServer.watch`)
/// and the node that disables an account marks it at once, so every node stops its rooms' controls within
/// a second, as every node ends the account's sessions (`SessionDesk`).
package final class DisabledOwners: Sendable {
    package static let refreshMilliseconds = 500

    private let ids = Locked<Set<String>>([])

    package init() {}

    /// Whether the room owned by `owner` (nil: the admin token's room, which nobody disables) is stopped.
    package func stops(_ owner: Owner?) -> Bool {
        guard let owner else { return false }
        return ids.withLock { $0.contains(owner.accountID) }
    }

    /// The store's answer, as it is now.
    package func replace(with disabled: Set<String>) {
        ids.withLock { $0 = disabled }
    }

    /// An account this node just disabled or enabled, before the next read.
    package func mark(_ accountID: String, disabled: Bool) {
        ids.withLock { ids in
            if disabled { ids.insert(accountID) } else { ids.remove(accountID) }
        }
    }

    /// The refusal a stopped room's teacher is given: the children carry on.
    package static func refusal(room code: String) -> RoomError {
        RoomError(.accountDisabled, "The account that owns room \(code.prefix(12)) is disabled: the room carries on for the children, but it cannot be controlled from this account.",
                  params: ["code": String(code.prefix(12))])
    }
}
