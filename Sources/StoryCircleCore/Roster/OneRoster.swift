/// A OneRoster 1.2 CSV bundle (1EdTech's binding; what ClassLink, Clever and most student information
/// systems export), read into what StoryCircle uses of it: the schools (`orgs.csv`), the people
/// (`users.csv`, with their roles from `roles.csv` or, in older exports, the `role` column), the classes,
/// the enrolments and the academic sessions. Columns StoryCircle does not use are read past, never kept.
public struct OneRoster: Sendable, Equatable {
    /// How the manifest says a file is sent: all of it (`bulk`), only what changed (`delta`), or not at all.
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        case bulk, delta, absent
    }

    /// A record's `status`: blank in a bulk file (everything in it is current); `active` or
    /// `tobedeleted` in a delta.
    public enum Status: String, Sendable, Equatable {
        case active, tobedeleted
    }

    public struct Org: Sendable, Equatable {
        public var sourcedID: String
        public var status: Status
        public var name: String
        /// `school`, `district`, `department`, `local`, `state` or `national`; only schools become schools here.
        public var type: String
        public var line: Int
    }

    public struct User: Sendable, Equatable {
        public var sourcedID: String
        public var status: Status
        public var enabled: Bool
        public var username: String
        public var givenName: String
        public var familyName: String
        public var email: String
        /// From the `role` column of an older export, or `roles.csv`.
        public var roles: [String]
        /// The orgs the user belongs to (`orgSourcedIds`, or the orgs of their rows in `roles.csv`).
        public var orgSourcedIDs: [String]
        public var line: Int
    }

    public struct Class: Sendable, Equatable {
        public var sourcedID: String
        public var status: Status
        public var title: String
        public var schoolSourcedID: String
        public var termSourcedIDs: [String]
        public var line: Int
    }

    public struct Enrollment: Sendable, Equatable {
        public var sourcedID: String
        public var status: Status
        public var classSourcedID: String
        public var userSourcedID: String
        /// `student`, `teacher`, `administrator` or `proctor`.
        public var role: String
        /// The class's primary teacher (`primary` = true).
        public var primary: Bool
        public var line: Int
    }

    public struct AcademicSession: Sendable, Equatable {
        public var sourcedID: String
        public var status: Status
        public var title: String
        public var type: String
        public var line: Int
    }

    /// Each file's mode from the manifest (`file.orgs` …); a file the manifest does not name is absent.
    public var modes: [String: Mode]
    public var orgs: [Org]
    public var users: [User]
    public var classes: [Class]
    public var enrollments: [Enrollment]
    public var academicSessions: [AcademicSession]

    public init(
        modes: [String: Mode], orgs: [Org] = [], users: [User] = [], classes: [Class] = [], enrollments: [Enrollment] = [],
        academicSessions: [AcademicSession] = []
    ) {
        self.modes = modes
        self.orgs = orgs
        self.users = users
        self.classes = classes
        self.enrollments = enrollments
        self.academicSessions = academicSessions
    }

    public func mode(_ file: String) -> Mode { modes[file] ?? .absent }

    /// The files an import reads, by the manifest's name for them (`file.<name>`).
    public static let files = ["orgs", "users", "roles", "classes", "enrollments", "academicSessions"]
    public static let enrollmentRoles: Set<String> = ["student", "teacher", "administrator", "proctor"]
    public static let orgTypes: Set<String> = ["school", "district", "department", "local", "state", "national"]
    public static let userRoles: Set<String> = [
        "administrator", "aide", "guardian", "parent", "proctor", "relative", "student", "teacher", "districtAdministrator", "principal",
        "siteAdministrator", "systemAdministrator",
    ]
}

/// One thing wrong with a roster, where a person fixes it: the file, the line (1 is the header; 0 when
/// the problem is the file as a whole) and the column.
public struct RosterProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var field: String
    /// `manifest_missing`, `file_missing`, `mode_invalid`, `version_unsupported`, `csv_<reason>`
    /// (`CSVReader.Problem.reason`), `column_missing`, `duplicate_column`, `value_missing`,
    /// `value_invalid`, `value_too_long`, `duplicate_id`, `unknown_reference`, `not_your_school`,
    /// `login_invalid`, `login_taken`, `no_teacher`, `no_school`, and `ClassRules.Problem` codes for a class
    /// StoryCircle cannot keep (`name_invalid`, `duplicate_name`, `class_too_large`, `class_name_taken`).
    public var code: String
    public var params: [String: String]

    public init(file: String, line: Int, field: String, code: String, params: [String: String] = [:]) {
        self.file = file
        self.line = line
        self.field = field
        self.code = code
        self.params = params
    }

    /// An English sentence for the CLI and logs (the page words the code).
    public var message: String {
        let value = params["value"].map { "\"\($0)\"" } ?? "the value"
        return switch code {
        case "manifest_missing": "The roster has no manifest.csv."
        case "file_missing": "The manifest lists this file, but the roster does not have it."
        case "mode_invalid": "\(value) is not bulk, delta or absent."
        case "version_unsupported": "This is OneRoster \(params["value"] ?? "?"); StoryCircle reads 1.1 and 1.2."
        case "column_missing": "The file has no \(field) column."
        case "duplicate_column": "The column \(field) appears twice."
        case "value_missing": "\(field) is empty."
        case "value_invalid": "\(value) is not one of \(params["allowed"] ?? "the allowed values")."
        case "value_too_long": "\(field) is longer than \(params["max"] ?? "?") characters."
        case "duplicate_id": "\(value) is also the sourcedId of line \(params["other"] ?? "?")."
        case "unknown_reference": "No \(params["kind"] ?? "record") has the sourcedId \(value)."
        case "not_your_school": "\(value) is not your school; a school administrator imports only their school."
        case "login_invalid": "\(value) cannot be a login (letters, digits and .-_@+, at most 128)."
        case "login_taken": "Another account outside this school already signs in as \(value)."
        case "no_teacher": "The class has no teacher enrolled."
        case "no_school": "The teacher belongs to no school of the roster."
        case "name_invalid": "\(value) has characters that cannot be shown."
        case "name_empty": "The name is empty."
        case "name_too_long": "\(value) is longer than \(params["max"] ?? "?") characters."
        case "duplicate_name": "\(value) looks the same as another child's name in this class."
        case "class_too_large": "A class has at most \(params["max"] ?? "?") children; this one has \(params["count"] ?? "?")."
        case "class_name_taken": "The teacher already has a class called \(value)."
        case "too_many_problems": "More problems follow; fix these first."
        default:
            if code.hasPrefix("csv_") { "The file is not CSV as RFC 4180 writes it (\(code.dropFirst(4)))." } else { "\(field): \(code)." }
        }
    }

    /// `users.csv line 4, givenName: givenName is empty.`
    public var description: String {
        let place = line > 0 ? "\(file) line \(line)" : file
        return field.isEmpty ? "\(place): \(message)" : "\(place), \(field): \(message)"
    }
}

/// Every problem of a roster that cannot be imported as it is; nothing is imported while there is one.
public struct RosterRefusal: Error, Sendable, Equatable {
    public var problems: [RosterProblem]

    public init(problems: [RosterProblem]) { self.problems = problems }
}
