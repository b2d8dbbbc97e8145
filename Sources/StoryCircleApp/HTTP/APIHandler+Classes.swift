import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// The classes' routes (`docs/protocol.md`, "Classes"): `GET|POST /api/classes`, `GET|PUT|DELETE
/// /api/classes/{id}`, its `report` and `results.csv`, and the erasing of one child's data. The admin token
/// may do all; the teacher token of a room of the class may read that class, its report and its CSV.
extension APIHandler {
    /// The answer for a path under `/api/classes`, or nil when the path is not one of them.
    func handleClasses(_ path: [String], _ request: HTTPRequest) async -> HTTPResponse? {
        guard path.count >= 2, path[0] == "api", path[1] == "classes", path.count <= 6 else { return nil }
        guard let classes, let lookalikes else {
            return .error(RoomError(.notFound, "This server keeps no classes (it runs without a database)."))
        }
        let admin = authority(of: request, credentials: nil) == .admin
        if path.count == 2 {
            guard admin else { return classRefusal(request) }
            switch request.method {
            case .get, .head: return await listClasses(classes)
            case .post: return await createClass(classes, lookalikes, request)
            default: return methodNotAllowed("GET, HEAD, POST")
            }
        }
        let id = path[2]
        guard ClassIDs.isWellFormed(id) else { return classNotFound(id) }
        switch Array(path.dropFirst(3)) {
        case []:
            switch request.method {
            case .get, .head:
                return await readable(classes, id, request) { schoolClass, _ in .json(200, ClassResponse(schoolClass)) }
            case .put:
                guard admin else { return classRefusal(request) }
                return await updateClass(classes, lookalikes, id, request)
            case .delete:
                guard admin else { return classRefusal(request) }
                return await change {
                    // Its rooms go with it: those still in memory (finished: the store refuses otherwise) go
                    // from there too, so nobody reads a deleted room's results.
                    let rooms = try await classes.classRooms(id).map(\.header.code)
                    try await classes.deleteClass(id)
                    await registry.forgetFinished(rooms)
                    return HTTPResponse(status: 204, contentType: "application/json; charset=utf-8", body: [])
                }
            default: return methodNotAllowed("GET, HEAD, PUT, DELETE")
            }
        case ["report"]:
            return await only(.get, request) {
                await readable(classes, id, request) { schoolClass, rooms in .json(200, ClassReport(schoolClass, rooms: rooms, lookalikes: lookalikes)) }
            }
        case ["results.csv"]:
            return await only(.get, request) {
                await readable(classes, id, request) { schoolClass, rooms in
                    // `?room=CODE`: one room of the class; a room of another class is as unknown as none.
                    let room = request.query["room"]
                    if let room, !rooms.contains(where: { $0.header.code == room }) {
                        let shown = String(room.prefix(12))
                        return .error(RoomError(.roomNotFound, "Class \(id) has no room \(shown).", params: ["code": shown]))
                    }
                    let csv = ClassReport(schoolClass, rooms: rooms, lookalikes: lookalikes).csv(room: room)
                    // Named after the class (and the story, for one room) and the day: the room's, or today.
                    let played = room.flatMap { code in rooms.first { $0.header.code == code } }
                    let file = CSVFile(
                        naming: [schoolClass.name] + (played.map { [$0.header.story.title] } ?? []), day: played?.header.createdAt ?? clock.now(), text: csv
                    )
                    return HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8", headers: [("cache-control", "no-store"), ("content-disposition", file.contentDisposition)], body: file.body)
                }
            }
        case let rest where rest.count == 3 && rest[0] == "members" && rest[2] == "data":
            guard request.method == .delete else { return methodNotAllowed("DELETE") }
            guard admin else { return classRefusal(request) }
            let erased = await change {
                try await classes.eraseMember(rest[1], ofClass: id)
                return HTTPResponse(status: 204, contentType: "application/json; charset=utf-8", body: [])
            }
            // Once committed the erase is done, whatever follows: the class's rooms (all finished: the store
            // refuses otherwise) may still be in memory with the child in them: they take the store's
            // truth in place, so a podium or results page still open on one shows the child gone.
            if erased.status == 204 { await registry.reloadFinishedRooms(ofClass: id) }
            return erased
        default:
            return notFound()
        }
    }

