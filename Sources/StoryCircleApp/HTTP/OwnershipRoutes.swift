import Foundation
import StoryCircleCore
import TransportCore

/// Who owns what (`docs/protocol.md`, "Ownership"): `POST /api/accounts/{id}/adopt` names an account the
/// owner of everything stored before accounts existed (the CLI's `storycircle account adopt LOGIN`), and
/// `PUT /api/stories/{id}/shared` shares a story with its school's teachers or stops sharing it.
struct OwnershipRoutes: RouteCollection {
    static let adoptRefusal = Route.Refusal.adminOnly(
        unauthorized: "Naming the owner of what was stored before accounts needs the admin token (Authorization: Bearer …).",
        wrongRole: "Naming the owner of what was stored before accounts needs the admin token; a room's token speaks for one room."
    )

    var routes: [Route] {
        [
            Route(.post, "/api/accounts/:id/adopt", .admin, refusal: Self.adoptRefusal) { try await $0.adoptUnowned($1) },
            Route(.put, "/api/stories/:id/shared", .admin, refusal: StoryRoutes.refusal) { try await $0.shareStory($1) },
        ]
    }
}

/// What `adopt` answers.
struct AdoptionResponse: Encodable {
    var account: String
    var schoolID: String?
    var adopted: AdoptedCounts
}

extension APIHandler {
    /// The store's ownership book, or 404 on a server without one (memory).
    private func ownershipBook() throws -> any OwnershipBook {
        guard let ownership else { throw HTTPError(.notFound, "This server keeps no owners (it runs without a database).") }
        return ownership
    }

    /// `:id` is an account's id or its login (the CLI names a teacher by the login they sign in with).
    fileprivate func adoptUnowned(_ request: RouteRequest) async throws -> HTTPResponse {
        let ownership = try ownershipBook()
        guard let accounts else { throw HTTPError(.notFound, "This server keeps no accounts (it runs without a database).") }
        let key = request[parameter: "id"]
        let found: Account?
        do {
            if let login = AccountLogins.normalised(key) {
                if let byID = try await accounts.account(id: key) {
                    found = byID
                } else {
                    found = try await accounts.account(login: login)
                }
            } else {
                found = nil
            }
        } catch {
            throw HTTPError(.storageUnavailable, "The accounts cannot be read from storage just now (\(StoreFailure.from(error, record: "account").reason)).")
        }
        let shown = String(key.prefix(64))
        guard let account = found else { throw HTTPError(.notFound, "There is no account \(shown).", params: ["id": shown]) }
        // What is adopted belongs to a school: a district administrator has none, so its school could not
        // see it. A disabled account could not use it.
        guard account.schoolID != nil, !account.disabled else {
            throw HTTPError(.invalidMessage, "Name a teacher or a school administrator who can sign in: \(shown) has no school or is disabled.", params: ["id": shown])
        }
        do {
            let owner = Owner(account)
            let adopted = try await audited(.ownerAdopted, target: "account:\(account.id)", request, schoolID: account.schoolID) {
                try await ownership.adoptUnowned(by: owner)
            }
            return .json(200, AdoptionResponse(account: account.id, schoolID: owner.schoolID, adopted: adopted))
        } catch {
            throw HTTPError(.storageUnavailable, "The owners could not be saved (\(StoreFailure.from(error, record: "owner").reason)).")
        }
    }

    /// `{"shared": true}` shares the story with the teachers of its owner's school; false stops sharing it.
    fileprivate func shareStory(_ request: RouteRequest) async throws -> HTTPResponse {
        let ownership = try ownershipBook()
        let id = request[parameter: "id"]
        let shown = String(id.prefix(64))
        let notFound = HTTPError(.storyNotFound, "There is no story \(shown) in the library.", params: ["id": shown])
        guard StoryLibraryIDs.isWellFormed(id) else { throw notFound }
        guard case .bool(let shared)? = try decodeObject(request.body)["shared"] else {
            throw HTTPError(.invalidMessage, "Send {\"shared\": true} or {\"shared\": false}.")
        }
        do {
            return .json(200, ["story": try await ownership.setStoryShared(id, shared)])
        } catch StoryLibraryError.notFound {
            throw notFound
        } catch {
            throw HTTPError(.storageUnavailable, "The story could not be saved (\(StoreFailure.from(error, record: "story").reason)).")
        }
    }
}
