import Foundation
import StoryCircleCore

/// A school as the API answers it (`docs/protocol.md`, "Accounts"); an account is `APIAccount`, the server's own shape.
struct APISchool: Decodable {
    var id: String
    var name: String
}

/// What the account and school commands share: finding an account by login or id, a school by name or id.
struct AccountClient {
    var client: ClientOptions

    func schools() async throws -> [APISchool] {
        struct Listed: Decodable { var schools: [APISchool] }
        return try JSONDecoder().decode(Listed.self, from: try await client.api.send("GET", "/api/schools", token: try client.adminToken()).body).schools
    }

    func school(_ nameOrID: String) async throws -> APISchool {
        let schools = try await schools()
        let wanted = nameOrID.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        guard let school = schools.first(where: { $0.id == nameOrID }) ?? schools.first(where: { $0.name.lowercased() == wanted }) else {
            throw CommandFailure("there is no school called \(nameOrID) ('storycircle school list' lists them).")
        }
        return school
    }

    func accounts(school: String? = nil) async throws -> [APIAccount] {
        struct Listed: Decodable { var accounts: [APIAccount] }
        let path = school.map { "/api/accounts?school=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? "/api/accounts"
        return try JSONDecoder().decode(Listed.self, from: try await client.api.send("GET", path, token: try client.adminToken()).body).accounts
    }

    func account(_ loginOrID: String) async throws -> APIAccount {
        let login = AccountLogins.normalised(loginOrID)
        guard let account = try await accounts().first(where: { $0.id == loginOrID || $0.login == login }) else {
            throw CommandFailure("there is no account \(loginOrID) ('storycircle account list' lists them).")
        }
        return account
    }

    /// A refusal in the server's words, each problem on its own line.
    static func check(_ response: APIClient.Response) throws {
        guard !(200..<300).contains(response.status) else { return }
        struct Refusal: Decodable {
            struct Problem: Decodable { var message: String }
            struct Body: Decodable { var problems: [Problem]? }
            var error: Body
        }
        if let problems = (try? JSONDecoder().decode(Refusal.self, from: response.body))?.error.problems, problems.count > 1 {
            for problem in problems { FileHandle.standardError.write(Data("\(problem.message)\n".utf8)) }
        }
        throw CommandFailure(APIClient.refusal(response))
    }
}

/// `account add LOGIN [--name NAME] [--role ROLE] [--school SCHOOL] [--password-stdin]`.
struct AccountAddCommand: ParsableCommand {
    static let name = CommandSpec.Option(long: "name", valueName: "name", help: "The name pages show (1 to 80 characters; by default the login).")
    static let role = CommandSpec.Option(long: "role", valueName: "role", help: "teacher, school_admin or district_admin.", defaultValue: "teacher")
    static let school = CommandSpec.Option(long: "school", valueName: "school", help: "The school's name or id (a teacher and a school administrator need one).")
    static let passwordStdin = CommandSpec.Option(long: "password-stdin", valueName: nil, help: "Read the password (12 to 128 characters) from standard input.")

    var login: String
    var displayName: String?
    var role: AccountRole
    var school: String?
    var readsPassword: Bool
    var json: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        login = arguments.positional[0]
        displayName = arguments.value(of: Self.name)
        role = try arguments.value(of: Self.role, expecting: "use teacher, school_admin or district_admin", AccountRole.init(rawValue:)) ?? .teacher
        school = arguments.value(of: Self.school)
        readsPassword = arguments.isSet(Self.passwordStdin)
        json = arguments.isSet(OutputOptions.json)
        client = ClientOptions(arguments)
        if role != .districtAdmin, school == nil {
            throw UsageError("A \(role.rawValue) belongs to a school: pass --school NAME ('storycircle school list' lists them).")
        }
    }

    /// Standard input without its last line break (what `echo` or a password manager adds).
    static func readPassword() -> String {
        // On bytes: "\r\n" is one Character, so a String's hasSuffix("\n") misses a CRLF ending.
        var bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    func run() async throws -> Int32 {
        let accounts = AccountClient(client: client)
        var body: [String: JSONValue] = ["login": .string(login), "displayName": .string(displayName ?? login), "role": .string(role.rawValue)]
        if let school { body["schoolID"] = .string(try await accounts.school(school).id) }
        if readsPassword { body["password"] = .string(Self.readPassword()) }
        let response = try await client.api.exchange("POST", "/api/accounts", token: try client.adminToken(), json: try JSONEncoder().encode(JSONValue.object(body)))
        try AccountClient.check(response)
        if json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        let created = try JSONDecoder().decode(APIAccount.self, from: response.body)
        Output.line("Account \(created.login) added (\(created.role)): \(created.id)")
        if let link = created.setupLink {
            Output.line("They set their password with this link (it works once, for 24 hours):")
            Output.line(link)
        }
        return ExitCode.success
    }
}

/// `account list [--school SCHOOL]`.
struct AccountListCommand: ParsableCommand {
    static let school = CommandSpec.Option(long: "school", valueName: "school", help: "Only this school's accounts (its name or id).")

