import Foundation
import StoryCircleCore
import TransportCore
import WebSocketTransport
import StoryCircleServer

/// The HTTP API (`docs/protocol.md`, "HTTP API"): rooms, commands, results, health and metrics.
/// Teacher and admin tokens come as `Authorization: Bearer …`.
struct APIHandler: Sendable {
    let registry: RoomRegistry
    let store: any RoomStore
    let clock: any ServerClock
    let metrics: ServerMetrics
    let transportMetrics: TransportMetrics?
    let adminTokenHash: String
    let publicURL: String
    let startedAt: ServerTime
    let audio: AudioCache?
    let qrCodes: Bool
    /// The real narrator, for the voices this node has (nil when a test injected a narrator of its own).
    var narrator: SpeechNarrator? = nil
    /// The story library (`APIHandler+Stories`): the store's, when it keeps one.
    var library: (any StoryLibrary)? = nil
    /// The classes (`APIHandler+Classes`): the store's, when it keeps them.
    var classes: (any ClassBook)? = nil
    /// How names are told apart, for class names and children's names.
    var lookalikes: (any ConfusableSkeleton)? = nil
    /// The most WebSockets the transport accepts: the configured figure, or less under the open-file limit.
    var maxConnections: Int? = nil

    enum Authority: Comparable {
        case dashboard, teacher, admin
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let path = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if let response = await handleStories(path, request) { return response }
        if let response = await handleClasses(path, request) { return response }
        switch path {
        case ["healthz"]:
            return await only(.get, request) { await health() }
        case ["metrics"]:
            return await only(.get, request) { await prometheus() }
        case ["api", "rooms"]:
            switch request.method {
            case .post: return await createRoom(request)
            case .get, .head: return await listRooms(request)
            default: return methodNotAllowed("GET, HEAD, POST")
            }
        case let parts where parts.count == 3 && parts[0] == "api" && parts[1] == "rooms":
            return await only(.get, request) { await status(code: parts[2], request) }
        case let parts where parts.count == 4 && parts[0] == "api" && parts[1] == "rooms" && parts[3] == "commands":
            return await only(.post, request) { await command(code: parts[2], request) }
        case let parts where parts.count == 4 && parts[0] == "api" && parts[1] == "rooms" && parts[3] == "results":
            return await only(.get, request) { await results(code: parts[2], request) }
        case let parts where parts.count == 4 && parts[0] == "api" && parts[1] == "rooms" && parts[3] == "qr.svg" && qrCodes:
            return await only(.get, request) { await qrCode(code: parts[2], request) }
        case let parts where parts == ["api", "pictures"] || (parts.count == 2 && parts[0] == "pictures"):
            return await pictureRoute(parts, request)
        case let parts where parts.count == 2 && parts[0] == "audio":
            guard let audio else { return notFound() }
            return await only(.get, request) { audio.response(for: parts[1], ifNoneMatch: request.headers["if-none-match"]) }
        default:
            return notFound()
        }
    }

    // MARK: - Routes

    /// 200 `ok` while the store can write; 503 `degraded`, with the store's reason, while it cannot (a
    /// load balancer or a monitor sees at once that answers are not being stored).
    private func health() async -> HTTPResponse {
        struct Health: Encodable {
            var status: String
            var reason: String?
            var failingSince: ServerTime?
            var version = StoryCircleVersion.current
            var rooms: Int
            var connections: Int
            var uptimeSeconds: Int
            /// Every voice this node can read with, as stories name them: in a cluster every node
            /// should list the same.
            var voices: [String]?
            var naturalVoice: NaturalVoiceHealth?
        }
        struct NaturalVoiceHealth: Encodable {
            var state: String
            var pid: Int32?
            var launches: Int
            var failures: Int
            var lastProblem: String?
        }
        let connections = transportMetrics?.snapshot.openConnections ?? 0
        var health = Health(status: "ok", rooms: await registry.liveRoomCount, connections: connections, uptimeSeconds: (clock.now() - startedAt) / 1_000)
        if let narrator {
            health.voices = narrator.voices.names
            if let status = narrator.piper?.status {
                health.naturalVoice = NaturalVoiceHealth(state: status.state, pid: status.pid, launches: status.launches, failures: status.failures, lastProblem: status.lastProblem)
            }
        }
        if case .failing(let since, let reason) = store.health {
            health.status = "degraded"
            health.reason = reason
            health.failingSince = since
            return .json(503, health)
        }
        return .json(200, health)
    }

