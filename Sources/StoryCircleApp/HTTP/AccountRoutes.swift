import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer
import Sodium

/// The adults' accounts and their schools (`docs/protocol.md`, "Accounts"): `GET|POST /api/schools` for the
/// district administrator; `GET|POST /api/accounts`, `GET|PATCH /api/accounts/:id`, `POST
/// /api/accounts/:id/reset` (a one-time setup link) for administrators, a school administrator within the
/// teachers of their school (`AccountReach`); and `POST /api/accounts/setup`, where the setup link's code is
/// the caller's only authority. Every body is checked (`AccountRules`) before anything is read, hashed or
/// stored; a refused request changes nothing. No answer ever carries a password's hash.
struct AccountRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.get, "/api/schools", .admin) { api, _ in try await api.listSchools() },
            Route(.post, "/api/schools", .admin) { try await $0.createSchool($1) },
            Route(.get, "/api/accounts", .schoolAdmin) { try await $0.listAccounts($1) },
            Route(.post, "/api/accounts", .schoolAdmin) { try await $0.createAccount($1) },
            Route(.get, "/api/accounts/:id", .schoolAdmin) { try await $0.showAccount($1) },
            Route(.patch, "/api/accounts/:id", .schoolAdmin) { try await $0.changeAccount($1) },
            Route(.post, "/api/accounts/:id/reset", .schoolAdmin) { try await $0.resetAccount($1) },
            Route(.post, "/api/accounts/setup", .none) { try await $0.setUpAccount($1) },
        ]
    }

    /// How long a setup link works.
    static let setupLinkLifetime: Int64 = 24 * 60 * 60 * 1_000
    /// The largest body any of these routes reads (a login, a name, a password: a few hundred bytes).
    static let maximumBody = 4_096

    static let noAccounts = HTTPError(.notFound, "This server keeps no accounts (it runs without a database).")
    static let setupLinkRefusal = HTTPError(
        .setupLinkInvalid, "This setup link does not work any more: it was used, it is more than a day old, or a newer one was made. Ask an administrator for a new one."
    )

    static let outOfReach = HTTPError(
        .wrongRole, "A school administrator makes and changes the teacher accounts of their own school; a district administrator does the rest."
    )

    static func accountNotFound(_ id: String) -> HTTPError {
        HTTPError(.accountNotFound, "There is no account \(id.prefix(64)).", params: ["id": String(id.prefix(64))])
    }

    static func schoolNotFound(_ id: String) -> HTTPError {
        HTTPError(.schoolNotFound, "There is no school \(id.prefix(64)) (GET /api/schools lists them).", params: ["id": String(id.prefix(64))])
    }

    static func invalid(_ problems: [FieldProblem]) -> HTTPError {
        // The first problem's parameters at the top too, as every other refusal has them (`min` of a short password).
        return HTTPError(.invalidAccount, problems.map(\.message).joined(separator: " "), params: problems.first?.params, extra: ["problems": .array(problems.map(\.jsonValue))])
    }

    static func storeRefusal(_ error: any Error) -> HTTPError {
        switch error {
        case let error as HTTPError:
            return error
        case AccountBookError.notFound(let id):
            return accountNotFound(id)
        case AccountBookError.schoolNotFound(let id):
            return schoolNotFound(id)
        case AccountBookError.loginTaken(let login):
            return HTTPError(.loginTaken, "The login \(login) is taken; choose another.", params: ["login": login])
        case AccountBookError.nameTaken(let name):
            return HTTPError(.schoolNameTaken, "There is a school called \(name) already.", params: ["name": name])
        case AccountBookError.conflict(let current):
            return HTTPError(
                RoomError(.conflict, "The account was changed (now version \(current.version)) since the version this change was based on; nothing was overwritten.", params: ["version": String(current.version)]),
                extra: ["current": APIAccount(current).jsonValue]
            )
        case AccountBookError.lastDistrictAdmin:
            return HTTPError(.lastDistrictAdmin, "This is the last enabled district administrator: make another one first.")
        default:
            return HTTPError(.storageUnavailable, "The accounts cannot be read or stored just now (\(StoreFailure.from(error, record: "account").reason)).")
        }
    }
}

extension APIHandler {
    func accountBook() throws -> any AccountBook {
        guard let accounts else { throw AccountRoutes.noAccounts }
        return accounts
    }

