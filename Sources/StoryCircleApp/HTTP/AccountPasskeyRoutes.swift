import Foundation
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// An administrator's view of another account's passkeys (docs/protocol.md, "Accounts"): the list (name,
/// made, last used: never a key) for any account they see, and removing one for an account they may change
/// (`AccountReach`: a school administrator, their school's teachers), as when a teacher loses a phone. Read
/// from the account book, so it works on a server that offers no passkeys itself (reached by its address).
struct AccountPasskeyRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.get, "/api/accounts/:id/passkeys", .schoolAdmin) { try await $0.listAccountPasskeys($1) },
            Route(.delete, "/api/accounts/:id/passkeys/:passkey", .schoolAdmin) { try await $0.removeAccountPasskey($1) },
        ]
    }
}

extension APIHandler {
    fileprivate func listAccountPasskeys(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let id = request[parameter: "id"]
        guard let account = try await accountCall({ try await book.account(id: id) }), AccountReach(request.principal).sees(account) else {
            throw AccountRoutes.accountNotFound(id)
        }
        let passkeys = try await accountCall { try await book.passkeys(accountID: account.id) }
        return .json(200, ["passkeys": passkeys.map(PasskeyAnswer.init)])
    }

    fileprivate func removeAccountPasskey(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let account = try await reachable(request[parameter: "id"], AccountReach(request.principal), in: book)
        let passkeyID = request[parameter: "passkey"]
        let notFound = HTTPError(.notFound, "\(account.login) has no passkey \(String(passkeyID.prefix(24))).")
        guard (1...PasskeyRoutes.credentialIDLength).contains(passkeyID.utf8.count) else { throw notFound }
        guard let removed = try await accountCall({ try await book.passkeys(accountID: account.id) }).first(where: { $0.credentialID == passkeyID }) else {
            throw notFound
        }
        // The row's actor is the administrator; its target the account whose passkey it was.
        try await accountCall {
            try await audited(.passkeyRemoved, target: "account:\(account.id)", request, schoolID: account.schoolID, detail: "passkey \(removed.name)") {
                try await book.deletePasskey(credentialID: passkeyID, accountID: account.id)
            }
        }
        return .json(200, ["deleted": true])
    }
}
