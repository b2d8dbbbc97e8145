/// One problem found in a story file: where it is (a path such as `quiz.questions[2].answer`) and a
/// sentence a teacher can act on.
public struct ValidationIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        /// The file cannot be used until this is fixed.
        case error
        /// The file works, but something in it is probably not what the author meant.
        case warning
    }

    public var severity: Severity
    public var path: String
    public var message: String

    public init(_ severity: Severity, at path: String, _ message: String) {
        self.severity = severity
        self.path = path
        self.message = message
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
