import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// The classes' routes (`docs/protocol.md`, "Classes"): `GET|POST /api/classes`, `GET|PUT|DELETE
/// /api/classes/{id}`, its `report` and `results.csv`, and the erasing of one child's data. The admin token
/// may do all; the teacher token of a room of the class may read that class, its report and its CSV.
struct ClassRoutes: RouteCollection {
    var routes: [Route] {
        let refused = Route.Refusal.unauthorized(Self.refusal.error.message)
        return [
            Route(.get, "/api/classes", .teaching, refusal: refused) { try await $0.listClasses($1) },
            Route(.post, "/api/classes", .teaching, refusal: refused) { try await $0.createClass($1) },
            Route(.get, "/api/classes/:id", .classTeacher) { _, request in .json(200, ClassResponse(request.schoolClass!.found)) },
            Route(.put, "/api/classes/:id", .classOwner, refusal: refused) { try await $0.updateClass($1) },
            Route(.delete, "/api/classes/:id", .classOwner, refusal: refused) { try await $0.deleteClass($1) },
            Route(.get, "/api/classes/:id/report", .classTeacher) { try await $0.classReport($1) },
            Route(.get, "/api/classes/:id/results.csv", .classTeacher) { try await $0.classResults($1) },
            Route(.delete, "/api/classes/:id/members/:member/data", .classOwner, refusal: refused) { try await $0.eraseMember($1) },
        ]
    }

    static let refusal = HTTPError(.unauthorized, "Classes need the admin token (Authorization: Bearer …); a room's teacher token reads only its own class.")
    static let noClasses = HTTPError(.notFound, "This server keeps no classes (it runs without a database).")

    static func notFound(_ id: String) -> HTTPError {
        HTTPError(.classNotFound, "There is no class \(id.prefix(64)).", params: ["id": String(id.prefix(64))])
    }
}

extension APIHandler {
    /// The class a `POST /api/rooms` names with `classId`.
    /// A class `principal` may not change is as unknown as a missing one.
    func classForRoom(_ value: JSONValue, for principal: Principal?) async throws -> SchoolClass {
        guard case .string(let id) = value else {
            throw HTTPError(.invalidMessage, "classId must be the id of a class (GET /api/classes lists them).")
        }
        guard let classes else { throw ClassRoutes.noClasses }
        let found: SchoolClass?
        do {
            found = ClassIDs.isWellFormed(id) ? try await classes.schoolClass(id) : nil
        } catch {
            throw ClassRoutes.storeRefusal(error)
        }
        // Nobody proved (never so on an admitted request) may use no class: refused, not let through.
        guard let found, let principal, OwnershipRules.allows(principal, .change, owner: found.owner) else { throw ClassRoutes.notFound(id) }
        return found
    }

    /// The classes and what they tell a name apart by, or 404 on a server without a database.
    private func classBook() throws -> (any ClassBook, any ConfusableSkeleton) {
        guard let classes, let lookalikes else { throw ClassRoutes.noClasses }
        return (classes, lookalikes)
    }

    /// The class book and the well-formed id `:id` (a malformed one is as unknown as a missing one).
    private func classBook(_ request: RouteRequest) throws -> (any ClassBook, any ConfusableSkeleton, String) {
        let (classes, lookalikes) = try classBook()
        let id = request[parameter: "id"]
        guard ClassIDs.isWellFormed(id) else { throw ClassRoutes.notFound(id) }
        return (classes, lookalikes, id)
    }

    // MARK: - Routes

    fileprivate func listClasses(_ request: RouteRequest) async throws -> HTTPResponse {
        let (classes, _) = try classBook()
        let scope = try request.ownerScope
        return try await change { .json(200, ["classes": try await classes.listClasses(scope: scope).map(ClassEntryResponse.init)]) }
    }

