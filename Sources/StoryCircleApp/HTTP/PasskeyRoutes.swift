import Foundation
import Sodium
import StoryCircleCore
import StoryCircleServer
import TransportCore
import WebAuthn

/// Passkeys (docs/protocol.md, "Passkeys"): a signed-in teacher registers one (options, then the
/// browser's answer), lists and removes theirs; anyone may sign in with one, which starts the same session
/// cookie as a password sign-in. Verification is `WebAuthn.RelyingParty`'s (OpenSSL, libcbor); this file
/// only carries JSON in and out. Every challenge is used up by the first answer that names it, before any
/// store is read.
struct PasskeyRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.post, "/api/passkeys/options", .signedIn) { try await $0.passkeyCreationOptions($1) },
            Route(.post, "/api/passkeys", .signedIn, bodyLimit: Self.bodyLimit) { try await $0.registerPasskey($1) },
            Route(.get, "/api/passkeys", .signedIn) { try await $0.listPasskeys($1) },
            Route(.delete, "/api/passkeys/:id", .signedIn) { try await $0.deletePasskey($1) },
            Route(.post, "/api/session/passkey/options", .none) { try await $0.passkeyRequestOptions($1) },
            Route(.post, "/api/session/passkey", .none, bodyLimit: Self.bodyLimit) { try await $0.signInWithPasskey($1) },
        ]
    }

    /// The longest credential id WebAuthn allows (1,023 bytes), in base64url.
    static let credentialIDLength = 1_364

    /// An attestation object at its limit, in base64url, with the rest of the JSON.
    static let bodyLimit = 32 * 1_024

    static let unavailable = HTTPError(.notFound, "Passkeys need this server to be reached by a name (its certificate's), not an address.")
}

/// A stored passkey as its owner sees it (never its key).
struct PasskeyAnswer: Encodable {
    var id: String
    var name: String
    var algorithm: Int
    var createdAt: Int64
    var lastUsedAt: Int64?

    init(_ record: PasskeyRecord) {
        id = record.credentialID
        name = record.name
        algorithm = record.algorithm
        createdAt = record.createdAt.milliseconds
        lastUsedAt = record.lastUsedAt?.milliseconds
    }
}

/// What the browser's `PublicKeyCredential` answers, binary fields in base64url (web-static/js/passkeys.js).
private struct CredentialBody: Decodable {
    struct Response: Decodable {
        var clientDataJSON: String
        var attestationObject: String?
        var authenticatorData: String?
        var signature: String?
        var userHandle: String?
    }

    var id: String
    var rawId: String?
    var type: String?
    var response: Response
}

extension APIHandler {
    private func passkeyDesk() throws -> (PasskeyDesk, SessionDesk) {
        guard let passkeys, let sessions else { throw PasskeyRoutes.unavailable }
        return (passkeys, sessions)
    }

    private static func storeRefusal(_ error: any Error, _ record: String) -> HTTPError {
        HTTPError(.storageUnavailable, "Passkeys cannot be read or kept in storage just now (\(StoreFailure.from(error, record: record).reason)).")
    }

