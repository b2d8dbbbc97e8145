/// One problem with a field of a body the API was sent (an account, a school, a class): the field's path
/// (`login`, `name`, `children[3].name`), a code a page words from its catalog, the values those words need,
/// and an English sentence for the CLI, API clients and logs. `AccountRules` and `ClassRules` report theirs
/// as these; every refusal lists them under `problems` (`jsonValue`'s shape).
public struct FieldProblem: Sendable, Equatable, Error {
    public var path: String
    /// Accounts and schools: `login_invalid`, `name_empty`, `name_too_long`, `name_invalid`, `role_unknown`,
    /// `school_required`, `password_too_short`, `password_too_long`, `password_invalid`. Classes: `name_empty`,
    /// `name_invalid`, `name_too_long`, `duplicate_name`, `avatar_unknown`, `class_too_large`, `class_name_taken`,
    /// `member_not_found`.
    public var code: String
    public var params: [String: String]

    public init(path: String, code: String, params: [String: String] = [:]) {
        self.path = path
        self.code = code
        self.params = params
    }

    /// An English sentence for logs and API clients (the pages word the code).
    public var message: String {
        switch code {
        case "name_empty": "\(path) is empty."
        case "name_invalid": "\(path) has characters that cannot be shown; use letters, numbers or emoji."
        case "name_too_long": "\(path) is \(params["length"] ?? "?") characters long; at most \(params["max"] ?? "?")."
        case "login_invalid": "\(path) must be 1 to 128 letters, digits or . - _ @ + (no spaces)."
        case "role_unknown": "\(path) must be one of \(AccountRole.allCases.map(\.rawValue).joined(separator: ", "))."
        case "school_required": "A \(params["role"] ?? "teacher") belongs to a school: \(path) names it (GET /api/schools lists them)."
        case "password_too_short": "\(path) needs at least \(AccountRules.passwordLength.lowerBound) characters; a sentence is easy to remember."
        case "password_too_long": "\(path) may have at most \(AccountRules.passwordLength.upperBound) characters."
        case "password_invalid": "\(path) has control characters, which cannot be typed again reliably."
        case "duplicate_name": "\(path) looks the same as \(params["other"] ?? "another name")."
        case "avatar_unknown": "\(path) is not one of the pictures (\(ClassRules.avatars.joined(separator: ", "))) nor emoji: with one emoji."
        case "class_too_large": "A class has at most \(params["max"] ?? "?") children; this one has \(params["count"] ?? "?")."
        case "class_name_taken": "Another class is already called \(params["name"] ?? "that")."
        case "member_not_found": "The class has no member \(params["id"] ?? "")."
        default: "\(path) is not valid (\(code))."
        }
    }

    /// `{"path", "code", "params", "message"}`, as a refusal's `problems` lists it.
    public var jsonValue: JSONValue {
        .object(["path": .string(path), "code": .string(code), "params": .object(params.mapValues(JSONValue.string)), "message": .string(message)])
    }
}
