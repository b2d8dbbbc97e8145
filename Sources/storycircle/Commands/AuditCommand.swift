import Foundation
import StoryCircleCore

/// `audit [--since DATE] [--until DATE] [--action NAME] [--limit N] [--csv | --json]`: the server's audit
/// trail, newest first (`GET /api/audit`).
struct AuditCommand: ParsableCommand {
    static let csv = CommandSpec.Option(long: "csv", valueName: nil, help: "Print the rows as CSV for a spreadsheet.")
    static let since = CommandSpec.Option(long: "since", valueName: "date", help: "Rows from this day or time on (2026-12-07 or 2026-12-07T08:30:00Z).")
    static let until = CommandSpec.Option(long: "until", valueName: "date", help: "Rows before this day or time.")
    static let action = CommandSpec.Option(long: "action", valueName: "name", help: "Only this action (read_room_results, export_csv, erase_member, sign_in, …).")
    static let limit = CommandSpec.Option(long: "limit", valueName: "count", help: "At most this many rows, 1 to \(AuditQuery.maxLimit).", defaultValue: "100")

    var query: [(String, String)] = []
    var csv: Bool
    var json: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        csv = arguments.isSet(Self.csv)
        json = arguments.isSet(OutputOptions.json)
        guard !(csv && json) else { throw UsageError("Choose one of --csv and --json.") }
        let when = "use a date (2026-12-07) or a time in UTC (2026-12-07T08:30:00Z)"
        if let since = try arguments.value(of: Self.since, expecting: when, Self.checkedTime) { query.append(("since", since)) }
        if let until = try arguments.value(of: Self.until, expecting: when, Self.checkedTime) { query.append(("until", until)) }
        let names = "use one of \(AuditAction.allCases.map(\.rawValue).joined(separator: ", "))"
        if let action = try arguments.value(of: Self.action, expecting: names, AuditAction.init(rawValue:)) { query.append(("action", action.rawValue)) }
        let limit = try arguments.value(of: Self.limit, expecting: "use a whole number from 1 to \(AuditQuery.maxLimit)") { text in
            Int(text).flatMap { (1...AuditQuery.maxLimit).contains($0) ? $0 : nil }
        }
        query.append(("limit", String(limit ?? AuditQuery.defaultLimit)))
        if csv { query.append(("format", "csv")) }
        client = ClientOptions(arguments)
    }

    /// A date or an ISO 8601 time as the server reads them; checked here so a typo is a usage error.
    static func checkedTime(_ text: String) -> String? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.count == 10 ? [.withFullDate] : [.withInternetDateTime]
        return formatter.date(from: text) == nil ? nil : text
    }

    func run() async throws -> Int32 {
        let encoded = query.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~:"))) ?? value)"
        }
        let response = try await client.api.send("GET", "/api/audit?" + encoded.joined(separator: "&"), token: try client.adminToken())
        if csv || json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        struct Page: Decodable {
            struct Entry: Decodable {
                struct Actor: Decodable {
                    var kind: String
                    var login: String?
                    var room: String?
                }

                var sequence: Int64
                var at: String
                var actor: Actor
                var action: String
                var target: String
                var address: String
                var detail: String
            }

            var entries: [Entry]
            var next: Int64?
        }
        let page = try JSONDecoder().decode(Page.self, from: response.body)
        guard !page.entries.isEmpty else {
            Output.line("No audit rows match.")
            return ExitCode.success
        }
        Output.line(Table.render(header: ["#", "TIME", "WHO", "ACTION", "TARGET", "ADDRESS", "DETAIL"], rows: page.entries.map { entry in
            let who = [entry.actor.kind, entry.actor.login, entry.actor.room].compactMap { $0 }.joined(separator: " ")
            return [String(entry.sequence), entry.at, who, entry.action, entry.target, entry.address, entry.detail]
        }))
        if page.next != nil { Output.line("More rows are older; narrow with --since, --until or --action, or raise --limit.") }
        return ExitCode.success
    }
}
