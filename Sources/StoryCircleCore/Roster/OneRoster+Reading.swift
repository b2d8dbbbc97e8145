/// Reading a bundle: the manifest first, then each file it names, every row checked on its own, so one
/// import reports every bad row at once instead of one per attempt.
extension OneRoster {
    /// A file of the bundle, as read from a folder or an upload.
    public typealias Files = [String: [UInt8]]

    /// Problems past this many are one `too_many_problems`: a file in the wrong format is one mistake, not
    /// five thousand.
    public static let maximumProblems = 200
    /// What a sourcedId, a name or a title may be: longer is not a person's name.
    public static let maximumValueLength = 256

    /// The roster in `files` (by name: `manifest.csv`, `users.csv` …), or every problem found in it.
    public static func read(_ files: Files, limits: CSVReader.Limits = CSVReader.Limits()) -> Result<OneRoster, RosterRefusal> {
        var reader = Reader(files: files, limits: limits)
        let roster = reader.read()
        guard reader.problems.isEmpty, let roster else { return .failure(RosterRefusal(problems: reader.capped)) }
        return .success(roster)
    }

    /// One file's rows with the header's columns looked up by name (trimmed, case-insensitive: exports
    /// differ in `sourcedId`/`sourcedID`).
    struct Table {
        var file: String
        var columns: [String: Int]
        var records: [CSVRecord]

        func value(_ record: CSVRecord, _ column: String) -> String? {
            guard let index = columns[column.lowercased()] else { return nil }
            return index < record.fields.count ? trimmed(record.fields[index]) : ""
        }

        func has(_ column: String) -> Bool { columns[column.lowercased()] != nil }
    }

    struct Reader {
        var files: Files
        var limits: CSVReader.Limits
        var problems: [RosterProblem] = []

        var capped: [RosterProblem] {
            guard problems.count > OneRoster.maximumProblems else { return problems }
            return Array(problems.prefix(OneRoster.maximumProblems)) + [RosterProblem(file: "", line: 0, field: "", code: "too_many_problems")]
        }

        mutating func problem(_ file: String, _ line: Int, _ field: String, _ code: String, _ params: [String: String] = [:]) {
            problems.append(RosterProblem(file: file, line: line, field: field, code: code, params: params))
        }

