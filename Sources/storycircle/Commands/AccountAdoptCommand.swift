import Foundation
import StoryCircleCore

/// `account adopt LOGIN`: names a teacher the owner of every class, room, story and picture stored before
/// accounts existed (`POST /api/accounts/{login}/adopt`). What has an owner keeps it, so running it again
/// changes nothing.
struct AccountAdoptCommand: ParsableCommand {
    var login: String
    var client: ClientOptions
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let login = AccountLogins.normalised(arguments.positional[0]) else {
            throw UsageError("LOGIN must be 1 to 128 letters, digits and . - _ @ +.")
        }
        self.login = login
        client = ClientOptions(arguments)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let response = try await client.api.send("POST", "/api/accounts/\(login)/adopt", token: try client.adminToken())
        if json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return ExitCode.success
        }
        struct Adopted: Decodable {
            struct Counts: Decodable { var classes: Int; var rooms: Int; var stories: Int; var pictures: Int }
            var account: String
            var adopted: Counts
        }
        let adopted = try JSONDecoder().decode(Adopted.self, from: response.body).adopted
        let total = adopted.classes + adopted.rooms + adopted.stories + adopted.pictures
        guard total > 0 else {
            Output.line("Nothing was without an owner; \(login) owns what they made.")
            return ExitCode.success
        }
        Output.line("\(login) now owns what was stored before accounts: \(adopted.classes) classes, \(adopted.rooms) rooms, \(adopted.stories) stories, \(adopted.pictures) pictures.")
        return ExitCode.success
    }
}