    /// The class a `POST /api/rooms` names with `classId`.
    func classForRoom(_ value: JSONValue) async -> Result<SchoolClass, HTTPResponseRefusal> {
        guard case .string(let id) = value else {
            return .failure(HTTPResponseRefusal(.error(RoomError(.invalidMessage, "classId must be the id of a class (GET /api/classes lists them)."))))
        }
        guard let classes else {
            return .failure(HTTPResponseRefusal(.error(RoomError(.notFound, "This server keeps no classes (it runs without a database)."))))
        }
        do {
            guard ClassIDs.isWellFormed(id), let found = try await classes.schoolClass(id) else { return .failure(HTTPResponseRefusal(classNotFound(id))) }
            return .success(found)
        } catch {
            return .failure(HTTPResponseRefusal(classStoreRefusal(error)))
        }
    }

    // MARK: - Routes

    private func listClasses(_ classes: any ClassBook) async -> HTTPResponse {
        do {
            return .json(200, ["classes": try await classes.listClasses().map(ClassEntryResponse.init)])
        } catch {
            return classStoreRefusal(error)
        }
    }

    private func createClass(_ classes: any ClassBook, _ lookalikes: any ConfusableSkeleton, _ request: HTTPRequest) async -> HTTPResponse {
        let draft: ClassDraft
        switch checkedClass(request, lookalikes) {
        case .failure(let refusal): return refusal.response
        case .success(let checked): draft = checked.draft
        }
        return await change {
            let created = try await classes.createClass(draft)
            return .json(201, ["id": JSONValue.string(created.id), "version": .number(Double(created.version))])
        }
    }

    private func updateClass(_ classes: any ClassBook, _ lookalikes: any ConfusableSkeleton, _ id: String, _ request: HTTPRequest) async -> HTTPResponse {
        let checked: (draft: ClassDraft, version: Int?)
        switch checkedClass(request, lookalikes) {
        case .failure(let refusal): return refusal.response
        case .success(let found): checked = found
        }
        guard let version = checked.version else {
            return .error(RoomError(.invalidMessage, "A change of a class names the version it was based on: {\"version\": 3, \"name\": …, \"children\": […]}."))
        }
        return await change {
            let updated = try await classes.updateClass(id, to: checked.draft, basedOn: version)
            // Children added since a room of the class started can pick their name in it now.
            await registry.classChanged(ClassRoster(updated))
            return .json(200, ["version": JSONValue.number(Double(updated.version))])
        }
    }

    /// The class if the request may read it: the admin, or the teacher of one of its rooms. A wrong token
    /// and a missing class get the same 401, as for rooms.
    private func readable(_ classes: any ClassBook, _ id: String, _ request: HTTPRequest, _ answer: (SchoolClass, [RoomArchive]) -> HTTPResponse) async -> HTTPResponse {
        do {
            let admin = authority(of: request, credentials: nil) == .admin
            guard let found = try await classes.schoolClass(id) else {
                return admin ? classNotFound(id) : classRefusal(request)
            }
            let rooms = try await classes.classRooms(id)
            guard admin || rooms.contains(where: { authority(of: request, credentials: $0.header.credentials) == .teacher }) else {
                return classRefusal(request)
            }
            return answer(found, rooms)
        } catch {
            return classStoreRefusal(error)
        }
    }

    private func change(_ body: () async throws -> HTTPResponse) async -> HTTPResponse {
        do {
            return try await body()
        } catch {
            return classStoreRefusal(error)
        }
    }

    // MARK: - Helpers

    struct HTTPResponseRefusal: Error {
        var response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    /// The body as a checked class (`ClassRules`), with the version a change is based on.
    private func checkedClass(_ request: HTTPRequest, _ lookalikes: any ConfusableSkeleton) -> Result<(draft: ClassDraft, version: Int?), HTTPResponseRefusal> {
        let body: [String: JSONValue]
        switch decodeObject(request.body) {
        case .success(let object): body = object
        case .failure(let error): return .failure(HTTPResponseRefusal(.error(error)))
        }
        let shape = HTTPResponseRefusal(.error(RoomError(.invalidMessage, "Send {\"name\": \"Class 1B\", \"children\": [{\"name\": \"Ada\", \"avatar\": \"owl\"}]}.")))
        guard case .string(let name)? = body["name"] else { return .failure(shape) }
        var children: [ClassRules.RawChild] = []
        switch body["children"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard case .object(let child) = item, case .string(let childName)? = child["name"] else { return .failure(shape) }
                var raw = ClassRules.RawChild(name: childName)
                if case .string(let avatar)? = child["avatar"] { raw.avatar = avatar } else if child["avatar"] != nil, child["avatar"] != .null { return .failure(shape) }
                if case .string(let id)? = child["id"] { raw.id = id } else if child["id"] != nil, child["id"] != .null { return .failure(shape) }
                children.append(raw)
            }
        default: return .failure(shape)
        }
        var version: Int?
        if case .number(let number)? = body["version"] { version = Int(exactly: number) }
        var speedPoints: Bool?
        switch body["speedPoints"] {
        case nil, .null?: break
        case .bool(let value)?: speedPoints = value
        default: return .failure(HTTPResponseRefusal(.error(RoomError(.invalidMessage, "speedPoints is true or false (whether faster answers earn more points in the class's rooms)."))))
        }
        switch ClassRules.check(name: name, children: children, speedPoints: speedPoints, using: lookalikes) {
        case .success(let draft): return .success((draft, version))
        case .failure(let refusal): return .failure(HTTPResponseRefusal(invalidClass(refusal.problems)))
        }
    }

