import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// Rooms (`docs/protocol.md`, "HTTP API"): the admin creates and lists them; a room's teacher token controls
/// it and reads its results; its dashboard token reads its status and QR code.
struct RoomRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.post, "/api/rooms", .teaching, refusal: .unauthorized("Creating a room needs a signed-in teacher or the admin token (Authorization: Bearer …); the server printed where it keeps it.")) {
                try await $0.createRoom($1)
            },
            Route(.get, "/api/rooms", .teaching, refusal: .unauthorized("Listing rooms needs a signed-in teacher or the admin token.")) { try await $0.listRooms($1) },
            Route(.get, "/api/rooms/:code", .dashboard) { _, request in .json(200, await request.room!.report()) },
            Route(.post, "/api/rooms/:code/commands", .teacher) { try await $0.command($1) },
            Route(.get, "/api/rooms/:code/results", .teacher) { try await $0.results($1) },
            Route(.get, "/api/rooms/:code/qr.svg", .dashboard) { try await $0.qrCode($1) },
        ]
    }
}

extension APIHandler {
    fileprivate func createRoom(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try decodeObject(request.body)
        // {"storyId": "..."} (a story of the library), {"story": {...}, "settings": {...}} or the story file itself.
        let story: Story
        var storyID: String?
        var warnings: [ValidationIssue] = []
        if let id = body["storyId"] {
            story = try await libraryStory(id, for: request.principal)
            if case .string(let text) = id { storyID = text }
        } else {
            let validated = Story.load(json: body["story"] ?? .object(body.filter { $0.key != "settings" }))
            guard let valid = validated.value else { throw invalidStory(validated.issues) }
            story = valid
            warnings = validated.warnings
        }
        var patch: RoomSettingsPatch?
        if let settings = body["settings"] {
            do {
                patch = try JSONDecoder().decode(RoomSettingsPatch.self, from: JSONEncoder().encode(settings))
            } catch {
                throw HTTPError(.invalidSettings, "The settings are not valid: each one is true/false, a number, or a narration mode (devices, dashboard, off).")
            }
        }
        let schoolClass = try await body["classId"].asyncMap { try await classForRoom($0, for: request.principal) }
        try await refusePictures(of: story)
        do {
            // A room of a class is its owner's, whoever started it (a school administrator, the admin token):
            // it shows in the teacher's list and report.
            let owner = schoolClass?.owner ?? request.newOwner
            return .json(201, try await rooms.create(story: story, settings: patch, storyID: storyID, schoolClass: schoolClass, warnings: warnings.map(\.description), owner: owner))
        } catch let error as RoomError {
            throw error
        } catch {
            throw HTTPError(.internalError, "The room could not be stored.")
        }
    }

    fileprivate func listRooms(_ request: RouteRequest) async throws -> HTTPResponse {
        let scope = try request.ownerScope
        do {
            return .json(200, ["rooms": try await store.summaries(scope: scope)])
        } catch {
            throw HTTPError(.internalError, "The rooms could not be read from storage.")
        }
    }

    fileprivate func command(_ request: RouteRequest) async throws -> HTTPResponse {
        struct Body: Decodable {
            var command: String
            var player: String?
            var member: String?
            var settings: RoomSettingsPatch?
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            throw HTTPError(.invalidMessage, "Send {\"command\": \"next\"} (and \"player\" for kick, \"settings\" for settings).")
        }
        let command = try TeacherCommand.named(body.command, player: body.player, settings: body.settings, member: body.member)
        // Answers once the command's records are stored, or 503 if they cannot be (then it did not happen).
        return .json(200, try await request.room!.perform(command))
    }

    fileprivate func results(_ request: RouteRequest) async throws -> HTTPResponse {
        let room = request.room!
        let format = request.query["format"] ?? "json"
        guard format == "json" || format == "csv" else { throw HTTPError(.invalidMessage, "format must be json or csv.") }
        // Recorded before anything is read: a read that cannot be recorded is refused.
        try await audit(format == "csv" ? .exportCSV : .readRoomResults, target: "room:\(room.code)", request, schoolID: room.owner?.schoolID, detail: format)
        let results = await room.results()
        switch format {
        case "json":
            return .json(200, results)
        case "csv":
            // Named after the story and the day the room was played, as a teacher files it.
            let file = CSVFile(naming: [results.title], day: room.createdAt, text: results.csv())
            return HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8", headers: [("cache-control", "no-store"), ("content-disposition", file.contentDisposition)], body: file.body)
        default:
            throw HTTPError(.invalidMessage, "format must be json or csv.")
        }
    }

    fileprivate func qrCode(_ request: RouteRequest) async throws -> HTTPResponse {
        guard qrCodes else { throw HTTPError.notFound }
        let code = request[parameter: "code"]
        let language = await request.room!.report().language
        guard let svg = JoinCode.qrSVG(for: JoinCode.joinURL(publicURL: publicURL, code: code, language: language)) else {
            throw HTTPError(.internalError, "The QR code could not be drawn.")
        }
        // Not cached: the link in it changes with the room's language, which the teacher may change.
        return HTTPResponse(status: 200, contentType: "image/svg+xml", headers: [("cache-control", "no-store")], body: Array(svg.utf8))
    }

    /// How rooms are made here, as the all-in-one `start` command makes them.
    var rooms: RoomMaker { RoomMaker(registry: registry, speech: narrator, publicURL: publicURL) }
}