    private func prometheus() async -> HTTPResponse {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ value: Int) {
            lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(type)", "\(name) \(value)"]
        }
        if let transport = transportMetrics?.snapshot {
            metric("storycircle_connections_open", "gauge", "Open WebSocket connections.", transport.openConnections)
            if let maxConnections {
                metric("storycircle_connections_max", "gauge", "The most WebSocket connections accepted at once (maxConnections, lowered to fit the open-file limit).", maxConnections)
            }
            metric("storycircle_connections_total", "counter", "WebSocket connections accepted.", transport.connectionsTotal)
            metric("storycircle_messages_received_total", "counter", "Messages received from clients.", transport.messagesReceived)
            metric("storycircle_messages_sent_total", "counter", "Messages sent to clients.", transport.messagesSent)
            metric("storycircle_bytes_sent_total", "counter", "Message bytes sent to clients.", transport.bytesSent)
            metric("storycircle_protocol_errors_total", "counter", "Connections closed for oversize, binary or flooding messages.", transport.protocolErrors)
            metric("storycircle_slow_clients_dropped_total", "counter", "Connections dropped for falling too far behind.", transport.slowClientsDropped)
            metric("storycircle_upgrades_rejected_total", "counter", "WebSocket upgrades refused (path, origin, capacity).", transport.rejectedUpgrades)
            metric("storycircle_upgrades_rejected_per_address_total", "counter", "WebSocket upgrades refused for maxConnectionsPerAddress.", transport.rejectedPerAddress)
            metric("storycircle_hello_timeouts_total", "counter", "WebSockets closed for saying no hello in time.", transport.helloTimeouts)
            metric("storycircle_http_requests_total", "counter", "Dynamic HTTP requests.", transport.httpRequests)
        }
        var phases: [PhaseName: Int] = [:]
        for room in await registry.liveRooms { phases[await room.phase.name, default: 0] += 1 }
        lines += ["# HELP storycircle_rooms Rooms in memory, by phase.", "# TYPE storycircle_rooms gauge"]
        for phase in [PhaseName.lobby, .preparing, .error, .narrating, .question, .reveal, .finished] {
            lines.append("storycircle_rooms{phase=\"\(phase.rawValue)\"} \(phases[phase] ?? 0)")
        }
        metric("storycircle_storage_healthy", "gauge", "1 while the store can write, 0 while writes fail.", store.health.isOK ? 1 : 0)
        lines += metrics.prometheusLines()
        lines += ProcessStatistics.current().prometheusLines()
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", headers: [("cache-control", "no-store")], body: Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    private func createRoom(_ request: HTTPRequest) async -> HTTPResponse {
        guard authority(of: request, credentials: nil) == .admin else {
            return .error(RoomError(.unauthorized, "Creating a room needs the admin token (Authorization: Bearer …); the server printed where it keeps it."))
        }
        let body: [String: JSONValue]
        switch decodeObject(request.body) {
        case .success(let object): body = object
        case .failure(let error): return .error(error)
        }
        // {"storyId": "..."} (a story of the library), {"story": {...}, "settings": {...}} or the story file itself.
        let story: Story
        var storyID: String?
        var warnings: [ValidationIssue] = []
        if let id = body["storyId"] {
            switch await libraryStory(id) {
            case .refused(let refusal): return refusal
            case .found(let found, let id): (story, storyID) = (found, id)
            }
        } else {
            let storyValue = body["story"] ?? .object(body.filter { $0.key != "settings" })
            let validated = Story.load(json: storyValue)
            guard let valid = validated.value else {
                return .error(RoomError(.invalidStory, "The story has problems: \(validated.errors.map(\.description).joined(separator: "; "))"), extra: ["issues": issuesJSON(validated.issues)])
            }
            story = valid
            warnings = validated.warnings
        }
        var patch: RoomSettingsPatch?
        if let settings = body["settings"] {
            do {
                patch = try JSONDecoder().decode(RoomSettingsPatch.self, from: JSONEncoder().encode(settings))
            } catch {
                return .error(RoomError(.invalidSettings, "The settings are not valid: each one is true/false, a number, or a narration mode (devices, dashboard, off)."))
            }
        }
        var classRoster: ClassRoster?
        if let classID = body["classId"] {
            switch await classForRoom(classID) {
            case .failure(let refusal): return refusal.response
            case .success(let found):
                classRoster = ClassRoster(found)
                patch = found.roomSettings(patch)
            }
        }
        if let refusal = await refusePictures(of: story) { return refusal }
        if let narrator, case .failure(let refusal) = narrator.check(voice: ClassroomServer.voice(of: story, settings: patch)) {
            return .error(refusal.roomError)
        }
        do {
            let created = try await registry.createRoom(story: story, settings: patch, storyID: storyID, classRoster: classRoster)
            return .json(201, CreatedRoomResponse(created, publicURL: publicURL, warnings: warnings.map(\.description)))
        } catch let error as RoomError {
            return .error(error)
        } catch {
            return .error(RoomError(.internalError, "The room could not be stored."))
        }
    }

    private func listRooms(_ request: HTTPRequest) async -> HTTPResponse {
        guard authority(of: request, credentials: nil) == .admin else {
            return .error(RoomError(.unauthorized, "Listing rooms needs the admin token."))
        }
        do {
            return .json(200, ["rooms": try await store.summaries()])
        } catch {
            return .error(RoomError(.internalError, "The rooms could not be read from storage."))
        }
    }

    private func status(code: String, _ request: HTTPRequest) async -> HTTPResponse {
        switch await resolve(code, request, needs: .dashboard) {
        case .failure(let refusal): return refusal
        case .success(let room): return .json(200, await room.report())
        }
    }

    private func command(code: String, _ request: HTTPRequest) async -> HTTPResponse {
        struct Body: Decodable {
            var command: String
            var player: String?
            var member: String?
            var settings: RoomSettingsPatch?
        }
        let room: Room
        switch await resolve(code, request, needs: .teacher) {
        case .failure(let refusal): return refusal
        case .success(let found): room = found
        }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(request.body))
        } catch {
            return .error(RoomError(.invalidMessage, "Send {\"command\": \"next\"} (and \"player\" for kick, \"settings\" for settings)."))
        }
        do {
            let command = try TeacherCommand.named(body.command, player: body.player, settings: body.settings, member: body.member)
            // Answers once the command's records are stored, or 503 if they cannot be (then it did not happen).
            return .json(200, try await room.perform(command))
        } catch {
            return .error(error)
        }
    }

    private func results(code: String, _ request: HTTPRequest) async -> HTTPResponse {
        let results: RoomResults
        let startedAt: ServerTime
        switch await resolve(code, request, needs: .teacher) {
        case .failure(let refusal): return refusal
        case .success(let room):
            results = await room.results()
            startedAt = room.createdAt
        }
        switch request.query["format"] ?? "json" {
        case "json":
            return .json(200, results)
        case "csv":
            // Named after the story and the day the room was played, as a teacher files it.
            let file = CSVFile(naming: [results.title], day: startedAt, text: results.csv())
            return HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8", headers: [("cache-control", "no-store"), ("content-disposition", file.contentDisposition)], body: file.body)
        default:
            return .error(RoomError(.invalidMessage, "format must be json or csv."))
        }
    }

    private func qrCode(code: String, _ request: HTTPRequest) async -> HTTPResponse {
        let room: Room
        switch await resolve(code, request, needs: .dashboard) {
        case .failure(let refusal): return refusal
        case .success(let found): room = found
        }
        let language = await room.report().language
        guard let svg = JoinCode.qrSVG(for: JoinCode.joinURL(publicURL: publicURL, code: code, language: language)) else {
            return .error(RoomError(.internalError, "The QR code could not be drawn."))
        }
        // Not cached: the link in it changes with the room's language, which the teacher may change.
        return HTTPResponse(status: 200, contentType: "image/svg+xml", headers: [("cache-control", "no-store")], body: Array(svg.utf8))
    }

    // MARK: - Helpers

    enum Resolution {
        case success(Room)
        case failure(HTTPResponse)
    }

    /// The room `code` if the request's token grants at least `needs`; a stored room that is not in memory
    /// (finished before a restart, evicted) is loaded, but only for a request that may see it. A wrong
    /// token and a missing room get the same answer, so the API does not tell a guesser which codes exist.
    private func resolve(_ code: String, _ request: HTTPRequest, needs: Authority) async -> Resolution {
        let refusal = HTTPResponse.error(RoomError(.unauthorized, "A valid token for room \(code.prefix(12)) is needed (Authorization: Bearer …)."))
        let found: Room?
        do {
            found = try await registry.findRoom(code) { credentials in
                authority(of: request, credentials: credentials).map { $0 >= needs } ?? false
            }
        } catch is RoomLeaseError {
            return .failure(.error(RoomError(.tryAgain, "Room \(code.prefix(12)) is held by another server just now; try again in a moment.")))
        } catch {
            return .failure(.error(RoomError(.storageUnavailable, "The room cannot be read from storage just now (\(StoreFailure.from(error, record: "archive").reason)).")))
        }
        guard let room = found else {
            return .failure(authority(of: request, credentials: nil) == .admin ? .error(RoomError(.roomNotFound, "There is no room \(code.prefix(12)).", params: ["code": String(code.prefix(12))])) : refusal)
        }
        guard let granted = authority(of: request, credentials: room.credentials), granted >= needs else {
            return .failure(refusal)
        }
        return .success(room)
    }

    func authority(of request: HTTPRequest, credentials: RoomCredentials?) -> Authority? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty else { return nil }
        if RoomCredentials.hash(token) == adminTokenHash { return .admin }
        guard let credentials else { return nil }
        switch credentials.watchRole(for: token) {
        case .teacher?: return .teacher
        case .dashboard?: return .dashboard
        default: return nil
        }
    }

    func decodeObject(_ body: [UInt8]) -> Result<[String: JSONValue], RoomError> {
        guard !body.isEmpty else { return .failure(RoomError(.invalidMessage, "The request needs a JSON body.")) }
        do {
            guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: Data(body)) else {
                return .failure(RoomError(.invalidMessage, "The body must be a JSON object."))
            }
            return .success(object)
        } catch {
            return .failure(RoomError(.invalidJSON, "The body is not valid JSON."))
        }
    }

    func issuesJSON(_ issues: [ValidationIssue]) -> JSONValue {
        .array(issues.map {
            .object([
                "severity": .string($0.severity.rawValue), "path": .string($0.path), "code": .string($0.code.rawValue),
                "params": .object($0.params.mapValues(JSONValue.string)), "message": .string($0.message),
            ])
        })
    }

    func only(_ method: HTTPMethod, _ request: HTTPRequest, _ body: () async -> HTTPResponse) async -> HTTPResponse {
        request.method == method || (method == .get && request.method == .head) ? await body() : methodNotAllowed(method == .get ? "GET, HEAD" : method.rawValue)
    }

    func methodNotAllowed(_ allowed: String) -> HTTPResponse {
        var response = HTTPResponse.error(RoomError(.methodNotAllowed, "Use \(allowed) here."))
        response.headers.append(("allow", allowed))
        return response
    }

    func notFound() -> HTTPResponse {
        .error(RoomError(.notFound, "There is nothing here. Children join at /, dashboards are at /dashboard."))
    }
}

/// The answer to `POST /api/rooms`: everything a teacher needs, shown once.
struct CreatedRoomResponse: Encodable {
    var code: String
    var title: String
    var teacherToken: String
    var dashboardToken: String
    var joinURL: String
    var dashboardURL: String
    var teacherURL: String
    var warnings: [String]

    init(_ room: CreatedRoom, publicURL: String, warnings: [String]) {
        code = room.code
        title = room.title
        teacherToken = room.teacherToken
        dashboardToken = room.dashboardToken
        joinURL = JoinCode.joinURL(publicURL: publicURL, code: room.code, language: room.language)
        dashboardURL = "\(publicURL)/dashboard#room=\(room.code)&token=\(room.dashboardToken)"
        teacherURL = "\(publicURL)/teacher#room=\(room.code)&token=\(room.teacherToken)"
        self.warnings = warnings
    }
}
