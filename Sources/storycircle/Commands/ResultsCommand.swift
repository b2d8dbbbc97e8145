import Foundation
import StoryCircleCore

/// `results CODE [--format table|csv|json]`.
struct ResultsCommand: ParsableCommand {
    enum Format: String {
        case table, csv, json
    }

    static let format = CommandSpec.Option(long: "format", valueName: "format", help: "table, csv or json.", defaultValue: "table")

    var code: String
    var format: Format
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        code = arguments.positional[0]
        format = try arguments.value(of: Self.format, expecting: "use table, csv or json", Format.init(rawValue:)) ?? .table
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let token = try client.teacherToken(room: code)
        let response = try await client.api.send("GET", "/api/rooms/\(code)/results" + (format == .csv ? "?format=csv" : ""), token: token)
        if format != .table {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        let results = try JSONDecoder().decode(RoomResults.self, from: response.body)
        Output.line(Self.render(results))
        return ExitCode.success
    }
    static func render(_ results: RoomResults) -> String {
        var lines = ["\(results.title) · room \(results.code) · \(results.phase.rawValue)", ""]
        guard !results.players.isEmpty else {
            return (lines + ["No children joined this room."]).joined(separator: "\n")
        }
        let header = ["RANK", "NICKNAME", "SCORE", "CORRECT"] + results.questions.map { "Q\($0.index + 1)" }
        let rows = results.players.map { player in
            [String(player.rank), player.nickname, String(player.score), "\(player.correct)/\(results.questions.count)"]
                + player.answers.map { answer in
                    guard let correct = answer.correct else { return "-" }
                    let time = answer.timeMs.map { String(format: " %.1fs", Double($0) / 1_000) } ?? ""
                    return (correct ? "✓" : "✗") + time + " \(answer.points)"
                }
        }
        lines.append(Table.render(header: header, rows: rows))
        lines += ["", "Questions:"] + results.questions.map { question in
            let skipped = question.skipped ? " (skipped)" : question.concluded ? "" : " (not revealed yet)"
            return "  Q\(question.index + 1). \(question.text) → \(question.options[question.correctOption])\(skipped)"
        }
        return lines.joined(separator: "\n")
    }
}