    fileprivate func createClass(_ request: RouteRequest) async throws -> HTTPResponse {
        let (classes, lookalikes) = try classBook()
        var draft = try checkedClass(request, lookalikes).draft
        draft.owner = request.newOwner
        return try await change {
            let created = try await classes.createClass(draft)
            return .json(201, ["id": JSONValue.string(created.id), "version": .number(Double(created.version))])
        }
    }

    fileprivate func updateClass(_ request: RouteRequest) async throws -> HTTPResponse {
        let (classes, lookalikes, id) = try classBook(request)
        let checked = try checkedClass(request, lookalikes)
        guard let version = checked.version else {
            throw HTTPError(.invalidMessage, "A change of a class names the version it was based on: {\"version\": 3, \"name\": …, \"children\": […]}.")
        }
        return try await change {
            let updated = try await classes.updateClass(id, to: checked.draft, basedOn: version)
            // Children added since a room of the class started can pick their name in it now.
            await registry.directory.classChanged(ClassRoster(updated))
            return .json(200, ["version": JSONValue.number(Double(updated.version))])
        }
    }

    fileprivate func deleteClass(_ request: RouteRequest) async throws -> HTTPResponse {
        let (classes, _, id) = try classBook(request)
        return try await audited(.deleteClass, target: "class:\(id)", request, schoolID: await schoolOfClass(id, request)) { try await change {
            // Its rooms go with it: those still in memory (finished: the store refuses otherwise) go from
            // there too, so nobody reads a deleted room's results.
            let rooms = try await classes.classRooms(id).map(\.header.code)
            try await classes.deleteClass(id)
            await registry.directory.forgetFinished(rooms)
            return HTTPResponse(status: 204, contentType: "application/json; charset=utf-8", body: [])
        } }
    }

    fileprivate func classReport(_ request: RouteRequest) async throws -> HTTPResponse {
        let (_, lookalikes) = try classBook()
        let (schoolClass, rooms) = request.schoolClass!
        try await audit(.readClassReport, target: "class:\(schoolClass.id)", request, schoolID: schoolClass.owner?.schoolID)
        return .json(200, ClassReport(schoolClass, rooms: rooms, lookalikes: lookalikes))
    }

    fileprivate func classResults(_ request: RouteRequest) async throws -> HTTPResponse {
        let (_, lookalikes) = try classBook()
        let (schoolClass, rooms) = request.schoolClass!
        // `?room=CODE`: one room of the class; a room of another class is as unknown as none.
        let room = request.query["room"]
        if let room, !rooms.contains(where: { $0.header.code == room }) {
            let shown = String(room.prefix(12))
            throw HTTPError(.roomNotFound, "Class \(schoolClass.id) has no room \(shown).", params: ["code": shown])
        }
        try await audit(.exportCSV, target: "class:\(schoolClass.id)", request, schoolID: schoolClass.owner?.schoolID, detail: room.map { "room:\($0)" } ?? "")
        let csv = ClassReport(schoolClass, rooms: rooms, lookalikes: lookalikes).csv(room: room)
        // Named after the class (and the story, for one room) and the day: the room's, or today.
        let played = room.flatMap { code in rooms.first { $0.header.code == code } }
        let file = CSVFile(naming: [schoolClass.name] + (played.map { [$0.header.story.title] } ?? []), day: played?.header.createdAt ?? clock.now(), text: csv)
        return HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8", headers: [("cache-control", "no-store"), ("content-disposition", file.contentDisposition)], body: file.body)
    }

    fileprivate func eraseMember(_ request: RouteRequest) async throws -> HTTPResponse {
        let (classes, _, id) = try classBook(request)
        let member = request[parameter: "member"]
        try await audited(.eraseMember, target: "class:\(id)/member:\(member)", request, schoolID: await schoolOfClass(id, request)) {
            try await change { try await classes.eraseMember(member, ofClass: id) }
        }
        // Once committed the erase is done, whatever follows: the class's rooms (all finished: the store
        // refuses otherwise) may still be in memory with the child in them: they take the store's truth in
        // place, so a podium or results page still open on one shows the child gone.
        await registry.directory.reloadFinishedRooms(ofClass: id)
        return HTTPResponse(status: 204, contentType: "application/json; charset=utf-8", body: [])
    }

