/// What an account or a school may be, checked before anything is stored or hashed: every refusal is a
/// `Problem` with a code a page words, the field it is about, and an English sentence for the CLI and logs.
public enum AccountRules {
    public static let displayNameLength = 1...80
    public static let schoolNameLength = 1...80
    /// Characters (as a person counts them). Twelve: OWASP's minimum without composition rules; 128: the
    /// cost of a hash grows with what is hashed, and nobody types more.
    public static let passwordLength = 12...128
    /// Bytes, whatever the characters: a "character" built of many combining marks is not a way round the limit.
    public static let passwordMaximumBytes = 1_024

    public struct Problem: Sendable, Equatable, Error {
        /// The field: `login`, `displayName`, `role`, `schoolID`, `password`, `name`.
        public var path: String
        /// `login_invalid`, `name_empty`, `name_too_long`, `name_invalid`, `role_unknown`, `school_required`,
        /// `password_too_short`, `password_too_long`, `password_invalid`.
        public var code: String
        public var params: [String: String]

        public init(path: String, code: String, params: [String: String] = [:]) {
            self.path = path
            self.code = code
            self.params = params
        }

        public var message: String {
            switch code {
            case "login_invalid": "\(path) must be 1 to 128 letters, digits or . - _ @ + (no spaces)."
            case "name_empty": "\(path) is empty."
            case "name_too_long": "\(path) is \(params["length"] ?? "?") characters long; at most \(params["max"] ?? "?")."
            case "name_invalid": "\(path) has characters that cannot be shown."
            case "role_unknown": "\(path) must be one of \(AccountRole.allCases.map(\.rawValue).joined(separator: ", "))."
            case "school_required": "A \(params["role"] ?? "teacher") belongs to a school: \(path) names it (GET /api/schools lists them)."
            case "password_too_short": "\(path) needs at least \(AccountRules.passwordLength.lowerBound) characters; a sentence is easy to remember."
            case "password_too_long": "\(path) may have at most \(AccountRules.passwordLength.upperBound) characters."
            case "password_invalid": "\(path) has control characters, which cannot be typed again reliably."
            default: "\(path) is not valid (\(code))."
            }
        }
    }

    /// The login as it is stored (`AccountLogins.normalised`).
    public static func login(_ text: String) -> Result<String, Problem> {
        guard let login = AccountLogins.normalised(text) else { return .failure(Problem(path: "login", code: "login_invalid")) }
        return .success(login)
    }

    /// The display name, trimmed, with runs of white space made one space.
    public static func displayName(_ text: String) -> Result<String, Problem> {
        name(text, path: "displayName", length: displayNameLength)
    }

    /// The school's name, trimmed, with runs of white space made one space.
    public static func schoolName(_ text: String) -> Result<String, Problem> {
        name(text, path: "name", length: schoolNameLength)
    }

    public static func role(_ text: String) -> Result<AccountRole, Problem> {
        guard let role = AccountRole(rawValue: text) else { return .failure(Problem(path: "role", code: "role_unknown")) }
        return .success(role)
    }

    /// A teacher and a school administrator belong to a school; a district administrator may or may not.
    public static func placement(role: AccountRole, schoolID: String?) -> Problem? {
        guard role != .districtAdmin, schoolID?.isEmpty ?? true else { return nil }
        return Problem(path: "schoolID", code: "school_required", params: ["role": role.rawValue])
    }

    /// Checked as typed (never trimmed or folded: the person types the same again), before it is hashed.
    public static func password(_ text: String) -> Problem? {
        let length = text.count
        if text.utf8.count > passwordMaximumBytes || length > passwordLength.upperBound {
            return Problem(path: "password", code: "password_too_long", params: ["max": String(passwordLength.upperBound)])
        }
        if length < passwordLength.lowerBound {
            return Problem(path: "password", code: "password_too_short", params: ["min": String(passwordLength.lowerBound)])
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return Problem(path: "password", code: "password_invalid")
        }
        return nil
    }

    private static func name(_ text: String, path: String, length: ClosedRange<Int>) -> Result<String, Problem> {
        let name = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if name.isEmpty { return .failure(Problem(path: path, code: "name_empty")) }
        if name.count > length.upperBound {
            return .failure(Problem(path: path, code: "name_too_long", params: ["length": String(name.count), "max": String(length.upperBound)]))
        }
        let unshowable: Set<Unicode.GeneralCategory> = [.control, .format, .privateUse, .surrogate, .unassigned]
        if name.unicodeScalars.contains(where: { unshowable.contains($0.properties.generalCategory) && $0 != "\u{200D}" }) {
            return .failure(Problem(path: path, code: "name_invalid"))
        }
        return .success(name)
    }
}
