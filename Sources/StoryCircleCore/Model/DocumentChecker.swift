/// Walks a `JSONValue` and collects every problem with its path, so a validator reads like the format it
/// checks. Each accessor returns `nil` (and records why) when the value is missing or unusable.
struct DocumentChecker {
    private(set) var issues: [ValidationIssue] = []

    var hasErrors: Bool { issues.contains { $0.severity == .error } }

    mutating func error(_ path: String, _ code: ValidationCode, _ params: [String: String], _ message: String) {
        issues.append(ValidationIssue(.error, at: path, code, params, message))
    }

    mutating func error(_ path: String, _ code: ValidationCode, _ message: String) {
        error(path, code, [:], message)
    }

    mutating func warning(_ path: String, _ code: ValidationCode, _ params: [String: String], _ message: String) {
        issues.append(ValidationIssue(.warning, at: path, code, params, message))
    }

    static func path(_ base: String, _ key: String) -> String {
        base.isEmpty ? key : "\(base).\(key)"
    }

    static func path(_ base: String, _ index: Int) -> String {
        "\(base)[\(index)]"
    }

    mutating func object(_ value: JSONValue, at path: String, what: String) -> [String: JSONValue]? {
        guard case .object(let object) = value else {
            error(path, .notAnObject, ["found": value.typeName], "expected \(what) (a JSON object), found \(value.typeName)")
            return nil
        }
        return object
    }

    /// Warns about fields the format does not know; they are ignored, and usually a typo.
    mutating func warnAboutUnknownFields(in object: [String: JSONValue], at path: String, known: Set<String>) {
        for key in object.keys.sorted() where !known.contains(key) {
            let suggestion = known.sorted().first { Self.isLikelyTypo(key, of: $0) }
            let hint = suggestion.map { " (did you mean \"\($0)\"?)" } ?? ""
            if let suggestion {
                warning(Self.path(path, key), .unknownFieldTypo, ["field": key, "suggestion": suggestion], "unknown field is ignored\(hint)")
            } else {
                warning(Self.path(path, key), .unknownField, ["field": key], "unknown field is ignored")
            }
        }
    }

    mutating func string(_ value: JSONValue?, at path: String, limit: ClosedRange<Int>, what: String) -> String? {
        guard let value else {
            error(path, .required, "\(what) is required")
            return nil
        }
        guard case .string(let raw) = value else {
            error(path, .notText, ["found": value.typeName], "expected \(what) as text, found \(value.typeName)")
            return nil
        }
        let text = SentenceSplitter.collapsingWhitespace(raw)
        if text.isEmpty {
            error(path, .empty, "\(what) is empty")
            return nil
        }
        if text.count > limit.upperBound {
            error(path, .tooLong, ["length": String(text.count), "limit": String(limit.upperBound)], "\(what) is \(text.count) characters long; the limit is \(limit.upperBound)")
            return nil
        }
        return text
    }

    mutating func optionalString(_ value: JSONValue?, at path: String, limit: ClosedRange<Int>, what: String) -> String? {
        guard let value, value != .null else { return nil }
        return string(value, at: path, limit: limit, what: what)
    }

    mutating func integer(_ value: JSONValue, at path: String, range: ClosedRange<Int>, unit: String) -> Int? {
        guard case .number(let number) = value else {
            error(path, .notWholeNumber, ["found": value.typeName], "expected a whole number of \(unit), found \(value.typeName)")
            return nil
        }
        guard number.rounded() == number, abs(number) < 1e9 else {
            error(path, .notWholeNumber, ["found": Self.format(number)], "expected a whole number of \(unit), found \(Self.format(number))")
            return nil
        }
        let integer = Int(number)
        guard range.contains(integer) else {
            error(path, .outOfRange, ["value": String(integer), "min": String(range.lowerBound), "max": String(range.upperBound)], "\(integer) \(unit) is outside the allowed \(range.lowerBound) to \(range.upperBound) \(unit)")
            return nil
        }
        return integer
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    /// `["Red","Green","Blue"]`: how option lists are quoted in messages.
    static func quotedList(_ items: [String]) -> String {
        "[" + items.map { "\"\($0)\"" }.joined(separator: ",") + "]"
    }

    static func isLikelyTypo(_ candidate: String, of known: String) -> Bool {
        let a = Array(candidate.lowercased()), b = Array(known.lowercased())
        if a == b { return true }
        guard abs(a.count - b.count) <= 2, min(a.count, b.count) >= 3 else { return false }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count] <= 2
    }
}
