import Foundation
import StoryCircleCore

/// Which child `child export` and `child erase` mean: a member of a class (the admin token), or a player of
/// one room by nickname or player id (the room's teacher token, else the admin token). A first argument
/// of digits is a room code; anything else a class's name or id.
struct ChildTarget {
    var path: String
    var token: String
    var shown: String

    static func find(_ where: String, _ child: String, client: ClientOptions) async throws -> ChildTarget {
        if !`where`.isEmpty, `where`.allSatisfy(\.isASCII), `where`.allSatisfy(\.isNumber) {
            let code = `where`
            let token: String
            if let teacher = try? client.teacherToken(room: code) { token = teacher } else { token = try client.adminToken() }
            struct Results: Decodable {
                struct Player: Decodable { var id: String; var nickname: String }
                var players: [Player]
            }
            let results = try JSONDecoder().decode(Results.self, from: try await client.api.send("GET", "/api/rooms/\(code)/results", token: token).body)
            let wanted = child.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
            guard let player = results.players.first(where: { $0.id == child }) ?? results.players.first(where: { $0.nickname.lowercased() == wanted }) else {
                throw CommandFailure("room \(code) has no child called \(child) ('storycircle results \(code)' lists them).")
            }
            return ChildTarget(path: "/api/rooms/\(code)/players/\(player.id)/data", token: token, shown: "\(player.nickname) (\(player.id)) in room \(code)")
        }
        let found = try await ClassClient(client: client).find(`where`)
        let member = try ClassRemoveCommand.member(child, of: found)
        return ChildTarget(path: "/api/classes/\(found.id)/members/\(member.id ?? "")/data", token: try client.adminToken(), shown: "\(member.name) (\(member.id ?? "")) of \(found.name)")
    }
}

/// `child export CLASS-OR-ROOM CHILD [--csv] [--out FILE]`: everything stored about one child, for a parent.
struct ChildExportCommand: ParsableCommand {
    static let csv = CommandSpec.Option(long: "csv", valueName: nil, help: "A CSV file instead of JSON.")
    static let out = CommandSpec.Option(long: "out", valueName: "file", help: "Write it to this file (default: standard output).")

    var place: String
    var child: String
    var csv: Bool
    var out: String?
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        place = arguments.positional[0]
        child = arguments.positional[1]
        csv = arguments.isSet(Self.csv)
        out = arguments.value(of: Self.out)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let target = try await ChildTarget.find(place, child, client: client)
        let body = try await client.api.send("GET", target.path + (csv ? "?format=csv" : ""), token: target.token).body
        guard let out else {
            FileHandle.standardOutput.write(body)
            return ExitCode.success
        }
        guard FileManager.default.createFile(atPath: out, contents: body, attributes: [.posixPermissions: 0o600]) else {
            throw CommandFailure("could not write \(out).")
        }
        FileHandle.standardError.write(Data("The data of \(target.shown) is in \(out).\n".utf8))
        return ExitCode.success
    }
}

/// `child erase CLASS-OR-ROOM CHILD --yes`: a class member from every room of the class, or a player
/// from one room, deleted for good.
struct ChildEraseCommand: ParsableCommand {
    var place: String
    var child: String
    var confirmed: Bool
    var client: ClientOptions

    init(_ arguments: ParsedArguments) {
        place = arguments.positional[0]
        child = arguments.positional[1]
        confirmed = arguments.isSet(ClassEraseCommand.yes)
        client = ClientOptions(arguments)
    }

    func run() async throws -> Int32 {
        let target = try await ChildTarget.find(place, child, client: client)
        guard confirmed else {
            Output.error("this would delete everything stored of \(target.shown): their answers and points, their rows in the results and exports\(target.path.hasPrefix("/api/classes") ? " in every room of the class, and their place in the class" : ""). It cannot be undone. Export it first ('storycircle child export'), then run again with --yes.")
            return ExitCode.usage
        }
        let response = try await client.api.exchange("DELETE", target.path, token: target.token)
        guard (200..<300).contains(response.status) else { throw CommandFailure(APIClient.refusal(response)) }
        Output.line("Everything of \(target.shown) was deleted.")
        return ExitCode.success
    }
}
