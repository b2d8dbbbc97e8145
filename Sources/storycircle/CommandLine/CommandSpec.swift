/// A command's interface, declared once: the parser reads arguments by it, the help text is drawn from
/// it, in swift-argument-parser's layout (OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS), and a leaf
/// carries the handler that turns what was parsed into its typed command.
struct CommandSpec: Sendable {
    struct Argument: Sendable {
        var name: String
        var help: String
        var repeating = false
        var optional = false
    }

    /// An option or flag. Commands read what was parsed by handing the option itself back
    /// (`arguments.value(of: ServerOptions.port)`), so a value is never looked up by a name typed twice.
    struct Option: Sendable {
        var long: String
        var short: Character?
        /// `nil` for a flag (no value).
        var valueName: String?
        var help: String
        var defaultValue: String?

        /// How the option is written in an error message: `--port <port>`.
        var usage: String { "--\(long)" + (valueName.map { " <\($0)>" } ?? "") }
    }

    /// Builds a leaf's command from what was parsed; a value that does not convert is a `UsageError`.
    typealias Handler = @Sendable (ParsedArguments) throws(UsageError) -> any RunnableCommand

    /// A group only chooses among its subcommands; a leaf parses its arguments and runs.
    enum Kind: Sendable {
        case group([CommandSpec])
        case leaf(Handler)

        /// A leaf whose command type parses itself.
        static func command<Command: ParsableCommand>(_ command: Command.Type) -> Kind {
            .leaf { arguments throws(UsageError) in try Command(arguments) }
        }
    }

    var name: String
    /// The words before this command in a usage line, e.g. `storycircle room`.
    var path: [String]
    var overview: String
    var arguments: [Argument] = []
    var options: [Option] = []
    var kind: Kind
    var discussion: String?

    var fullName: String { (path + [name]).joined(separator: " ") }

    var subcommands: [CommandSpec] {
        if case .group(let subcommands) = kind { return subcommands }
        return []
    }

    static let helpOption = Option(long: "help", short: "h", valueName: nil, help: "Show help information.")
}

/// A command ready to run: its options are already typed and checked.
protocol RunnableCommand: Sendable {
    func run() async throws -> Int32
}

/// A command type in swift-argument-parser's shape: it turns what was parsed into typed properties once,
/// in `init` (its spec in `Commands` lists the same options, for the parser and the help), then runs.
protocol ParsableCommand: RunnableCommand {
    init(_ arguments: ParsedArguments) throws(UsageError)
}

/// What the parser found. Values are read back by the `Option` that declared them.
struct ParsedArguments {
    var positional: [String] = []
    private var values: [String: String] = [:]
    /// Every value of an option given more than once (`--child Ada --child Bo`), in order.
    private var repeated: [String: [String]] = [:]
    private var flags: Set<String> = []

    func value(of option: CommandSpec.Option) -> String? { values[option.long] }
    func values(of option: CommandSpec.Option) -> [String] { repeated[option.long] ?? [] }
    func isSet(_ flag: CommandSpec.Option) -> Bool { flags.contains(flag.long) }

    /// The option's value converted by `convert`, or `nil` when it was not given; a value `convert`
    /// refuses is a usage error that names the option and says what would do.
    func value<Value>(of option: CommandSpec.Option, expecting: String, _ convert: (String) -> Value?) throws(UsageError) -> Value? {
        guard let text = values[option.long] else { return nil }
        guard let value = convert(text) else {
            throw UsageError("The value '\(text)' is invalid for '\(option.usage)': \(expecting).")
        }
        return value
    }

    fileprivate mutating func set(_ option: CommandSpec.Option, to value: String) {
        values[option.long] = value
        repeated[option.long, default: []].append(value)
    }
    fileprivate mutating func set(_ flag: CommandSpec.Option) { flags.insert(flag.long) }
}

/// A mistake in how the command was typed: printed as `Error: …` with the command's usage, exit code 64.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
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
                throw UsageError("Unknown option '\(name)'.")
            }
            if option.valueName != nil {
                if let inlineValue {
                    parsed.set(option, to: inlineValue)
                } else {
                    guard index < arguments.count, !(arguments[index].hasPrefix("--")) else {
                        throw UsageError("Missing value for '\(option.usage)'.")
                    }
                    parsed.set(option, to: arguments[index])
                    index += 1
                }
            } else {
                guard inlineValue == nil else {
                    throw UsageError("The flag '--\(option.long)' does not take a value.")
                }
                parsed.set(option)
            }
        }
        if parsed.isSet(Self.helpOption) { return parsed }
        let required = requiredArguments
        if parsed.positional.count < required.count {
            let missing = required[parsed.positional.count]
            throw UsageError("Missing expected argument '<\(missing.name)>'.")
        }
        if !self.arguments.contains(where: \.repeating), parsed.positional.count > self.arguments.count {
            throw UsageError("Unexpected argument '\(parsed.positional[self.arguments.count])'.")
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
            let names = (option.short.map { "-\($0), " } ?? "") + option.usage
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
