/// A command's interface, declared once: the parser reads arguments by it and the help text is drawn
/// from it, in swift-argument-parser's layout (OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS).
struct CommandSpec {
    struct Argument {
        var name: String
        var help: String
        var repeating = false
        var optional = false
    }

    struct Option {
        var long: String
        var short: Character?
        /// `nil` for a flag (no value).
        var valueName: String?
        var help: String
        var defaultValue: String?
    }

    var name: String
    /// The words before this command in a usage line, e.g. `storycircle room`.
    var path: [String]
    var overview: String
    var arguments: [Argument] = []
    var options: [Option] = []
    var subcommands: [CommandSpec] = []
    var discussion: String?

    var fullName: String { (path + [name]).joined(separator: " ") }

    static let helpOption = Option(long: "help", short: "h", valueName: nil, help: "Show help information.")
}

/// What the parser found.
struct ParsedArguments {
    var positional: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []

    func value(_ long: String) -> String? { values[long] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// A mistake in how the command was typed: printed as `Error: …` and the usage, exit code 64.
struct UsageError: Error {
    var message: String
    var spec: CommandSpec
}

extension CommandSpec {
    func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" {
                parsed.positional.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            let option: Option? = name.hasPrefix("--")
                ? options.first { "--" + $0.long == name }
                : name.count == 2 ? options.first { $0.short.map { "-\($0)" } == name } : nil
            guard let option else {
                throw UsageError(message: "Unknown option '\(name)'.", spec: self)
            }
            if let valueName = option.valueName {
                if let inlineValue {
                    parsed.values[option.long] = inlineValue
                } else {
                    guard index < arguments.count, !(arguments[index].hasPrefix("--")) else {
                        throw UsageError(message: "Missing value for '--\(option.long) <\(valueName)>'.", spec: self)
                    }
                    parsed.values[option.long] = arguments[index]
                    index += 1
                }
            } else {
                guard inlineValue == nil else {
                    throw UsageError(message: "The flag '--\(option.long)' does not take a value.", spec: self)
                }
                parsed.flags.insert(option.long)
            }
        }
        if parsed.flags.contains("help") { return parsed }
        let required = requiredArguments
        if parsed.positional.count < required.count {
            let missing = required[parsed.positional.count]
            throw UsageError(message: "Missing expected argument '<\(missing.name)>'.", spec: self)
        }
        if !self.arguments.contains(where: \.repeating), parsed.positional.count > self.arguments.count {
            throw UsageError(message: "Unexpected argument '\(parsed.positional[self.arguments.count])'.", spec: self)
        }
        return parsed
    }

    private var requiredArguments: [Argument] {
        arguments.filter { !$0.optional }
    }

    /// The USAGE line.
    var usage: String {
        var parts = [fullName]
        if !subcommands.isEmpty { parts.append("<subcommand>") }
        for argument in arguments {
            var text = "<\(argument.name)>"
            if argument.repeating { text += " ..." }
            parts.append(argument.optional ? "[\(text)]" : text)
        }
        let optionParts = options.filter { $0.long != "help" && $0.long != "version" }.map { option in
            option.valueName.map { "[--\(option.long) <\($0)>]" } ?? "[--\(option.long)]"
        }
        let full = (parts + optionParts).joined(separator: " ")
        // Like swift-argument-parser: a usage line too long to read collapses its options.
        if full.count <= 100 || optionParts.isEmpty { return full }
        return (parts + ["[<options>]"]).joined(separator: " ")
    }

    /// The whole help text.
    var help: String {
        var lines = ["OVERVIEW: \(overview)", ""]
        if let discussion { lines += [discussion, ""] }
        lines += ["USAGE: \(usage)", ""]
        if !arguments.isEmpty {
            lines.append("ARGUMENTS:")
            for argument in arguments {
                lines.append(Self.row("<\(argument.name)>" + (argument.repeating ? " ..." : ""), argument.help))
            }
            lines.append("")
        }
        lines.append("OPTIONS:")
        for option in options {
            let names = (option.short.map { "-\($0), " } ?? "") + "--\(option.long)" + (option.valueName.map { " <\($0)>" } ?? "")
            lines.append(Self.row(names, option.help + (option.defaultValue.map { " (default: \($0))" } ?? "")))
        }
        if !subcommands.isEmpty {
            lines += ["", "SUBCOMMANDS:"]
            for subcommand in subcommands {
                lines.append(Self.row(subcommand.name, subcommand.overview))
            }
            lines += ["", "  See '\(fullName) <subcommand> --help' for detailed help."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// An indented name and its help, aligned at column 26 (or on the next line if the name is long).
    private static func row(_ name: String, _ help: String) -> String {
        let indent = "  "
        let column = 26
        let lead = indent + name
        if lead.count < column - 1 {
            return lead + String(repeating: " ", count: column - lead.count) + help
        }
        return lead + "\n" + String(repeating: " ", count: column) + help
    }
}
