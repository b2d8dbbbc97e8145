import Foundation
import Locking
@testable import StoryCircleCore

/// Accounts in memory, for the session routes' tests (the stores' own suites cover SQLite and PostgreSQL).
/// Counts its session lookups, so a test sees what the one-second cache saves.
final class MemoryAccountBook: AccountBook, @unchecked Sendable {
    private struct State {
        var schools: [String: School] = [:]
        var accounts: [String: Account] = [:]
        var sessions: [String: SessionRecord] = [:]
        var passkeys: [String: PasskeyRecord] = [:]
        var sessionLookups = 0
    }

    private let state = Locked(State())
    let now: @Sendable () -> ServerTime

    init(now: @escaping @Sendable () -> ServerTime) {
        self.now = now
    }

    var sessionLookups: Int { state.withLock { $0.sessionLookups } }
    var sessionCount: Int { state.withLock { $0.sessions.count } }

    func listSchools() async throws -> [School] { state.withLock { Array($0.schools.values) } }
    func school(_ id: String) async throws -> School? { state.withLock { $0.schools[id] } }
    func createSchool(name: String, id: String) async throws -> School {
        let school = School(id: id, name: name, createdAt: now())
        state.withLock { $0.schools[school.id] = school }
        return school
    }

    func listAccounts(schoolID: String?) async throws -> [Account] {
        state.withLock { $0.accounts.values.filter { schoolID == nil || $0.schoolID == schoolID }.sorted { $0.login < $1.login } }
    }

    func account(id: String) async throws -> Account? { state.withLock { $0.accounts[id] } }
    func disabledAccountIDs() async throws -> Set<String> { state.withLock { Set($0.accounts.values.filter(\.disabled).map(\.id)) } }
    func account(login: String) async throws -> Account? { state.withLock { $0.accounts.values.first { $0.login == login } } }

    func createAccount(_ draft: AccountDraft) async throws -> Account {
        let account = Account(
            id: draft.id, login: draft.login, displayName: draft.displayName, role: draft.role, schoolID: draft.schoolID,
            createdAt: now(), passwordHash: draft.passwordHash
        )
        try state.withLock { state in
            if state.accounts.values.contains(where: { $0.login == draft.login }) { throw AccountBookError.loginTaken(login: draft.login) }
            state.accounts[account.id] = account
        }
        return account
    }

    func updateAccount(_ id: String, _ change: AccountChange, basedOn version: Int) async throws -> Account {
        try state.withLock { state in
            guard var account = state.accounts[id] else { throw AccountBookError.notFound(id: id) }
            guard account.version == version else { throw AccountBookError.conflict(current: account) }
            if let name = change.displayName { account.displayName = name }
            if let role = change.role { account.role = role }
            if let school = change.schoolID { account.schoolID = school }
            if let disabled = change.disabled {
                account.disabled = disabled
                if disabled { state.sessions = state.sessions.filter { $0.value.accountID != id } }
            }
            account.version += 1
            state.accounts[id] = account
            return account
        }
    }

    func setPasswordHash(_ id: String, _ hash: String?) async throws {
        try state.withLock { state in
            guard state.accounts[id] != nil else { throw AccountBookError.notFound(id: id) }
            state.accounts[id]?.passwordHash = hash
            state.sessions = state.sessions.filter { $0.value.accountID != id }
        }
    }

    /// Setup codes are the stores' own (their suites test them); the session routes never use them.
    /// Clears the password (the setup code itself is not kept: no test here uses it).
    func resetAccount(_ id: String, setupCodeHash: String, expiresAt: ServerTime) async throws {
        try state.withLock { state in
            guard state.accounts[id] != nil else { throw AccountBookError.notFound(id: id) }
            state.accounts[id]?.passwordHash = nil
        }
    }
    func setupCodeAccount(codeHash: String, at now: ServerTime) async throws -> Account? { nil }
    func useSetupCode(codeHash: String, passwordHash: String, at now: ServerTime) async throws -> Account? { nil }

    func createSession(_ session: SessionRecord, ifPasswordHash passwordHash: String?) async throws -> Bool {
        state.withLock { state in
            guard let account = state.accounts[session.accountID], !account.disabled, passwordHash == nil || account.passwordHash == passwordHash else { return false }
            state.sessions[session.tokenHash] = session
            return true
        }
    }

    func session(tokenHash: String, at now: ServerTime) async throws -> (session: SessionRecord, account: Account)? {
        state.withLock { state in
            state.sessionLookups += 1
            guard let session = state.sessions[tokenHash], session.expiresAt > now, let account = state.accounts[session.accountID] else { return nil }
            return (session, account)
        }
    }

    func deleteSession(tokenHash: String) async throws { state.withLock { $0.sessions[tokenHash] = nil } }

    func deleteSessions(accountID: String) async throws -> Int {
        state.withLock { state in
            let before = state.sessions.count
            state.sessions = state.sessions.filter { $0.value.accountID != accountID }
            return before - state.sessions.count
        }
    }

    func pruneSessions(before now: ServerTime) async throws -> Int {
        state.withLock { state in
            let before = state.sessions.count
            state.sessions = state.sessions.filter { $0.value.expiresAt > now }
            return before - state.sessions.count
        }
    }

    func addPasskey(_ passkey: PasskeyRecord, limit: Int) async throws { state.withLock { $0.passkeys[passkey.credentialID] = passkey } }
    func passkeys(accountID: String) async throws -> [PasskeyRecord] { state.withLock { $0.passkeys.values.filter { $0.accountID == accountID } } }
    func passkey(credentialID: String) async throws -> (passkey: PasskeyRecord, account: Account)? {
        state.withLock { state in state.passkeys[credentialID].flatMap { key in state.accounts[key.accountID].map { (key, $0) } } }
    }
    func recordPasskeyUse(credentialID: String, signCount: UInt32, at time: ServerTime) async throws -> Bool { true }
    func deletePasskey(credentialID: String, accountID: String) async throws { state.withLock { $0.passkeys[credentialID] = nil } }
}