        mutating func read() -> OneRoster? {
            guard let manifest = table("manifest.csv", required: ["propertyName", "value"]) else {
                if files["manifest.csv"] == nil { problem("manifest.csv", 0, "", "manifest_missing") }
                return nil
            }
            var modes: [String: Mode] = [:]
            for record in manifest.records {
                let name = manifest.value(record, "propertyName") ?? ""
                let value = manifest.value(record, "value") ?? ""
                if name == "oneroster.version", !["1.1", "1.2"].contains(value) {
                    problem("manifest.csv", record.line, "value", "version_unsupported", ["value": String(value.prefix(16))])
                }
                guard name.hasPrefix("file.") else { continue }
                guard let mode = Mode(rawValue: value.lowercased()) else {
                    problem("manifest.csv", record.line, "value", "mode_invalid", ["value": String(value.prefix(16))])
                    continue
                }
                modes[String(name.dropFirst("file.".count))] = mode
            }
            var roster = OneRoster(modes: modes)
            let roles = rolesByUser(mode: roster.mode("roles"))
            roster.orgs = rows("orgs", roster, required: ["name", "type"]) { table, record, row in
                let type = row.required("type") ?? ""
                row.oneOf("type", type, OneRoster.orgTypes)
                return Org(sourcedID: row.id, status: row.status, name: row.required("name") ?? "", type: type, line: record.line)
            }
            let oldUsers = roster.mode("roles") == .absent
            roster.users = rows("users", roster, required: ["enabledUser", "username", "givenName", "familyName"] + (oldUsers ? ["role", "orgSourcedIds"] : [])) { table, record, row in
                let enabled = row.required("enabledUser") ?? "true"
                row.oneOf("enabledUser", enabled, ["true", "false"])
                var userRoles = roles[row.id]?.roles ?? []
                var orgs = roles[row.id]?.orgs ?? []
                if oldUsers {
                    if let role = row.required("role") { userRoles = [role] }
                    orgs = list(table.value(record, "orgSourcedIds"))
                }
                for role in userRoles { row.oneOf("role", role, OneRoster.userRoles) }
                return User(
                    sourcedID: row.id, status: row.status, enabled: enabled.lowercased() != "false", username: row.optional("username"),
                    givenName: row.optional("preferredGivenName").isEmpty ? row.required("givenName") ?? "" : row.optional("preferredGivenName"),
                    familyName: row.required("familyName") ?? "", email: row.optional("email"), roles: userRoles, orgSourcedIDs: orgs, line: record.line)
            }
            roster.classes = rows("classes", roster, required: ["title", "schoolSourcedId"]) { table, record, row in
                Class(
                    sourcedID: row.id, status: row.status, title: row.required("title") ?? "", schoolSourcedID: row.required("schoolSourcedId") ?? "",
                    termSourcedIDs: list(table.value(record, "termSourcedIds")), line: record.line)
            }
            roster.enrollments = rows("enrollments", roster, required: ["classSourcedId", "userSourcedId", "role"]) { table, record, row in
                let role = row.required("role") ?? ""
                row.oneOf("role", role, OneRoster.enrollmentRoles)
                return Enrollment(
                    sourcedID: row.id, status: row.status, classSourcedID: row.required("classSourcedId") ?? "", userSourcedID: row.required("userSourcedId") ?? "",
                    role: role, primary: row.optional("primary").lowercased() == "true", line: record.line)
            }
            roster.academicSessions = rows("academicSessions", roster, required: ["title", "type"]) { table, record, row in
                AcademicSession(sourcedID: row.id, status: row.status, title: row.required("title") ?? "", type: row.required("type") ?? "", line: record.line)
            }
            return roster
        }

        /// The roles of each user from `roles.csv` (OneRoster 1.2 moved them out of `users.csv`).
        mutating func rolesByUser(mode: Mode) -> [String: (roles: [String], orgs: [String])] {
            guard mode != .absent else { return [:] }
            var byUser: [String: (roles: [String], orgs: [String])] = [:]
            let found = rows("roles", OneRoster(modes: ["roles": mode]), required: ["userSourcedId", "role", "orgSourcedId"]) { table, record, row in
                (user: row.required("userSourcedId") ?? "", role: row.required("role") ?? "", org: row.required("orgSourcedId") ?? "", status: row.status)
            }
            for entry in found where entry.status == .active {
                byUser[entry.user, default: ([], [])].roles.append(entry.role)
                byUser[entry.user, default: ([], [])].orgs.append(entry.org)
            }
            return byUser
        }

        /// The rows of `name`.csv when the manifest sends it, each checked by `make` (which reports its own
        /// problems on `row`); a sourcedId twice in one file is a problem on the second.
        mutating func rows<Value>(_ name: String, _ roster: OneRoster, required: [String], _ make: (Table, CSVRecord, inout Row) -> Value) -> [Value] {
            let mode = roster.mode(name)
            guard mode != .absent else { return [] }
            let file = name + ".csv"
            guard let table = table(file, required: ["sourcedId", "status", "dateLastModified"] + required) else { return [] }
            var values: [Value] = []
            var seen: [String: Int] = [:]
            for record in table.records {
                var row = Row(table: table, record: record, mode: mode)
                let value = make(table, record, &row)
                if !row.id.isEmpty {
                    if let other = seen[row.id] {
                        row.report("sourcedId", "duplicate_id", ["value": String(row.id.prefix(64)), "other": String(other)])
                    } else {
                        seen[row.id] = record.line
                    }
                }
                problems += row.problems
                if row.problems.isEmpty { values.append(value) }
            }
            return values
        }

