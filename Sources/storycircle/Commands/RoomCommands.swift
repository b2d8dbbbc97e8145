import Foundation
import StoryCircleCore

/// `room create STORY`: a room on a running server; its tokens are saved for the commands that follow.
struct RoomCreateCommand: ParsableCommand {
    var storyPath: String
    var client: ClientOptions
    var settings: RoomSettingOptions
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        storyPath = arguments.positional[0]
        client = ClientOptions(arguments)
        settings = try RoomSettingOptions(arguments)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let token = try client.adminToken()
        let story = try await PictureUpload.upload(try StoryFile.require(storyPath), storyPath: storyPath, api: client.api, token: token)
        let body = try JSONEncoder().encode(["story": story.jsonValue(), "settings": try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(settings.patch))])
        let response = try await client.api.send("POST", "/api/rooms", token: token, json: body)
        struct Created: Codable {
            var code, title, teacherToken, dashboardToken, joinURL, dashboardURL, teacherURL: String
            var warnings: [String]
        }
        let created = try JSONDecoder().decode(Created.self, from: response.body)
        let saved = try Credentials.save(.init(code: created.code, server: client.server, teacherToken: created.teacherToken, dashboardToken: created.dashboardToken))
        if json {
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
}

/// `room status CODE`.
struct RoomStatusCommand: ParsableCommand {
    var code: String
    var client: ClientOptions
    var json: Bool

    init(_ arguments: ParsedArguments) {
        code = arguments.positional[0]
        client = ClientOptions(arguments)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let response = try await client.api.send("GET", "/api/rooms/\(code)", token: try client.teacherToken(room: code))
        if json {
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
}

/// `room list`.
struct RoomListCommand: ParsableCommand {
    var client: ClientOptions
    var json: Bool

    init(_ arguments: ParsedArguments) {
        client = ClientOptions(arguments)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let response = try await client.api.send("GET", "/api/rooms", token: try client.adminToken())
        if json {
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
}

/// `room start|next|reveal|pause|resume|end CODE`: one teacher command, named by the subcommand.
struct RoomControlCommand: RunnableCommand {
    var command: String
    var code: String
    var client: ClientOptions

    init(command: String, _ arguments: ParsedArguments) {
        self.command = command
        code = arguments.positional[0]
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        try await RoomCommandRequest(command: command, code: code, player: nil, client: client).send()
    }
}

/// `room kick CODE NICKNAME [--block]`.
struct RoomKickCommand: ParsableCommand {
    static let block = CommandSpec.Option(long: "block", valueName: nil, help: "Also block: that name and that browser cannot join this room again.")

    var code: String
    var nickname: String
    var block: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        code = arguments.positional[0]
        nickname = arguments.positional[1]
        block = arguments.isSet(Self.block)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        try await RoomCommandRequest(command: block ? "block" : "kick", code: code, player: nickname, client: client).send()
    }
}

/// A teacher command sent over the HTTP API, and its one-line report.
private struct RoomCommandRequest {
    var command: String
    var code: String
    var player: String?
    var client: ClientOptions

    func send() async throws -> Int32 {
        var body: [String: String] = ["command": command]
        if let player { body["player"] = player }
        let response = try await client.api.send(
            "POST", "/api/rooms/\(code)/commands", token: try client.teacherToken(room: code), json: try JSONEncoder().encode(body)
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
