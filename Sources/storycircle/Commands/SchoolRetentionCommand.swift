import Foundation
import StoryCircleCore

/// `school retention SCHOOL [--rooms DAYS] [--removed-members DAYS] [--classes DAYS] [--stories DAYS]
/// [--pictures DAYS] [--audit DAYS]`: shows a school's retention rules, or changes the ones given (each a
/// number of days, or `default` for the server's) and keeps the others.
struct SchoolRetentionCommand: ParsableCommand {
    /// One option per kind, named after it (`removed_members` is `--removed-members`).
    static let options: [(kind: RetentionKind, option: CommandSpec.Option)] = RetentionKind.allCases.map { kind in
        let keep = kind.keepsForever ? "0 keeps them until deleted; " : ""
        return (kind, CommandSpec.Option(
            long: kind.rawValue.replacingOccurrences(of: "_", with: "-"), valueName: "days",
            help: "Days \(Self.what(kind)) are kept (\(keep)\(kind.bounds.lowerBound) to \(kind.bounds.upperBound)), or 'default' for the server's."
        ))
    }

    static func what(_ kind: RetentionKind) -> String {
        switch kind {
        case .rooms: "rooms (with every child's answers)"
        case .removedMembers: "children taken out of a class"
        case .classes: "unused classes"
        case .stories: "unused stories"
        case .pictures: "unused pictures"
        case .audit: "audit rows"
        }
    }

    var school: String
    /// The kinds to change: a number of days, or nil for the server's default.
    var changes: [RetentionKind: Int?]
    var json: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        school = arguments.positional[0]
        json = arguments.isSet(OutputOptions.json)
        client = ClientOptions(arguments)
        changes = [:]
        for (kind, option) in Self.options {
            guard let text = arguments.value(of: option) else { continue }
            if text == "default" {
                changes[kind] = .some(nil)
            } else if let days = Int(text), kind.allows(days) {
                changes[kind] = days
            } else {
                throw UsageError("The value '\(text)' is invalid for '\(option.usage)': \(kind.keepsForever ? "0, " : "")\(kind.bounds.lowerBound) to \(kind.bounds.upperBound) days, or 'default'.")
            }
        }
    }

    func run() async throws -> Int32 {
        let id = try await AccountClient(client: client).school(school).id
        let path = "/api/schools/\(id)/retention"
        var response = try await client.api.send("GET", path, token: try client.adminToken())
        if !changes.isEmpty {
            var rules = try Self.decode(response.body).retention
            for (kind, days) in changes { rules[kind.rawValue] = days }
            let body = JSONValue.object(rules.mapValues { $0.map { .number(Double($0)) } ?? .null })
            response = try await client.api.send("PUT", path, token: try client.adminToken(), json: try JSONEncoder().encode(body))
        }
        if json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        let shown = try Self.decode(response.body)
        let rows = RetentionKind.allCases.map { kind in
            let own = shown.retention[kind.rawValue] ?? nil
            let days = own ?? shown.defaults[kind.rawValue] ?? 0
            return [kind.rawValue, days == 0 ? "until deleted" : "\(days) days", own == nil ? "server default" : "this school"]
        }
        Output.line(Table.render(header: ["KIND", "KEPT", "SET BY"], rows: rows))
        return ExitCode.success
    }

    private struct Shown: Decodable {
        var retention: [String: Int?]
        var defaults: [String: Int]
    }

    private static func decode(_ body: Data) throws -> Shown {
        do {
            return try JSONDecoder().decode(Shown.self, from: body)
        } catch {
            throw CommandFailure("the server's answer about retention could not be read.")
        }
    }
}
