import StoryCircleCore
import StoryCircleServer
import TransportCore

/// Step 2 of admission for what accounts own (`OwnershipRules`): once a session cookie has named the
/// account, the room, class or story the path names is looked up by its owner alone (one small read, no
/// lease, no room loaded), and a refusal is answered before any work. The admin token and a room's tokens
/// are decided as before (`Admission.swift`); these checks apply to accounts only.
extension APIHandler {
    /// Whether `account` may reach a route of `authority` at all (its owner is checked next): teachers and
    /// school administrators; a district administrator manages schools and accounts, not children's data.
    static func accountMayOwn(_ account: Account) -> Bool {
        !account.disabled && account.role != .districtAdmin && account.schoolID != nil
    }

    /// Step 2 for an account on a room route: the room's owner, read on its own, decides.
    func admitAccount(_ account: Account, toRoom code: String, needs authority: Authority) async throws {
        guard Self.accountMayOwn(account), let ownership else { throw Self.roomRefusal(code) }
        let owner: Owner??
        do {
            owner = try await ownership.roomOwner(code)
        } catch {
            throw HTTPError(.storageUnavailable, "The room cannot be read from storage just now (\(StoreFailure.from(error, record: "room").reason)).")
        }
        guard case .some(let found) = owner,
              OwnershipRules.allows(.account(account), authority == .dashboard ? .read : .change, owner: found)
        else { throw Self.roomRefusal(code) }
    }

    /// Step 2 for an account on a class route: its class (with its rooms, for reports) when the rule allows.
    func admitAccount(_ account: Account, toClass id: String, access: OwnershipRules.Access) async throws -> (found: SchoolClass, rooms: [RoomArchive]) {
        guard let classes else { throw ClassRoutes.noClasses }
        guard Self.accountMayOwn(account), ClassIDs.isWellFormed(id) else { throw ClassRoutes.refusal }
        do {
            guard let found = try await classes.schoolClass(id), OwnershipRules.allows(.account(account), access, owner: found.owner) else {
                throw ClassRoutes.refusal
            }
            return (found, access == .read ? try await classes.classRooms(id) : [])
        } catch let error as HTTPError {
            throw error
        } catch {
            throw ClassRoutes.storeRefusal(error)
        }
    }

    /// Step 2 for an account on a story route: a story it may not read is as unknown as a missing one.
    func admitAccount(_ account: Account, toStory id: String, access: OwnershipRules.Access) async throws {
        let shown = String(id.prefix(64))
        let unknown = HTTPError(.storyNotFound, "There is no story \(shown) in the library.", params: ["id": shown])
        guard let library, Self.accountMayOwn(account), StoryLibraryIDs.isWellFormed(id) else { throw unknown }
        let entry: StoryEntry?
        do {
            entry = try await library.story(id)?.entry
        } catch {
            throw HTTPError(.storageUnavailable, "The story cannot be read from storage just now (\(StoreFailure.from(error, record: "story").reason)).")
        }
        guard let entry else { throw unknown }
        guard OwnershipRules.allows(.account(account), access, owner: entry.owner, shared: entry.shared) else {
            // A story the teacher can see (shared with the school) but not change: they are told why.
            if OwnershipRules.allows(.account(account), .read, owner: entry.owner, shared: entry.shared) {
                throw HTTPError(.wrongRole, "This story is shared by another teacher: you may read and duplicate it, not change it.")
            }
            throw unknown
        }
    }
}

extension RouteRequest {
    /// What the asker's lists show (`OwnershipRules.scope`); a principal that may list nothing owned is
    /// refused (it could not have been admitted to a list route).
    var ownerScope: OwnerScope {
        get throws {
            guard let principal, let scope = OwnershipRules.scope(for: principal) else {
                throw HTTPError(.wrongRole, "Your account may not see classes, rooms or stories; a teacher or a school administrator can.")
            }
            return scope
        }
    }

    /// Who owns what this request makes: a signed-in teacher or school administrator; nobody for the admin token.
    var newOwner: Owner? { OwnershipRules.owner(makingAs: principal) }
}