    /// A store call, its refusals in the API's words.
    func accountCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw AccountRoutes.storeRefusal(error)
        }
    }

    /// The body as a JSON object of at most `AccountRoutes.maximumBody` bytes.
    private func accountBody(_ request: RouteRequest, shape: String) throws -> [String: JSONValue] {
        guard request.body.count <= AccountRoutes.maximumBody else { throw HTTPError(.payloadTooLarge, "The body is larger than \(AccountRoutes.maximumBody) bytes.") }
        do {
            return try decodeObject(request.body)
        } catch let error as HTTPError {
            throw HTTPError(error.error.code, "\(error.error.message) Send \(shape).")
        }
    }

    private static func string(_ body: [String: JSONValue], _ key: String, shape: String) throws -> String? {
        switch body[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw HTTPError(.invalidMessage, "\(key) must be a string. Send \(shape).")
        }
    }

    // MARK: - Schools

    fileprivate func listSchools() async throws -> HTTPResponse {
        let book = try accountBook()
        let schools = try await accountCall { try await book.listSchools() }
        return .json(200, ["schools": schools.map(SchoolResponse.init)])
    }

    fileprivate func createSchool(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let shape = "{\"name\": \"North Primary\"}"
        let body = try accountBody(request, shape: shape)
        guard let raw = try Self.string(body, "name", shape: shape) else { throw HTTPError(.invalidMessage, "A school needs a name. Send \(shape).") }
        let name: String
        switch AccountRules.schoolName(raw) {
        case .success(let checked): name = checked
        case .failure(let problem): throw AccountRoutes.invalid([problem])
        }
        // Recorded first, under the id it will have: no school is made without its row, and a store that
        // then refuses it leaves a second row saying it was not done.
        let id = AccountLogins.makeSchool()
        let school = try await audited(.schoolCreated, target: "school:\(id)", request, schoolID: id) {
            try await accountCall { try await book.createSchool(name: name, id: id) }
        }
        return .json(201, SchoolResponse(school))
    }

    // MARK: - Accounts

    fileprivate func listAccounts(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        var school = request.query["school"].flatMap { $0.isEmpty ? nil : $0 }
        if case .school(let managed) = AccountReach(request.principal) {
            guard school == nil || school == managed else { throw AccountRoutes.outOfReach }
            school = managed
        }
        let accounts = try await accountCall {
            if let school, try await book.school(school) == nil { throw AccountRoutes.schoolNotFound(school) }
            return try await book.listAccounts(schoolID: school)
        }
        return .json(200, ["accounts": accounts.map { APIAccount($0) }])
    }

    fileprivate func showAccount(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let id = request[parameter: "id"]
        guard let account = try await accountCall({ try await book.account(id: id) }), AccountReach(request.principal).sees(account) else {
            throw AccountRoutes.accountNotFound(id)
        }
        return .json(200, APIAccount(account))
    }

    fileprivate func createAccount(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let shape = "{\"login\": \"ana\", \"displayName\": \"Ana López\", \"role\": \"teacher\", \"schoolID\": \"sch_…\", \"password\": \"…\"} (password optional)"
        let body = try accountBody(request, shape: shape)
        var problems: [FieldProblem] = []
        var login = "", displayName = "", role = AccountRole.teacher
        func take<T>(_ result: Result<T, FieldProblem>, _ into: (T) -> Void) {
            switch result {
            case .success(let value): into(value)
            case .failure(let problem): problems.append(problem)
            }
        }
        take(AccountRules.login(try Self.string(body, "login", shape: shape) ?? "")) { login = $0 }
        take(AccountRules.displayName(try Self.string(body, "displayName", shape: shape) ?? "")) { displayName = $0 }
        take(AccountRules.role(try Self.string(body, "role", shape: shape) ?? "")) { role = $0 }
        var school = try Self.string(body, "schoolID", shape: shape)
        // A school administrator makes teachers of their own school (which a body may leave out).
        if case .school(let managed) = AccountReach(request.principal) {
            guard role == .teacher, school == nil || school == managed else { throw AccountRoutes.outOfReach }
            school = managed
        }
        if problems.allSatisfy({ $0.path != "role" }), let problem = AccountRules.placement(role: role, schoolID: school) { problems.append(problem) }
        let password = try Self.string(body, "password", shape: shape)
        if let password, let problem = AccountRules.password(password) { problems.append(problem) }
        guard problems.isEmpty else { throw AccountRoutes.invalid(problems) }

        // Refused before the work of a hash: a taken login, a school that is not there.
        try await accountCall {
            if try await book.account(login: login) != nil { throw AccountBookError.loginTaken(login: login) }
            if let school, try await book.school(school) == nil { throw AccountBookError.schoolNotFound(id: school) }
        }
        let hash = try await password.asyncMap { try await hashPassword($0) }
        // Recorded first, as a school is (`createSchool`).
        let draft = AccountDraft(login: login, displayName: displayName, role: role, schoolID: school?.isEmpty == true ? nil : school, passwordHash: hash)
        let created = try await audited(.accountCreated, target: "account:\(draft.id)", request, schoolID: draft.schoolID, detail: role.rawValue + (hash == nil ? ", setup link" : "")) {
            try await accountCall { try await book.createAccount(draft) }
        }
        // No password: the person sets one through a setup link, as after a reset.
        let link = hash == nil ? try await issueSetupLink(for: created.id, in: book) : nil
        return .json(201, APIAccount(created, setupLink: link))
    }

    fileprivate func changeAccount(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let id = request[parameter: "id"]
        let reach = AccountReach(request.principal)
        // Whose account it is decides before the body is read: another school's is as unknown as none.
        try await reachable(id, reach, in: book)
        let shape = "{\"version\": 3, \"displayName\": …, \"role\": …, \"schoolID\": …, \"disabled\": true} (only version is needed)"
        let body = try accountBody(request, shape: shape)
        guard case .number(let number)? = body["version"], let version = Int(exactly: number) else {
            throw HTTPError(.invalidMessage, "A change of an account names the version it was based on. Send \(shape).")
        }
        let known: Set<String> = ["version", "displayName", "role", "schoolID", "disabled"]
        if let unknown = body.keys.sorted().first(where: { !known.contains($0) }) {
            throw HTTPError(.invalidMessage, "\(unknown) cannot be changed here (a password is set through a setup link: POST /api/accounts/:id/reset). Send \(shape).")
        }
        var change = AccountChange()
        var problems: [FieldProblem] = []
        if let name = try Self.string(body, "displayName", shape: shape) {
            switch AccountRules.displayName(name) {
            case .success(let checked): change.displayName = checked
            case .failure(let problem): problems.append(problem)
            }
        }
        if let role = try Self.string(body, "role", shape: shape) {
            switch AccountRules.role(role) {
            case .success(let checked): change.role = checked
            case .failure(let problem): problems.append(problem)
            }
        }
        switch body["schoolID"] {
        case nil: break
        case .null?: change.schoolID = .some(nil)
        case .string(let school)?: change.schoolID = .some(school.isEmpty ? nil : school)
        default: throw HTTPError(.invalidMessage, "schoolID must be a string or null. Send \(shape).")
        }
        switch body["disabled"] {
        case nil, .null?: break
        case .bool(let disabled)?: change.disabled = disabled
        default: throw HTTPError(.invalidMessage, "disabled is true or false. Send \(shape).")
        }
        guard problems.isEmpty else { throw AccountRoutes.invalid(problems) }
        // A school administrator's teacher stays a teacher of their school.
        if case .school(let managed) = reach {
            guard change.role.map({ $0 == .teacher }) ?? true, change.schoolID.map({ $0 == managed }) ?? true else { throw AccountRoutes.outOfReach }
        }
        let (before, updated) = try await accountCall {
            guard let current = try await book.account(id: id), reach.changes(current) else { throw AccountBookError.notFound(id: id) }
            // The account as it would be: a teacher or school administrator keeps a school.
            if let problem = AccountRules.placement(role: change.role ?? current.role, schoolID: change.schoolID ?? current.schoolID) {
                throw AccountRoutes.invalid([problem])
            }
            return (current, try await book.updateAccount(id, change, basedOn: version))
        }
        sessions?.forget(accountID: id)
        // This node stops (or restarts) the account's rooms' controls at once; the others on their next read.
        if before.disabled != updated.disabled { disabledOwners?.mark(updated.id, disabled: updated.disabled) }
        try await auditChange(from: before, to: updated, request)
        return .json(200, APIAccount(updated))
    }

    fileprivate func resetAccount(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let id = request[parameter: "id"]
        let account = try await reachable(id, AccountReach(request.principal), in: book)
        guard !account.disabled else {
            throw HTTPError(.invalidMessage, "Account \(account.login) is disabled: enable it first (PATCH {\"disabled\": false}).")
        }
        let link = try await audited(.passwordReset, target: "account:\(id)", request, schoolID: account.schoolID) { try await issueSetupLink(for: id, in: book) }
        sessions?.forget(accountID: id)
        return .json(200, ["setupLink": link, "expiresIn": "24h"])
    }

    /// The account `id`, when `reach` may change it: 404 when it may not see it (another school's), 403 when
    /// it sees it but may not change it (its own school's administrator).
    @discardableResult
    func reachable(_ id: String, _ reach: AccountReach, in book: any AccountBook) async throws -> Account {
        let found = try await accountCall { try await book.account(id: id) }
        guard let account = found, reach.sees(account) else { throw AccountRoutes.accountNotFound(id) }
        guard reach.changes(account) else { throw AccountRoutes.outOfReach }
        return account
    }

    /// One row for each kind of change an administrator made (the update succeeded on `before`'s version,
    /// so the difference is exactly theirs), under the school the account is in now.
    private func auditChange(from before: Account, to after: Account, _ request: RouteRequest) async throws {
        let target = "account:\(after.id)"
        if before.disabled != after.disabled {
            try await audit(after.disabled ? .accountDisabled : .accountEnabled, target: target, request, schoolID: after.schoolID)
        }
        if before.role != after.role {
            try await audit(.roleChanged, target: target, request, schoolID: after.schoolID, detail: "\(before.role.rawValue) -> \(after.role.rawValue)")
        }
        if before.displayName != after.displayName || before.schoolID != after.schoolID {
            let moved = before.schoolID != after.schoolID ? "school \(before.schoolID ?? "none") -> \(after.schoolID ?? "none")" : "display name"
            try await audit(.accountChanged, target: target, request, schoolID: after.schoolID, detail: moved)
        }
    }

    /// The password's hash, made off the cooperative pool (`PasswordHasher`).
    private func hashPassword(_ password: String) async throws -> String {
        guard let passwords else { throw HTTPError(.internalError, "Passwords cannot be hashed on this server.") }
        do {
            return try await passwords.hash(password)
        } catch {
            throw HTTPError(.serverShuttingDown, "The server is stopping; try again in a moment.")
        }
    }

    /// A new one-time setup link for the account: the store keeps only its code's SHA-256; the link is shown
    /// once, to the administrator, and the page takes the code from the fragment (never sent in a request
    /// line, so never in a proxy's log).
    private func issueSetupLink(for id: String, in book: any AccountBook) async throws -> String {
        let code = Tokens.generate()
        let expires = ServerTime(milliseconds: clock.now().milliseconds + AccountRoutes.setupLinkLifetime)
        try await accountCall { try await book.resetAccount(id, setupCodeHash: Sodium.sha256Hex(Array(code.utf8)), expiresAt: expires) }
        return "\(publicURL)/account-setup#code=\(code)"
    }

    // MARK: - Setup

    fileprivate func setUpAccount(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try accountBook()
        let shape = "{\"code\": \"…\", \"password\": \"…\"} (the code from the setup link)"
        let body = try accountBody(request, shape: shape)
        guard let code = try Self.string(body, "code", shape: shape), (1...128).contains(code.utf8.count),
              let password = try Self.string(body, "password", shape: shape)
        else { throw HTTPError(.invalidMessage, "Send \(shape).") }
        if let problem = AccountRules.password(password) { throw AccountRoutes.invalid([problem]) }
        let codeHash = Sodium.sha256Hex(Array(code.utf8))
        // The code first: no hash is made for a link that does not work.
        guard try await accountCall({ try await book.setupCodeAccount(codeHash: codeHash, at: clock.now()) }) != nil else {
            throw AccountRoutes.setupLinkRefusal
        }
        let hash = try await hashPassword(password)
        guard let account = try await accountCall({ try await book.useSetupCode(codeHash: codeHash, passwordHash: hash, at: clock.now()) }) else {
            throw AccountRoutes.setupLinkRefusal
        }
        sessions?.forget(accountID: account.id)
        // The code was the only authority: the row names the account that set its password.
        try await audit(.passwordSet, target: "account:\(account.id)", actor: AuditActor(.account(account)), address: request.http.peer, schoolID: account.schoolID, detail: "setup link")
        return .json(200, ["account": APIAccount(account)])
    }
}

/// A school as the API answers it.
struct SchoolResponse: Encodable {
    var id: String
    var name: String
    var version: Int
    var createdAt: String

    init(_ school: School) {
        id = school.id
        name = school.name
        version = school.version
        createdAt = ClassReport.iso8601(school.createdAt)
    }
}

extension APIAccount {
    var jsonValue: JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: HTTPResponse.jsonEncoder.encode(self))) ?? .null
    }
}