    var school: String?
    var json: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        school = arguments.value(of: Self.school)
        json = arguments.isSet(OutputOptions.json)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let accounts = AccountClient(client: client)
        let schools = try await accounts.schools()
        let schoolID = try await school.asyncMap { try await accounts.school($0).id }
        let listed = try await accounts.accounts(school: schoolID)
        if json {
            let data = try JSONSerialization.data(withJSONObject: ["accounts": listed.map { account -> [String: Any] in
                ["id": account.id, "login": account.login, "displayName": account.displayName, "role": account.role,
                 "schoolID": account.schoolID as Any? ?? NSNull(), "disabled": account.disabled, "hasPassword": account.hasPassword, "version": account.version]
            }], options: [.sortedKeys])
            Output.line(String(decoding: data, as: UTF8.self))
            return ExitCode.success
        }
        if listed.isEmpty {
            Output.line("There are no accounts yet. Add one with 'storycircle account add LOGIN --school NAME'.")
            return ExitCode.success
        }
        let names = Dictionary(schools.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        Output.line(Table.render(header: ["LOGIN", "ROLE", "SCHOOL", "STATE", "NAME"], rows: listed.map { account in
            let state = account.disabled ? "disabled" : account.hasPassword ? "active" : "no password"
            return [account.login, account.role, account.schoolID.map { names[$0] ?? $0 } ?? "-", state, account.displayName]
        }))
        return ExitCode.success
    }
}

/// `account disable LOGIN`, `account enable LOGIN`: one type, told which.
struct AccountEnableCommand: RunnableCommand {
    var account: String
    var enable: Bool
    var client: ClientOptions

    init(enable: Bool, _ arguments: ParsedArguments) {
        account = arguments.positional[0]
        self.enable = enable
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let found = try await AccountClient(client: client).account(account)
        let body: JSONValue = .object(["version": .number(Double(found.version)), "disabled": .bool(!enable)])
        let response = try await client.api.exchange("PATCH", "/api/accounts/\(found.id)", token: try client.adminToken(), json: try JSONEncoder().encode(body))
        try AccountClient.check(response)
        Output.line(enable ? "Account \(found.login) enabled: they can sign in again." : "Account \(found.login) disabled: it is signed out everywhere and cannot sign in.")
        return ExitCode.success
    }
}

/// `account reset LOGIN`.
struct AccountResetCommand: ParsableCommand {
    var account: String
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        account = arguments.positional[0]
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let found = try await AccountClient(client: client).account(account)
        let response = try await client.api.exchange("POST", "/api/accounts/\(found.id)/reset", token: try client.adminToken())
        try AccountClient.check(response)
        struct Reset: Decodable { var setupLink: String }
        let reset = try JSONDecoder().decode(Reset.self, from: response.body)
        Output.line("The password of \(found.login) no longer works and they are signed out everywhere.")
        Output.line("They set a new one with this link (it works once, for 24 hours):")
        Output.line(reset.setupLink)
        return ExitCode.success
    }
}

/// `school add NAME`.
struct SchoolAddCommand: ParsableCommand {
    var name: String
    var json: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        name = arguments.positional[0]
        json = arguments.isSet(OutputOptions.json)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let body: JSONValue = .object(["name": .string(name)])
        let response = try await client.api.exchange("POST", "/api/schools", token: try client.adminToken(), json: try JSONEncoder().encode(body))
        try AccountClient.check(response)
        if json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        let school = try JSONDecoder().decode(APISchool.self, from: response.body)
        Output.line("School \(school.name) added: \(school.id)")
        return ExitCode.success
    }
}

/// `school list`.
struct SchoolListCommand: ParsableCommand {
    var json: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        json = arguments.isSet(OutputOptions.json)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        if json {
            Output.write(String(decoding: try await client.api.send("GET", "/api/schools", token: try client.adminToken()).body, as: UTF8.self))
            return ExitCode.success
        }
        let schools = try await AccountClient(client: client).schools()
        if schools.isEmpty {
            Output.line("There are no schools yet. Add one with 'storycircle school add NAME'.")
            return ExitCode.success
        }
        Output.line(Table.render(header: ["ID", "NAME"], rows: schools.map { [$0.id, $0.name] }))
        return ExitCode.success
    }
}
