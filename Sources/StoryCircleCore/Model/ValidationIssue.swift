/// One problem found in a story file: where it is (a path such as `quiz.questions[2].answer`), what kind
/// of problem (`code`, with the values its words need in `params`) and an English sentence a teacher can
/// act on (what the CLI prints).
public struct ValidationIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        /// The file cannot be used until this is fixed.
        case error
        /// The file works, but something in it is probably not what the author meant.
        case warning
    }

    public var severity: Severity
    public var path: String
    public var code: ValidationCode
    /// The values the catalogs' words for `code` name (`{limit}`, `{option}`, …), as text.
    public var params: [String: String]
    public var message: String

    public init(_ severity: Severity, at path: String, _ code: ValidationCode, _ params: [String: String], _ message: String) {
        self.severity = severity
        self.path = path
        self.code = code
        self.params = params
        self.message = message
    }

    /// A problem whose words need no values.
    public init(_ severity: Severity, at path: String, _ code: ValidationCode, _ message: String) {
        self.init(severity, at: path, code, [:], message)
    }

    /// `path: message`, the form the CLI prints.
    public var description: String {
        path.isEmpty ? message : "\(path): \(message)"
    }
}

/// The outcome of checking a document: the value when there are no errors, and every issue found.
public struct Validated<Value: Sendable>: Sendable {
    public var value: Value?
    public var issues: [ValidationIssue]

    public init(value: Value?, issues: [ValidationIssue]) {
        self.value = value
        self.issues = issues
    }

    public var errors: [ValidationIssue] { issues.filter { $0.severity == .error } }
    public var warnings: [ValidationIssue] { issues.filter { $0.severity == .warning } }
}