        /// The file read as CSV with its header checked, or nil (with the problem reported).
        mutating func table(_ file: String, required: [String]) -> Table? {
            guard let bytes = files[file] else {
                if file != "manifest.csv" { problem(file, 0, "", "file_missing") }
                return nil
            }
            let records: [CSVRecord]
            switch CSVReader.records(bytes, limits: limits) {
            case .success(let read): records = read
            case .failure(let failure):
                problem(file, failure.line ?? 0, "", "csv_" + failure.reason)
                return nil
            }
            guard let header = records.first else {
                for column in required { problem(file, 1, column, "column_missing") }
                return nil
            }
            var columns: [String: Int] = [:]
            for (index, name) in header.fields.enumerated() {
                let key = trimmed(name).lowercased()
                if columns[key] != nil { problem(file, 1, trimmed(name), "duplicate_column") }
                columns[key] = index
            }
            let missing = required.filter { columns[$0.lowercased()] == nil }
            for column in missing { problem(file, 1, column, "column_missing") }
            guard missing.isEmpty else { return nil }
            return Table(file: file, columns: columns, records: Array(records.dropFirst()))
        }
    }

    /// One row being checked: the values it needs, each problem reported at its column.
    struct Row {
        var table: Table
        var record: CSVRecord
        var mode: Mode
        var problems: [RosterProblem] = []
        var id = ""
        var status = Status.active

        init(table: Table, record: CSVRecord, mode: Mode) {
            self.table = table
            self.record = record
            self.mode = mode
            id = required("sourcedId") ?? ""
            let written = table.value(record, "status") ?? ""
            // A bulk file is the whole of what is current: its status is blank (or says so).
            if mode == .bulk, written.isEmpty || written.lowercased() == "active" {
                status = .active
            } else if let parsed = Status(rawValue: written.lowercased()), mode == .delta {
                status = parsed
            } else if written.isEmpty {
                report("status", "value_missing")
            } else {
                report("status", "value_invalid", ["value": String(written.prefix(32)), "allowed": mode == .bulk ? "active" : "active, tobedeleted"])
            }
            if mode == .delta, (table.value(record, "dateLastModified") ?? "").isEmpty { report("dateLastModified", "value_missing") }
        }

        mutating func report(_ field: String, _ code: String, _ params: [String: String] = [:]) {
            problems.append(RosterProblem(file: table.file, line: record.line, field: field, code: code, params: params))
        }

        /// The column's value, or nil with `value_missing` (a row to be deleted needs only its sourcedId).
        mutating func required(_ column: String) -> String? {
            let reported = problems.count
            let value = optional(column)
            if value.isEmpty, problems.count == reported {
                if column == "sourcedId" || status != .tobedeleted { report(column, "value_missing") }
                return nil
            }
            return value.isEmpty ? nil : value
        }

        mutating func optional(_ column: String) -> String {
            let value = table.value(record, column) ?? ""
            if value.count > OneRoster.maximumValueLength || value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                report(column, value.count > OneRoster.maximumValueLength ? "value_too_long" : "value_invalid", ["max": String(OneRoster.maximumValueLength), "value": String(value.prefix(32))])
                return ""
            }
            return value
        }

        mutating func oneOf(_ column: String, _ value: String, _ allowed: Set<String>) {
            guard !value.isEmpty, !allowed.contains(value), !allowed.contains(value.lowercased()) else { return }
            report(column, "value_invalid", ["value": String(value.prefix(32)), "allowed": allowed.sorted().joined(separator: ", ")])
        }
    }
}

private func trimmed(_ text: String) -> String {
    String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
}

/// A comma-separated list inside one field (`orgSourcedIds`, `termSourcedIds`).
private func list(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { trimmed(String($0)) }.filter { !$0.isEmpty }
}
