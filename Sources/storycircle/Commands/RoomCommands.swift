import Foundation
import StoryCircleCore

enum RoomCommands {
    static func create(_ parsed: ParsedArguments) async throws -> Int32 {
        let patch = try RoomSettingFlags.patch(parsed, spec: Commands.roomCreate)
        let story = try StoryFile.require(parsed.positional[0])
        let server = Credentials.server(parsed)
        let token = try Credentials.adminToken(parsed)
        let body = try JSONEncoder().encode(["story": story.jsonValue(), "settings": try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(patch))])
        let response = try await APIClient(server: server).send("POST", "/api/rooms", token: token, json: body)
        struct Created: Codable {
            var code, title, teacherToken, dashboardToken, joinURL, dashboardURL, teacherURL: String
            var warnings: [String]
        }
        let created = try JSONDecoder().decode(Created.self, from: response.body)
        let saved = try Credentials.save(.init(code: created.code, server: server, teacherToken: created.teacherToken, dashboardToken: created.dashboardToken))
        if parsed.has("json") {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        created.warnings.forEach { Output.warning($0) }
        Output.line("Room \(created.code) created: \(created.title)")
        Output.line("Join:      \(created.joinURL)")
        Output.line("Dashboard: \(created.dashboardURL)")
        Output.line("Teacher:   \(created.teacherURL)")
        Output.line("The teacher token is saved in \(saved.path); 'storycircle room start \(created.code)' uses it.")
        return ExitCode.success
    }

    static func status(_ parsed: ParsedArguments) async throws -> Int32 {
        let code = parsed.positional[0]
        let response = try await APIClient(server: Credentials.server(parsed)).send("GET", "/api/rooms/\(code)", token: try Credentials.teacherToken(parsed, code: code))
        if parsed.has("json") {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        struct Report: Decodable {
            var code, title, phase: String
            var paused, locked: Bool
            var players, connectedPlayers, questionCount: Int
            var question, answers: Int?
        }
        let report = try JSONDecoder().decode(Report.self, from: response.body)
        var state = report.phase
        if let question = report.question { state += " \(question + 1) of \(report.questionCount)" }
        if report.paused { state += " (paused)" }
        Output.line("Room \(report.code) · \(report.title)")
        Output.line("State:    \(state)")
        Output.line("Players:  \(report.players) (\(report.connectedPlayers) connected)")
        if let answers = report.answers { Output.line("Answers:  \(answers) of \(report.players)") }
        Output.line("Locked:   \(report.locked ? "yes" : "no")")
        return ExitCode.success
    }

    static func list(_ parsed: ParsedArguments) async throws -> Int32 {
        let response = try await APIClient(server: Credentials.server(parsed)).send("GET", "/api/rooms", token: try Credentials.adminToken(parsed))
        if parsed.has("json") {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        struct List: Decodable { var rooms: [RoomSummary] }
        let rooms = try JSONDecoder().decode(List.self, from: response.body).rooms
        if rooms.isEmpty {
            Output.line("No rooms yet. Create one with 'storycircle room create STORY.json'.")
            return ExitCode.success
        }
        let formatter = ISO8601DateFormatter()
        Output.line(Table.render(header: ["CODE", "PHASE", "PLAYERS", "CREATED", "TITLE"], rows: rooms.map { room in
            [room.code, room.phase.rawValue, String(room.players), formatter.string(from: Date(timeIntervalSince1970: Double(room.createdAt.milliseconds) / 1_000)), room.title]
        }))
        return ExitCode.success
    }

    /// `room start|next|reveal|pause|resume|end CODE` and `room kick CODE NICKNAME [--block]`.
    static func command(_ name: String, _ parsed: ParsedArguments) async throws -> Int32 {
        let code = parsed.positional[0]
        let command = name == "kick" && parsed.has("block") ? "block" : name
        var body: [String: String] = ["command": command]
        if name == "kick" { body["player"] = parsed.positional[1] }
        let response = try await APIClient(server: Credentials.server(parsed)).send(
            "POST", "/api/rooms/\(code)/commands", token: try Credentials.teacherToken(parsed, code: code), json: try JSONEncoder().encode(body)
        )
        struct Report: Decodable { var phase: String; var question: Int?; var questionCount: Int; var players: Int }
        let report = try JSONDecoder().decode(Report.self, from: response.body)
        let question = report.question.map { " \($0 + 1) of \(report.questionCount)" } ?? ""
        Output.line("\(command): done. Room \(code) is now in \(report.phase)\(question), with \(report.players) player\(report.players == 1 ? "" : "s").")
        return ExitCode.success
    }
}

/// Left-aligned columns for terminal tables.
enum Table {
    static func render(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
