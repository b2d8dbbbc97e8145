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

    /// An account's or a school's problems are field problems, as a class's are.
    public typealias Problem = FieldProblem

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