    private static func bytes(_ text: String?, _ field: String) throws -> [UInt8] {
        guard let text, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw HTTPError(.invalidMessage, "The credential's \(field) is missing or not base64url.")
        }
        return bytes
    }

    private static func credential<Body: Decodable>(_ request: RouteRequest, as type: Body.Type) throws -> Body {
        guard request.body.count <= PasskeyRoutes.bodyLimit, let body = try? JSONDecoder().decode(type, from: Data(request.body)) else {
            throw HTTPError(.invalidMessage, "Send the credential the browser made, as web-static/js/passkeys.js encodes it.")
        }
        return body
    }

    private static func base(_ rp: RelyingParty, challenge: [UInt8]) -> [String: JSONValue] {
        ["challenge": .string(Base64URL.encode(challenge)), "timeout": .number(Double(ChallengeBook.defaultLifetime)), "userVerification": .string("required")]
    }

    // MARK: - Registering

    fileprivate func passkeyCreationOptions(_ request: RouteRequest) async throws -> HTTPResponse {
        let (desk, sessions) = try passkeyDesk()
        guard let account = request.principal?.account, let session = request.session else { throw Self.signInNeeded }
        try await confirmRecentSignIn(account, session: session, request: request, sessions: sessions)
        let existing: [PasskeyRecord]
        do {
            existing = try await desk.book.passkeys(accountID: account.id)
        } catch {
            throw Self.storeRefusal(error, "passkey")
        }
        guard existing.count < PasskeyDesk.maxPerAccount else { throw Self.tooManyPasskeys }
        let rp = desk.relyingParty
        let challenge = desk.issue(for: .registration(accountID: account.id), from: request.http.peer)
        var options = Self.base(rp, challenge: challenge)
        options["rp"] = .object(["id": .string(rp.id), "name": .string("StoryCircle")])
        options["user"] = .object([
            "id": .string(Base64URL.encode(Array(account.id.utf8))), "name": .string(account.login), "displayName": .string(account.displayName),
        ])
        options["pubKeyCredParams"] = .array(COSEAlgorithm.allCases.map { .object(["type": .string("public-key"), "alg": .number(Double($0.rawValue))]) })
        options["excludeCredentials"] = .array(existing.map { .object(["type": .string("public-key"), "id": .string($0.credentialID)]) })
        options["authenticatorSelection"] = .object([
            "residentKey": .string("required"), "requireResidentKey": .bool(true), "userVerification": .string("required"),
        ])
        options["attestation"] = .string("none")
        return .json(200, ["publicKey": JSONValue.object(options)])
    }

    fileprivate func registerPasskey(_ request: RouteRequest) async throws -> HTTPResponse {
        struct Body: Decodable {
            var name: String?
            var credential: CredentialBody
        }
        let (desk, _) = try passkeyDesk()
        guard let account = request.principal?.account else { throw Self.signInNeeded }
        let body = try Self.credential(request, as: Body.self)
        let name = (body.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard PasskeyDesk.nameLength.contains(name.count) else {
            throw HTTPError(.invalidMessage, "Give the passkey a name of 1 to \(PasskeyDesk.nameLength.upperBound) characters.")
        }
        let clientDataJSON = try Self.bytes(body.credential.response.clientDataJSON, "clientDataJSON")
        let attestationObject = try Self.bytes(body.credential.response.attestationObject, "attestationObject")
        let verified: RelyingParty.NewCredential
        do {
            let challenge = try desk.take(answeredIn: clientDataJSON, for: .registration(accountID: account.id))
            verified = try desk.relyingParty.verifyRegistration(clientDataJSON: clientDataJSON, attestationObject: attestationObject, challenge: challenge)
        } catch {
            throw HTTPError(.invalidMessage, "The passkey was not registered: \(error.description).", extra: ["reason": .string(error.code)])
        }
        let record = PasskeyRecord(
            credentialID: Base64URL.encode(verified.credentialID), accountID: account.id, publicKey: verified.publicKey,
            algorithm: verified.algorithm.rawValue, signCount: verified.signCount, name: name, createdAt: desk.clock.now())
        do {
            try await audited(.passkeyAdded, target: "account:\(account.id)", request, schoolID: account.schoolID, detail: "passkey \(name)") {
                try await desk.book.addPasskey(record, limit: PasskeyDesk.maxPerAccount)
            }
        } catch let error as HTTPError {
            throw error
        } catch AccountBookError.tooManyPasskeys {
            throw Self.tooManyPasskeys
        } catch AccountBookError.credentialTaken {
            throw HTTPError(.invalidMessage, "This passkey is registered already.", extra: ["reason": .string("credential_taken")])
        } catch {
            throw Self.storeRefusal(error, "passkey")
        }
        return .json(201, ["passkey": PasskeyAnswer(record)])
    }

    private static let tooManyPasskeys = HTTPError(.invalidMessage, "This account has \(PasskeyDesk.maxPerAccount) passkeys already; remove one first.")

    fileprivate func listPasskeys(_ request: RouteRequest) async throws -> HTTPResponse {
        let (desk, _) = try passkeyDesk()
        guard let account = request.principal?.account else { throw Self.signInNeeded }
        do {
            return .json(200, ["passkeys": try await desk.book.passkeys(accountID: account.id).map(PasskeyAnswer.init)])
        } catch {
            throw Self.storeRefusal(error, "passkey")
        }
    }

    fileprivate func deletePasskey(_ request: RouteRequest) async throws -> HTTPResponse {
        let (desk, _) = try passkeyDesk()
        guard let account = request.principal?.account else { throw Self.signInNeeded }
        let id = request[parameter: "id"]
        let notFound = HTTPError(.notFound, "You have no passkey \(String(id.prefix(24))).")
        guard (1...PasskeyRoutes.credentialIDLength).contains(id.utf8.count) else { throw notFound }
        do {
            // Only the account's own: another account's passkey is as missing as one that never was.
            guard let removed = try await desk.book.passkeys(accountID: account.id).first(where: { $0.credentialID == id }) else { throw notFound }
            try await audited(.passkeyRemoved, target: "account:\(account.id)", request, schoolID: account.schoolID, detail: "passkey \(removed.name)") {
                try await desk.book.deletePasskey(credentialID: id, accountID: account.id)
            }
        } catch let error as HTTPError {
            throw error
        } catch {
            throw Self.storeRefusal(error, "passkey")
        }
        return .json(200, ["deleted": true])
    }

    // MARK: - Signing in

    fileprivate func passkeyRequestOptions(_ request: RouteRequest) async throws -> HTTPResponse {
        let (desk, _) = try passkeyDesk()
        // Any of this site's passkeys the authenticator holds (discoverable credentials): no login is asked
        // for, so none is named here and nothing tells a caller which accounts exist.
        var options = Self.base(desk.relyingParty, challenge: desk.issue(for: .authentication, from: request.http.peer))
        options["rpId"] = .string(desk.relyingParty.id)
        options["allowCredentials"] = .array([])
        return .json(200, ["publicKey": JSONValue.object(options)])
    }

    fileprivate func signInWithPasskey(_ request: RouteRequest) async throws -> HTTPResponse {
        struct Body: Decodable { var credential: CredentialBody }
        let (desk, sessions) = try passkeyDesk()
        // A sign-in from another site's page would sign this browser into someone else's account.
        guard comesFromThisServer(request.http) else { throw Self.csrfRefusal }
        let body = try Self.credential(request, as: Body.self)
        let response = body.credential.response
        let clientDataJSON = try Self.bytes(response.clientDataJSON, "clientDataJSON")
        let authenticatorData = try Self.bytes(response.authenticatorData, "authenticatorData")
        let signature = try Self.bytes(response.signature, "signature")
        let credentialID = body.credential.rawId ?? body.credential.id
        guard credentialID == body.credential.id, (1...PasskeyRoutes.credentialIDLength).contains(credentialID.utf8.count) else {
            throw HTTPError(.invalidMessage, "The credential's id and rawId differ, or the id is longer than WebAuthn allows.")
        }
        // The password's throttle, with the credential's digest in place of the login (no login holds a
        // colon; a digest keeps every key small): a failed try spends the address's allowance, so a flood of
        // made-up answers is answered 429 and cannot fill the audit trail.
        let ticket = try Self.throttled(sessions.begin(login: "passkey:" + Sodium.sha256Hex(Array(credentialID.utf8)), address: request.http.peer))
        let challenge: [UInt8]
        do {
            challenge = try desk.take(answeredIn: clientDataJSON, for: .authentication)
        } catch {
            try await auditFailedSignIn(nil, request, detail: "passkey, \(error.code)")
            throw Self.passkeySignInFailure(error)
        }
        let found: (passkey: PasskeyRecord, account: Account)?
        do {
            found = try await desk.book.passkey(credentialID: credentialID)
        } catch {
            throw Self.storeRefusal(error, "passkey")
        }
        guard let (passkey, account) = found,
              response.userHandle.map({ Base64URL.decode($0) == Array(account.id.utf8) }) ?? true else {
            try await auditFailedSignIn(nil, request, detail: "passkey, unknown_passkey")
            throw HTTPError(.signInFailed, "This passkey is not registered on this server.", extra: ["reason": .string("unknown_passkey")])
        }
        let verified: RelyingParty.Assertion
        do {
            verified = try desk.relyingParty.verifyAssertion(
                clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature, challenge: challenge,
                publicKey: passkey.publicKey, storedSignCount: passkey.signCount)
        } catch {
            try await auditFailedSignIn(account, request, detail: "passkey, \(error.code)")
            throw Self.passkeySignInFailure(error)
        }
        guard !account.disabled else {
            try await auditFailedSignIn(account, request, detail: "passkey, account disabled")
            throw Self.signInFailure
        }
        let recorded: Bool
        do {
            recorded = try await desk.book.recordPasskeyUse(credentialID: credentialID, signCount: verified.signCount, at: desk.clock.now())
        } catch {
            throw Self.storeRefusal(error, "passkey")
        }
        // Removed since it was read, or another sign-in with it got there first: nobody is signed in.
        guard recorded else {
            try await auditFailedSignIn(account, request, detail: "passkey, passkey_changed")
            throw HTTPError(.signInFailed, "This passkey was removed, or used for another sign-in at the same moment.", extra: ["reason": .string("passkey_changed")])
        }
        sessions.succeeded(ticket)
        try await audit(.signIn, target: "account:\(account.id)", actor: AuditActor(.account(account)), address: request.http.peer, schoolID: account.schoolID, detail: "passkey")
        return try await startSession(account, method: "passkey", sessions: sessions, request: request.http)
    }

    /// `sign_in_failed`, with WebAuthn's reason (a passkey for another site, a counter gone back, …).
    private static func passkeySignInFailure(_ error: WebAuthnError) -> HTTPError {
        HTTPError(.signInFailed, "The passkey did not sign you in: \(error.description).", extra: ["reason": .string(error.code)])
    }
}