    private func invalidClass(_ problems: [ClassRules.Problem]) -> HTTPResponse {
        let listed: [JSONValue] = problems.map { problem in
            .object(["path": .string(problem.path), "code": .string(problem.code), "params": .object(problem.params.mapValues(JSONValue.string)), "message": .string(problem.message)])
        }
        let summary = problems.prefix(3).map(\.message).joined(separator: " ")
        return .error(RoomError(.invalidClass, "The class cannot be stored as sent: \(summary)"), extra: ["problems": .array(listed)])
    }

    private func classRefusal(_ request: HTTPRequest) -> HTTPResponse {
        .error(RoomError(.unauthorized, "Classes need the admin token (Authorization: Bearer …); a room's teacher token reads only its own class."))
    }

    private func classNotFound(_ id: String) -> HTTPResponse {
        .error(RoomError(.classNotFound, "There is no class \(id.prefix(64)).", params: ["id": String(id.prefix(64))]))
    }

    private func classStoreRefusal(_ error: any Error) -> HTTPResponse {
        switch error {
        case ClassBookError.notFound(let id):
            return classNotFound(id)
        case ClassBookError.conflict(let current):
            return .error(
                RoomError(.versionConflict, "The class was changed (now version \(current.version)) since the version this change was based on; nothing was overwritten.", params: ["version": String(current.version)]),
                extra: ["current": ClassResponse(current).jsonValue]
            )
        case ClassBookError.nameTaken(let name):
            return invalidClass([ClassRules.Problem(path: "name", code: "class_name_taken", params: ["name": name])])
        case ClassBookError.memberNotFound(let id):
            return .error(RoomError(.memberNotFound, "The class has no child \(id.prefix(64)).", params: ["id": String(id.prefix(64))]))
        case ClassBookError.inUse(let id, let rooms):
            return .error(
                RoomError(.classInUse, "Rooms of class \(id) have not finished (\(rooms.joined(separator: ", "))); end them first.", params: ["rooms": rooms.joined(separator: ",")]),
                extra: ["rooms": .array(rooms.map(JSONValue.string))]
            )
        default:
            return .error(RoomError(.storageUnavailable, "The classes cannot be read or stored just now (\(StoreFailure.from(error, record: "class").reason))."))
        }
    }
}

/// A class as the API answers it.
struct ClassResponse: Encodable {
    struct Child: Encodable {
        var id: String
        var name: String
        var avatar: String
    }

    var id: String
    var name: String
    var version: Int
    var changedAt: String
    var children: [Child]
    var speedPoints: Bool

    init(_ schoolClass: SchoolClass) {
        id = schoolClass.id
        name = schoolClass.name
        version = schoolClass.version
        changedAt = ClassReport.iso8601(schoolClass.changedAt)
        children = schoolClass.members.map { Child(id: $0.id, name: $0.name, avatar: $0.avatar) }
        speedPoints = schoolClass.speedPoints
    }

    var jsonValue: JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: HTTPResponse.jsonEncoder.encode(self))) ?? .null
    }
}

struct ClassEntryResponse: Encodable {
    var id: String
    var name: String
    var children: Int
    var version: Int
    var changedAt: String

    init(_ entry: ClassEntry) {
        id = entry.id
        name = entry.name
        children = entry.children
        version = entry.version
        changedAt = ClassReport.iso8601(entry.changedAt)
    }
}
