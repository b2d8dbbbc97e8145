import Foundation
import StoryCircleCore
import Testing
@testable import storycircle

/// The command tree, parsed in process. The executable's behaviour end to end (exit codes, stderr, the
/// pseudo-terminal) is tested by Tests/Integration/test_cli.py; this is the fast half.
struct CommandLineTests {
    private static let helpFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Integration/cli_help")

    /// Every command in the tree, depth first, with the root.
    private static func everyCommand(_ spec: CommandSpec = Commands.root) -> [CommandSpec] {
        [spec] + spec.subcommands.flatMap { everyCommand($0) }
    }

    @Test func everyCommandHasAGoldenHelpTextAndMatchesIt() throws {
        let commands = Self.everyCommand()
        #expect(commands.count == 47)
        for spec in commands {
            let file = Self.helpFolder.appendingPathComponent((spec.path + [spec.name]).joined(separator: "_") + ".txt")
            let expected = try String(contentsOf: file, encoding: .utf8)
            #expect(spec.help == expected, "\(spec.fullName)")
        }
    }

    @Test func everyLeafHasAHandlerAndEveryGroupHasSubcommands() {
        for spec in Self.everyCommand() {
            switch spec.kind {
            case .leaf: #expect(spec.subcommands.isEmpty)
            case .group(let subcommands): #expect(!subcommands.isEmpty, "\(spec.fullName)")
            }
        }
    }

    private static func command(_ words: String...) throws -> any RunnableCommand {
        try command(words)
    }

    @Test func startParsesItsOptionsOnceIntoTypedValues() throws {
        let start = try #require(try Self.command("start", "story.json", "--port", "9000", "--no-timer", "--question-seconds=30", "--narrate", "dashboard", "--no-keys") as? StartCommand)
        #expect(start.storyPath == "story.json")
        #expect(start.serverOptions.port == 9000)
        #expect(start.serverOptions.dataDirectory == nil)
        #expect(start.settings.patch.timer == false)
        #expect(start.settings.patch.questionSeconds == 30)
        #expect(start.settings.patch.narration == .dashboard)
        #expect(start.settings.patch.streakBonus == nil)
        #expect(start.readsKeys == false)
    }

    @Test func aValueThatDoesNotConvertIsAUsageErrorNamingTheOption() {
        let cases: [([String], String)] = [
            (["start", "s.json", "--port", "70000"], "The value '70000' is invalid for '--port <port>': use a port number from 0 to 65535."),
            (["start", "s.json", "--question-seconds", "1"], "The value '1' is invalid for '--question-seconds <seconds>': use a whole number from \(RoomSettings.questionSecondsRange.lowerBound) to \(RoomSettings.questionSecondsRange.upperBound)."),
            (["room", "create", "s.json", "--narrate", "radio"], "The value 'radio' is invalid for '--narrate <mode>': use devices, dashboard or off."),
            (["results", "123456", "--format", "xml"], "The value 'xml' is invalid for '--format <format>': use table, csv or json."),
            (["room", "kick", "123456", "Ana", "--block=yes"], "The flag '--block' does not take a value."),
        ]
        for (words, message) in cases {
            do {
                _ = try Self.command(words)
                Issue.record("\(words) parsed")
            } catch let error as UsageError {
                #expect(error.message == message)
            } catch {
                Issue.record("\(words): \(error)")
            }
        }
    }

    @Test func roomControlSubcommandsCarryTheirOwnCommandName() throws {
        for verb in ["start", "next", "reveal", "pause", "resume", "end"] {
            let command = try #require(try Self.command("room", verb, "123456", "--token", "t") as? RoomControlCommand)
            #expect(command.command == verb)
            #expect(command.code == "123456")
            #expect(try command.client.teacherToken(room: "123456") == "t")
        }
        let kick = try #require(try Self.command("room", "kick", "123456", "Ana", "--block") as? RoomKickCommand)
        #expect(kick.nickname == "Ana" && kick.block)
    }
}

extension CommandLineTests {
    /// The command `words` name, parsed as `run` in main.swift does.
    private static func command(_ words: [String]) throws -> any RunnableCommand {
        var spec = Commands.root
        var remaining = words
        while case .group(let subcommands) = spec.kind, let name = remaining.first, let next = subcommands.first(where: { $0.name == name }) {
            spec = next
            remaining.removeFirst()
        }
        guard case .leaf(let handler) = spec.kind else { throw UsageError("no leaf for \(words)") }
        return try handler(try spec.parse(remaining))
    }
}
