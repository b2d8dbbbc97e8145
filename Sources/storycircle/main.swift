import Foundation
import StoryCircleCore

/// Finds the command the arguments name, lets its type parse the rest, runs it, and exits with its code.
func run(_ arguments: [String]) async -> Int32 {
    var spec = Commands.root
    var remaining = arguments
    if remaining.first == "--version" {
        Output.line(StoryCircleVersion.current)
        return ExitCode.success
    }
    if remaining.first == "help" { remaining = Array(remaining.dropFirst()) + ["--help"] }
    // Walk down the groups to a leaf: `room start 123456` is `room`, then `start`.
    let handler: CommandSpec.Handler
    walk: while true {
        switch spec.kind {
        case .leaf(let leaf):
            handler = leaf
            break walk
        case .group(let subcommands):
            guard let name = remaining.first else {
                Output.write(spec.help)
                return spec.path.isEmpty ? ExitCode.success : ExitCode.usage
            }
            if name == "-h" || name == "--help" {
                Output.write(spec.help)
                return ExitCode.success
            }
            guard let subcommand = subcommands.first(where: { $0.name == name }) else {
                Output.usageError(name.hasPrefix("-") ? "Unknown option '\(name)'." : "Unknown subcommand '\(name)'.", spec: spec)
                return ExitCode.usage
            }
            spec = subcommand
            remaining.removeFirst()
        }
    }
    let command: any RunnableCommand
    do {
        let parsed = try spec.parse(remaining)
        if parsed.isSet(CommandSpec.helpOption) {
            Output.write(spec.help)
            return ExitCode.success
        }
        command = try handler(parsed)
    } catch {
        Output.usageError(error.message, spec: spec)
        return ExitCode.usage
    }
    do {
        return try await command.run()
    } catch let failure as CommandFailure {
        Output.error(failure.message)
        return ExitCode.failure
    } catch {
        Output.error("\(error)")
        return ExitCode.failure
    }
}

exit(await run(Array(CommandLine.arguments.dropFirst())))
