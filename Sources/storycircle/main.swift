import Foundation
import StoryCircleCore

/// Finds the command, parses its arguments, runs it, and exits with its code.
func run(_ arguments: [String]) async -> Int32 {
    var spec = Commands.root
    var remaining = arguments
    if remaining.first == "--version" {
        Output.line(StoryCircleVersion.current)
        return ExitCode.success
    }
    if remaining.first == "help" { remaining = Array(remaining.dropFirst()) + ["--help"] }
    // Walk down the subcommands: `room start 123456` is `room`, then `start`.
    while !spec.subcommands.isEmpty {
        guard let name = remaining.first else {
            Output.write(spec.help)
            return spec.path.isEmpty ? ExitCode.success : ExitCode.usage
        }
        if name == "-h" || name == "--help" {
            Output.write(spec.help)
            return ExitCode.success
        }
        guard let subcommand = spec.subcommands.first(where: { $0.name == name }) else {
            Output.usageError(UsageError(message: name.hasPrefix("-") ? "Unknown option '\(name)'." : "Unknown subcommand '\(name)'.", spec: spec))
            return ExitCode.usage
        }
        spec = subcommand
        remaining.removeFirst()
    }
    do {
        let parsed = try spec.parse(remaining)
        if parsed.has("help") {
            Output.write(spec.help)
            return ExitCode.success
        }
        switch spec.path + [spec.name] {
        case ["storycircle", "start"]: return try await StartCommand.run(parsed)
        case ["storycircle", "serve"]: return try await ServeCommand.run(parsed)
        case ["storycircle", "results"]: return try await ResultsCommand.run(parsed)
        case ["storycircle", "story", "validate"]: return StoryCommand.validate(parsed)
        case ["storycircle", "room", "create"]: return try await RoomCommands.create(parsed)
        case ["storycircle", "room", "status"]: return try await RoomCommands.status(parsed)
        case ["storycircle", "room", "list"]: return try await RoomCommands.list(parsed)
        default: return try await RoomCommands.command(spec.name, parsed)
        }
    } catch let error as UsageError {
        Output.usageError(error)
        return ExitCode.usage
    } catch let failure as CommandFailure {
        Output.error(failure.message)
        return ExitCode.failure
    } catch {
        Output.error("\(error)")
        return ExitCode.failure
    }
}

exit(await run(Array(CommandLine.arguments.dropFirst())))
