import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `AccountBook`, held to by every backend alike: schools and logins unique case-folded,
/// accounts changed by version, never without an enabled district administrator, sessions ended with the
/// account's password or its access, expiring, and passkeys unique by credential.
/// One test at a time: each opens databases (fsynced schemas and migrations), and a burst of them at the
/// start of the run would compete with every other suite for the two cores.
@Suite("Accounts, every backend", .serialized)
struct AccountBookSuite {
    static func book(_ store: any RoomLeases) -> any AccountBook {
        store.offers.accounts!
    }

    static func teacher(_ login: String, school: String?, name: String = "A Teacher") -> AccountDraft {
        AccountDraft(login: login, displayName: name, role: .teacher, schoolID: school, passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA")
    }

    static func session(_ secret: String, for account: String, createdAt: Int64 = 1_000, expiresAt: Int64 = 100_000) -> SessionRecord {
        SessionRecord(
            tokenHash: SHA256.hexDigest(secret), accountID: account, csrfToken: "csrf-" + secret, createdAt: ServerTime(milliseconds: createdAt),
            expiresAt: ServerTime(milliseconds: expiresAt), method: "password"
        )
    }

    /// A fresh database and its store, made on a thread of its own: opening one blocks (a schema and its
    /// migrations, fsynced), and a cooperative thread blocked here is one less for the servers that other
    /// suites run in this process at the same time.
    static func fixture(_ backend: Backend) async throws -> StoreFixture {
        try await offPool { try StoreFixture(backend) }
    }

    /// Closes the stores and drops the database in the background (for `defer`, which cannot await).
    static func close(_ fixture: StoreFixture) {
        Thread { fixture.close() }.start()
    }

    /// Rows of `table` about `account`, counted behind the store's back.
    static func rows(_ fixture: StoreFixture, _ table: String, account: String) async throws -> Int {
        precondition(["sessions", "passkeys", "account_setup_codes"].contains(table))
        return try await offPool {
            switch fixture.backend {
            case .sqlite:
                return Int(try SQLiteDatabase(path: fixture.sqlitePath!, readOnly: true).integer("SELECT count(*) FROM \(table) WHERE account_id = ?", .text(account)) ?? 0)
            case .postgres:
                return try fixture.schema!.admin().query("SELECT count(*) FROM \(table) WHERE account_id = $1::text", [.text(account)]).int(0, 0)
            }
        }
    }

    @Test(arguments: Backend.all)
    func schoolsAreCreatedListedAndUniqueByTheirCaseFoldedName(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let north = try await book.createSchool(name: "North School")
        #expect(north.id.hasPrefix("sch_"))
        #expect(north.version == 1)
        let east = try await book.createSchool(name: "East School")
        #expect(try await book.listSchools() == [east, north], "by name")
        #expect(try await book.school(north.id) == north)
        #expect(try await book.school("sch_nothing") == nil)
        for taken in ["north school", "  NORTH   School "] {
            await #expect(throws: AccountBookError.nameTaken(name: taken)) { try await book.createSchool(name: taken) }
        }
        #expect(try await book.listSchools().count == 2)
    }

    @Test(arguments: Backend.all)
    func anAccountIsCreatedReadListedAndChangedByVersion(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let north = try await book.createSchool(name: "North")
        let south = try await book.createSchool(name: "South")
        let ana = try await book.createAccount(Self.teacher("  Ana.Lopez@School.org ", school: north.id, name: "Ana López"))
        #expect(ana.id.hasPrefix("acc_"))
        #expect(ana.login == "ana.lopez@school.org", "stored normalised")
        #expect(ana.displayName == "Ana López")
        #expect(ana.role == .teacher && ana.schoolID == north.id && !ana.disabled && ana.version == 1)
        #expect(ana.passwordHash?.hasPrefix("$argon2id$") == true)
        let ben = try await book.createAccount(Self.teacher("ben", school: south.id))
        let dee = try await book.createAccount(AccountDraft(login: "dee", displayName: "Dee", role: .districtAdmin, schoolID: nil))
        #expect(dee.passwordHash == nil)
        #expect(try await book.account(id: ana.id) == ana)
        #expect(try await book.account(login: "ANA.lopez@school.org") == ana)
        #expect(try await book.account(login: "nobody") == nil)
        #expect(try await book.listAccounts(schoolID: nil).map(\.login) == ["ana.lopez@school.org", "ben", "dee"])
        #expect(try await book.listAccounts(schoolID: north.id) == [ana])

        let moved = try await book.updateAccount(ana.id, AccountChange(displayName: "Ana L.", role: .schoolAdmin, schoolID: .some(south.id)), basedOn: 1)
        #expect(moved.version == 2)
        #expect(moved.displayName == "Ana L." && moved.role == .schoolAdmin && moved.schoolID == south.id)
        #expect(moved.passwordHash == ana.passwordHash, "a change leaves the password alone")
        #expect(try await book.listAccounts(schoolID: south.id).map(\.id) == [ana.id, ben.id])

        // A stale version is refused with what is stored now, and changes nothing.
        await #expect(throws: AccountBookError.conflict(current: moved)) {
            try await book.updateAccount(ana.id, AccountChange(displayName: "Stale"), basedOn: 1)
        }
        await #expect(throws: AccountBookError.schoolNotFound(id: "sch_gone")) {
            try await book.updateAccount(ana.id, AccountChange(schoolID: .some("sch_gone")), basedOn: 2)
        }
        await #expect(throws: AccountBookError.notFound(id: "acc_nobody")) {
            try await book.updateAccount("acc_nobody", AccountChange(displayName: "X"), basedOn: 1)
        }
        #expect(try await book.account(id: ana.id) == moved)

        // Durable: a new store on the same database reads the same.
        await fixture.store.close()
        let reopened = Self.book(try await offPool { try fixture.reopen() })
        #expect(try await reopened.account(id: ana.id) == moved)
        #expect(try await reopened.listSchools() == [north, south])
    }

    @Test(arguments: Backend.all)
    func aLoginIsTakenWhateverItsCaseAndANewAccountNeedsAnExistingSchool(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        await #expect(throws: AccountBookError.loginTaken(login: "ana")) { try await book.createAccount(Self.teacher("ANA", school: school.id)) }
        await #expect(throws: AccountBookError.schoolNotFound(id: "sch_nothing")) { try await book.createAccount(Self.teacher("bo", school: "sch_nothing")) }
        #expect(try await book.listAccounts(schoolID: nil) == [ana], "nothing stored by a refused create")
    }

    @Test(arguments: Backend.all)
    func ofTwoAdministratorsChangingOneVersionExactlyOneWins(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let books = [Self.book(fixture.store), Self.book(try await offPool { try fixture.anotherNode() })]
        let school = try await books[0].createSchool(name: "North")
        let ana = try await books[0].createAccount(Self.teacher("ana", school: school.id))
        let outcomes = await withTaskGroup(of: Result<Account, any Error>.self) { group in
            for editor in 0..<6 {
                group.addTask {
                    await attempt { try await books[editor % 2].updateAccount(ana.id, AccountChange(displayName: "Editor \(editor)"), basedOn: 1) }
                }
            }
            var all: [Result<Account, any Error>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let winners = outcomes.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        let stored = try #require(try await books[0].account(id: ana.id))
        #expect(stored == winners.first && stored.version == 2)
        for case .failure(let error) in outcomes {
            #expect(error as? AccountBookError == .conflict(current: stored))
        }
    }

    @Test(arguments: Backend.all)
    func theLastEnabledDistrictAdministratorCannotBeDisabledOrDemoted(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let dee = try await book.createAccount(AccountDraft(login: "dee", displayName: "Dee", role: .districtAdmin, schoolID: nil))
        await #expect(throws: AccountBookError.lastDistrictAdmin) { try await book.updateAccount(dee.id, AccountChange(disabled: true), basedOn: 1) }
        await #expect(throws: AccountBookError.lastDistrictAdmin) {
            try await book.updateAccount(dee.id, AccountChange(role: .schoolAdmin, schoolID: .some(school.id)), basedOn: 1)
        }
        #expect(try await book.account(id: dee.id) == dee, "nothing changed")
        // Renaming is fine; with a second one, either may go, but not both.
        let renamed = try await book.updateAccount(dee.id, AccountChange(displayName: "Dee D."), basedOn: 1)
        let eve = try await book.createAccount(AccountDraft(login: "eve", displayName: "Eve", role: .districtAdmin, schoolID: nil))
        let disabled = try await book.updateAccount(renamed.id, AccountChange(disabled: true), basedOn: 2)
        #expect(disabled.disabled)
        await #expect(throws: AccountBookError.lastDistrictAdmin) { try await book.updateAccount(eve.id, AccountChange(role: .teacher, schoolID: .some(school.id)), basedOn: 1) }
        // Enabling the first again lets the second go.
        _ = try await book.updateAccount(dee.id, AccountChange(disabled: false), basedOn: 3)
        #expect(try await book.updateAccount(eve.id, AccountChange(role: .teacher, schoolID: .some(school.id)), basedOn: 1).role == .teacher)
    }

    @Test(arguments: Backend.all)
    func twoAdministratorsDemotingTheLastTwoAtOnceLeaveOne(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let books = [Self.book(fixture.store), Self.book(try await offPool { try fixture.anotherNode() })]
        let first = try await books[0].createAccount(AccountDraft(login: "dee", displayName: "Dee", role: .districtAdmin, schoolID: nil))
        let second = try await books[0].createAccount(AccountDraft(login: "eve", displayName: "Eve", role: .districtAdmin, schoolID: nil))
        async let one = attempt { try await books[0].updateAccount(first.id, AccountChange(disabled: true), basedOn: 1) }
        async let two = attempt { try await books[1].updateAccount(second.id, AccountChange(disabled: true), basedOn: 1) }
        let outcomes = await [one, two]
        #expect(outcomes.filter { (try? $0.get()) != nil }.count == 1)
        #expect(outcomes.contains { if case .failure(let error) = $0 { error as? AccountBookError == .lastDistrictAdmin } else { false } })
        let enabled = try await books[0].listAccounts(schoolID: nil).filter { $0.role == .districtAdmin && !$0.disabled }
        #expect(enabled.count == 1)
    }

    @Test(arguments: Backend.all)
    func disablingAnAccountEndsItsSessionsAndItsSetupCodeAtOnce(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        let ben = try await book.createAccount(Self.teacher("ben", school: school.id))
        try await book.createSession(Self.session("ana-laptop", for: ana.id))
        try await book.createSession(Self.session("ana-phone", for: ana.id))
        try await book.createSession(Self.session("ben-laptop", for: ben.id))
        let now = ServerTime(milliseconds: 2_000)
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-laptop"), at: now)?.account == ana)

        #expect(try await book.disabledAccountIDs().isEmpty)
        let disabled = try await book.updateAccount(ana.id, AccountChange(disabled: true), basedOn: 1)
        #expect(disabled.disabled && disabled.version == 2)
        #expect(try await book.disabledAccountIDs() == [ana.id], "what every node reads to stop the rooms' controls")
        #expect(try await Self.rows(fixture, "sessions", account: ana.id) == 0, "deleted, not only hidden")
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-phone"), at: now) == nil)
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ben-laptop"), at: now)?.account == ben, "another account's session stays")
        // A session made for a disabled account (a sign-in racing the disabling) is never found.
        try await book.createSession(Self.session("ana-late", for: ana.id))
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-late"), at: now) == nil)
        // Enabling again does not bring the ended sessions back.
        _ = try await book.updateAccount(ana.id, AccountChange(disabled: false), basedOn: 2)
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-laptop"), at: now) == nil)
        #expect(try await book.disabledAccountIDs().isEmpty)
    }

    @Test(arguments: Backend.all)
    func aSessionIsStoredOnlyWhileTheAccountIsEnabledAndItsPasswordIsTheOneChecked(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        let checked = try #require(ana.passwordHash)
        let now = ServerTime(milliseconds: 2_000)
        #expect(try await book.createSession(Self.session("ana-laptop", for: ana.id), ifPasswordHash: checked))
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-laptop"), at: now) != nil)

        // A reset commits between the password's check and the session's insert: no session.
        try await book.resetAccount(ana.id, setupCodeHash: SHA256.hexDigest("code"), expiresAt: ServerTime(milliseconds: 90_000))
        #expect(try await book.createSession(Self.session("ana-phone", for: ana.id), ifPasswordHash: checked) == false)
        try await book.setPasswordHash(ana.id, "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3")
        #expect(try await book.createSession(Self.session("ana-phone", for: ana.id), ifPasswordHash: checked) == false)
        #expect(try await Self.rows(fixture, "sessions", account: ana.id) == 0)
        #expect(try await book.createSession(Self.session("ana-phone", for: ana.id), ifPasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3"))

        // Disabled: refused with or without a password (a passkey's or a link's sign-in).
        _ = try await book.updateAccount(ana.id, AccountChange(disabled: true), basedOn: 1)
        #expect(try await book.createSession(Self.session("ana-key", for: ana.id), ifPasswordHash: nil) == false)
        #expect(try await book.createSession(Self.session("ana-pw", for: ana.id), ifPasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3") == false)
        #expect(try await Self.rows(fixture, "sessions", account: ana.id) == 0)
        _ = try await book.updateAccount(ana.id, AccountChange(disabled: false), basedOn: 2)
        #expect(try await book.createSession(Self.session("ana-key", for: ana.id), ifPasswordHash: nil))
        await #expect(throws: AccountBookError.notFound(id: "acc_nobody")) {
            try await book.createSession(Self.session("x", for: "acc_nobody"), ifPasswordHash: nil)
        }
    }

    @Test(arguments: Backend.all)
    func settingAPasswordEndsEverySessionOfTheAccount(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        try await book.createSession(Self.session("ana-laptop", for: ana.id))
        try await book.setPasswordHash(ana.id, "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3")
        #expect(try await book.account(id: ana.id)?.passwordHash == "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3")
        #expect(try await book.account(id: ana.id)?.version == 1, "not an edit of the account: no administrator's save is made stale")
        #expect(try await Self.rows(fixture, "sessions", account: ana.id) == 0)
        try await book.setPasswordHash(ana.id, nil)
        #expect(try await book.account(id: ana.id)?.passwordHash == nil)
        await #expect(throws: AccountBookError.notFound(id: "acc_nobody")) { try await book.setPasswordHash("acc_nobody", "x") }
    }

    @Test(arguments: Backend.all)
    func aSessionExpiresIsEndedAloneOrWithAllOfItsAccountAndIsPruned(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        let record = Self.session("ana-laptop", for: ana.id, createdAt: 1_000, expiresAt: 10_000)
        try await book.createSession(record)
        let found = try #require(try await book.session(tokenHash: record.tokenHash, at: ServerTime(milliseconds: 9_999)))
        #expect(found.session == record)
        #expect(found.account == ana)
        #expect(try await book.session(tokenHash: record.tokenHash, at: ServerTime(milliseconds: 10_000)) == nil, "expired at its expiry")
        #expect(try await book.session(tokenHash: SHA256.hexDigest("guess"), at: ServerTime(milliseconds: 2_000)) == nil)
        await #expect(throws: AccountBookError.notFound(id: "acc_nobody")) { try await book.createSession(Self.session("x", for: "acc_nobody")) }

        try await book.createSession(Self.session("ana-phone", for: ana.id, expiresAt: 50_000))
        try await book.createSession(Self.session("ana-tablet", for: ana.id, expiresAt: 50_000))
        #expect(try await book.pruneSessions(before: ServerTime(milliseconds: 20_000)) == 1)
        #expect(try await Self.rows(fixture, "sessions", account: ana.id) == 2)
        try await book.deleteSession(tokenHash: SHA256.hexDigest("ana-phone"))
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-phone"), at: ServerTime(milliseconds: 20_000)) == nil)
        #expect(try await book.session(tokenHash: SHA256.hexDigest("ana-tablet"), at: ServerTime(milliseconds: 20_000)) != nil)
        #expect(try await book.deleteSessions(accountID: ana.id) == 1)
        #expect(try await book.deleteSessions(accountID: ana.id) == 0)
    }

    @Test(arguments: Backend.all)
    func aSetupCodeSetsThePasswordOnceBeforeItExpires(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        try await book.createSession(Self.session("ana-laptop", for: ana.id))
        let (first, second) = (SHA256.hexDigest("code-1"), SHA256.hexDigest("code-2"))
        try await book.resetAccount(ana.id, setupCodeHash: first, expiresAt: ServerTime(milliseconds: 90_000))
        #expect(try await book.account(id: ana.id)?.passwordHash == nil, "the old password stops working")
        #expect(try await Self.rows(fixture, "sessions", account: ana.id) == 0)
        #expect(try await book.setupCodeAccount(codeHash: first, at: ServerTime(milliseconds: 1_000))?.id == ana.id)
        // A second reset replaces the first link.
        try await book.resetAccount(ana.id, setupCodeHash: second, expiresAt: ServerTime(milliseconds: 90_000))
        #expect(try await book.setupCodeAccount(codeHash: first, at: ServerTime(milliseconds: 1_000)) == nil)
        #expect(try await book.useSetupCode(codeHash: first, passwordHash: "$argon2id$old", at: ServerTime(milliseconds: 1_000)) == nil)
        #expect(try await book.setupCodeAccount(codeHash: second, at: ServerTime(milliseconds: 90_000)) == nil, "expired at its expiry")
        #expect(try await book.useSetupCode(codeHash: second, passwordHash: "$argon2id$late", at: ServerTime(milliseconds: 90_000)) == nil)
        #expect(try await book.account(id: ana.id)?.passwordHash == nil)

        let used = try await book.useSetupCode(codeHash: second, passwordHash: "$argon2id$new", at: ServerTime(milliseconds: 2_000))
        #expect(used?.id == ana.id && used?.passwordHash == "$argon2id$new")
        #expect(try await book.useSetupCode(codeHash: second, passwordHash: "$argon2id$again", at: ServerTime(milliseconds: 2_000)) == nil, "used once")
        #expect(try await book.account(id: ana.id)?.passwordHash == "$argon2id$new")
        #expect(try await Self.rows(fixture, "account_setup_codes", account: ana.id) == 0)

        // A disabled account's link is gone with its sessions; a reset of nobody is refused.
        try await book.resetAccount(ana.id, setupCodeHash: first, expiresAt: ServerTime(milliseconds: 90_000))
        _ = try await book.updateAccount(ana.id, AccountChange(disabled: true), basedOn: 1)
        #expect(try await book.setupCodeAccount(codeHash: first, at: ServerTime(milliseconds: 1_000)) == nil)
        #expect(try await Self.rows(fixture, "account_setup_codes", account: ana.id) == 0)
        await #expect(throws: AccountBookError.notFound(id: "acc_nobody")) {
            try await book.resetAccount("acc_nobody", setupCodeHash: second, expiresAt: ServerTime(milliseconds: 90_000))
        }
    }

    @Test(arguments: Backend.all)
    func aPasskeyIsUniqueByItsCredentialAndBelongsToOneAccount(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        let ben = try await book.createAccount(Self.teacher("ben", school: school.id))
        let key = PasskeyRecord(
            credentialID: "Y3JlZC0x", accountID: ana.id, publicKey: [0xA5, 0x01, 0x02, 0x00, 0xFF], algorithm: -7, signCount: 3,
            name: "school laptop", createdAt: ServerTime(milliseconds: 1_000)
        )
        try await book.addPasskey(key, limit: 20)
        #expect(try await book.passkeys(accountID: ana.id) == [key])
        #expect(try await book.passkeys(accountID: ben.id) == [])
        let found = try #require(try await book.passkey(credentialID: "Y3JlZC0x"))
        #expect(found.passkey == key && found.account == ana)
        #expect(try await book.passkey(credentialID: "other") == nil)

        var stolen = key
        stolen.accountID = ben.id
        await #expect(throws: AccountBookError.credentialTaken) { try await book.addPasskey(stolen, limit: 20) }
        await #expect(throws: AccountBookError.credentialTaken) { try await book.addPasskey(key, limit: 20) }
        #expect(try await Self.rows(fixture, "passkeys", account: ben.id) == 0)

        #expect(try await book.recordPasskeyUse(credentialID: key.credentialID, signCount: 4_000_000_000, at: ServerTime(milliseconds: 5_000)))
        let used = try #require(try await book.passkey(credentialID: key.credentialID)).passkey
        #expect(used.signCount == 4_000_000_000 && used.lastUsedAt == ServerTime(milliseconds: 5_000))
        // A counter that does not go up (another sign-in recorded it first), or a passkey not there: refused.
        #expect(try await !book.recordPasskeyUse(credentialID: key.credentialID, signCount: 4_000_000_000, at: ServerTime(milliseconds: 6_000)))
        #expect(try await !book.recordPasskeyUse(credentialID: key.credentialID, signCount: 7, at: ServerTime(milliseconds: 6_000)))
        #expect(try await !book.recordPasskeyUse(credentialID: "other", signCount: 9, at: ServerTime(milliseconds: 6_000)))
        #expect(try #require(try await book.passkey(credentialID: key.credentialID)).passkey.lastUsedAt == ServerTime(milliseconds: 5_000))

        // Only its own account removes it.
        try await book.deletePasskey(credentialID: key.credentialID, accountID: ben.id)
        #expect(try await book.passkey(credentialID: key.credentialID) != nil)
        try await book.deletePasskey(credentialID: key.credentialID, accountID: ana.id)
        #expect(try await book.passkey(credentialID: key.credentialID) == nil)
    }

    /// An authenticator that keeps no counter (0 every time, as synced passkeys) signs in again and again;
    /// the limit per account is counted in the store; a reset removes the account's passkeys with its
    /// password (whoever had the account may have added one).
    @Test(arguments: Backend.all)
    func passkeysWithoutACounterTheLimitAndAReset(_ backend: Backend) async throws {
        let fixture = try await Self.fixture(backend)
        defer { Self.close(fixture) }
        let book = Self.book(fixture.store)
        let school = try await book.createSchool(name: "North")
        let ana = try await book.createAccount(Self.teacher("ana", school: school.id))
        func key(_ number: Int) -> PasskeyRecord {
            PasskeyRecord(credentialID: "key-\(number)", accountID: ana.id, publicKey: [0xA5], algorithm: -7, signCount: 0, name: "key \(number)",
                          createdAt: ServerTime(milliseconds: Int64(number)))
        }
        for number in 0..<3 { try await book.addPasskey(key(number), limit: 3) }
        await #expect(throws: AccountBookError.tooManyPasskeys) { try await book.addPasskey(key(3), limit: 3) }
        #expect(try await book.passkeys(accountID: ana.id).count == 3)
        #expect(try await book.recordPasskeyUse(credentialID: "key-0", signCount: 0, at: ServerTime(milliseconds: 10)))
        #expect(try await book.recordPasskeyUse(credentialID: "key-0", signCount: 0, at: ServerTime(milliseconds: 11)))

        try await book.resetAccount(ana.id, setupCodeHash: String(repeating: "c", count: 64), expiresAt: ServerTime(milliseconds: 90_000))
        #expect(try await book.passkeys(accountID: ana.id).isEmpty)
        #expect(try await Self.rows(fixture, "passkeys", account: ana.id) == 0)
    }
}

/// What `body` returned or threw, as a value (for comparing concurrent outcomes).
private func attempt<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

/// Runs `body` on a new thread and returns what it returns: blocking work kept off Swift's cooperative pool.
private func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