    /// A store call, its failures in the API's words.
    private func change<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw ClassRoutes.storeRefusal(error)
        }
    }

    /// The body as a checked class (`ClassRules`), with the version a change is based on.
    private func checkedClass(_ request: RouteRequest, _ lookalikes: any ConfusableSkeleton) throws -> (draft: ClassDraft, version: Int?) {
        let body = try decodeObject(request.body)
        let shape = HTTPError(.invalidMessage, "Send {\"name\": \"Class 1B\", \"children\": [{\"name\": \"Ada\", \"avatar\": \"owl\"}]}.")
        guard case .string(let name)? = body["name"] else { throw shape }
        var children: [ClassRules.RawChild] = []
        switch body["children"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard case .object(let child) = item, case .string(let childName)? = child["name"] else { throw shape }
                var raw = ClassRules.RawChild(name: childName)
                if case .string(let avatar)? = child["avatar"] { raw.avatar = avatar } else if child["avatar"] != nil, child["avatar"] != .null { throw shape }
                if case .string(let id)? = child["id"] { raw.id = id } else if child["id"] != nil, child["id"] != .null { throw shape }
                children.append(raw)
            }
        default: throw shape
        }
        var version: Int?
        if case .number(let number)? = body["version"] { version = Int(exactly: number) }
        var speedPoints: Bool?
        switch body["speedPoints"] {
        case nil, .null?: break
        case .bool(let value)?: speedPoints = value
        default: throw HTTPError(.invalidMessage, "speedPoints is true or false (whether faster answers earn more points in the class's rooms).")
        }
        switch ClassRules.check(name: name, children: children, speedPoints: speedPoints, using: lookalikes) {
        case .success(let draft): return (draft, version)
        case .failure(let refusal): throw ClassRoutes.invalidClass(refusal.problems)
        }
    }
}

extension ClassRoutes {
    static func invalidClass(_ problems: [FieldProblem]) -> HTTPError {
        let summary = problems.prefix(3).map(\.message).joined(separator: " ")
        return HTTPError(.invalidClass, "The class cannot be stored as sent: \(summary)", extra: ["problems": .array(problems.map(\.jsonValue))])
    }

    static func storeRefusal(_ error: any Error) -> HTTPError {
        switch error {
        case ClassBookError.notFound(let id):
            return notFound(id)
        case ClassBookError.conflict(let current):
            return HTTPError(
                RoomError(.versionConflict, "The class was changed (now version \(current.version)) since the version this change was based on; nothing was overwritten.", params: ["version": String(current.version)]),
                extra: ["current": ClassResponse(current).jsonValue]
            )
        case ClassBookError.nameTaken(let name):
            return invalidClass([FieldProblem(path: "name", code: "class_name_taken", params: ["name": name])])
        case ClassBookError.memberNotFound(let id):
            return HTTPError(.memberNotFound, "The class has no child \(id.prefix(64)).", params: ["id": String(id.prefix(64))])
        case ClassBookError.inUse(let id, let rooms):
            return HTTPError(
                RoomError(.classInUse, "Rooms of class \(id) have not finished (\(rooms.joined(separator: ", "))); end them first.", params: ["rooms": rooms.joined(separator: ",")]),
                extra: ["rooms": .array(rooms.map(JSONValue.string))]
            )
        default:
            return HTTPError(.storageUnavailable, "The classes cannot be read or stored just now (\(StoreFailure.from(error, record: "class").reason)).")
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
    var owner: Owner?

    init(_ entry: ClassEntry) {
        id = entry.id
        name = entry.name
        children = entry.children
        version = entry.version
        changedAt = ClassReport.iso8601(entry.changedAt)
        owner = entry.owner
    }
}
