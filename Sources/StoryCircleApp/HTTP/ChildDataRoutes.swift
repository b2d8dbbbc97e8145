import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// One child's data on a parent's request (`docs/privacy.md`, `docs/protocol.md` "A child's data"): exported
/// as JSON or CSV, then erased; and a room deleted before its retention period ends. A class member's data
/// needs the admin token (it spans every room of the class, as `DELETE …/members/:member/data` does); a
/// nickname typed in a room, and the room itself, the room's teacher token or the admin token.
struct ChildDataRoutes: RouteCollection {
    var routes: [Route] {
        let refused = Route.Refusal.unauthorized(ClassRoutes.refusal.error.message)
        return [
            Route(.get, "/api/classes/:id/members/:member/data", .classOwner, refusal: refused) { try await $0.exportMember($1) },
            Route(.get, "/api/rooms/:code/players/:player/data", .teacher) { try await $0.exportPlayer($1) },
            Route(.delete, "/api/rooms/:code/players/:player/data", .teacher) { try await $0.erasePlayer($1) },
            Route(.delete, "/api/rooms/:code", .teacher) { try await $0.deleteRoom($1) },
        ]
    }

    static let noData = HTTPError(.notFound, "This server keeps no children's data (it runs without a database): nothing to export or erase.")

    static func running(_ code: String) -> HTTPError {
        let shown = String(code.prefix(12))
        return HTTPError(
            .roomInUse, "Room \(shown) has not finished: it still holds its children in memory. End it first ({\"command\": \"end\"}), then try again.",
            params: ["code": shown]
        )
    }

    static func playerNotFound(_ code: String, _ player: String) -> HTTPError {
        HTTPError(.playerNotFound, "Room \(code.prefix(12)) has no player \(player.prefix(64)) (the room's results list its players' ids).", params: ["player": String(player.prefix(64))])
    }

    /// A store's refusal or failure in the API's words.
    static func storeRefusal(_ error: any Error) -> HTTPError {
        switch error {
        case let error as HTTPError: error
        case ChildDataError.roomRunning(let code): running(code)
        case ChildDataError.notFound(let code, let player?): playerNotFound(code, player)
        case ChildDataError.notFound(let code, nil): HTTPError(.roomNotFound, "There is no room \(code.prefix(12)).", params: ["code": String(code.prefix(12))])
        case is ClassBookError: ClassRoutes.storeRefusal(error)
        default: HTTPError(.storageUnavailable, "The store cannot be read or changed just now (\(StoreFailure.from(error, record: "erasure").reason)); nothing was erased.")
        }
    }
}

extension APIHandler {
    private func childDataBook() throws -> any ChildDataBook {
        guard let childData else { throw ChildDataRoutes.noData }
        return childData
    }

    /// `?format=json` (the default) or `csv`.
    private func exportFormat(_ request: RouteRequest) throws -> String {
        let format = request.query["format"] ?? "json"
        guard format == "json" || format == "csv" else { throw HTTPError(.invalidMessage, "format must be json or csv.") }
        return format
    }

    /// A player id as rooms make them (`p1`, `p2`, …): anything else is as unknown as a missing one.
    private static func isPlayerID(_ text: String) -> Bool {
        text.count <= 16 && text.first == "p" && text.dropFirst().allSatisfy(\.isASCII) && text.dropFirst().allSatisfy(\.isNumber) && text.count > 1
    }

    fileprivate func exportMember(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try childDataBook()
        let id = request[parameter: "id"]
        let member = request[parameter: "member"]
        let format = try exportFormat(request)
        guard ClassIDs.isWellFormed(id) else { throw ClassRoutes.notFound(id) }
        do {
            let data = try await book.memberData(member, ofClass: id)
            let name = data.member?.name ?? data.rooms.first?.nickname ?? member
            // Recorded once found, before anything is answered: an export that cannot be recorded is refused.
            try await audit(.exportChild, target: "class:\(id)/member:\(member)", request, schoolID: await schoolOfClass(id, request), detail: format)
            return export(ChildDataExport(data, at: clock.now()), format: format, naming: [name, data.member?.className ?? ""])
        } catch {
            throw ChildDataRoutes.storeRefusal(error)
        }
    }

    fileprivate func exportPlayer(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try childDataBook()
        let code = request[parameter: "code"]
        let player = request[parameter: "player"]
        let format = try exportFormat(request)
        guard Self.isPlayerID(player) else { throw ChildDataRoutes.playerNotFound(code, player) }
        let found: ChildData?
        do {
            found = try await book.playerData(player, inRoom: code)
        } catch {
            throw ChildDataRoutes.storeRefusal(error)
        }
        guard let data = found else { throw ChildDataRoutes.playerNotFound(code, player) }
        try await audit(.exportChild, target: "room:\(code)/player:\(player)", request, schoolID: request.room?.owner?.schoolID, detail: format)
        return export(ChildDataExport(data, at: clock.now()), format: format, naming: [data.rooms.first?.nickname ?? player, code])
    }

    private func export(_ export: ChildDataExport, format: String, naming: [String]) -> HTTPResponse {
        let file = CSVFile(naming: naming + ["data"], day: clock.now(), text: export.csv())
        guard format == "csv" else {
            var response = HTTPResponse.json(200, export)
            response.headers.append(("cache-control", "no-store"))
            return response
        }
        return HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8", headers: [("cache-control", "no-store"), ("content-disposition", file.contentDisposition)], body: file.body)
    }

    fileprivate func erasePlayer(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try childDataBook()
        let room = request.room!
        let code = request[parameter: "code"]
        let player = request[parameter: "player"]
        guard Self.isPlayerID(player) else { throw ChildDataRoutes.playerNotFound(code, player) }
        // The room in memory holds the child while it runs, and would write them back: refused before the
        // store is asked (which refuses too, for a room not in memory here).
        guard await room.phase.name == .finished else { throw ChildDataRoutes.running(code) }
        try await audited(.eraseChild, target: "room:\(code)/player:\(player)", request, schoolID: room.owner?.schoolID) {
            do {
                try await book.erasePlayer(player, inRoom: code)
            } catch {
                throw ChildDataRoutes.storeRefusal(error)
            }
        }
        // Committed: the finished room in memory takes the store's truth in place, so its podium and
        // results no longer show the child.
        await registry.directory.reloadFinished([code])
        return HTTPResponse(status: 204, contentType: "application/json; charset=utf-8", body: [])
    }

    fileprivate func deleteRoom(_ request: RouteRequest) async throws -> HTTPResponse {
        let book = try childDataBook()
        let room = request.room!
        let code = request[parameter: "code"]
        guard await room.phase.name == .finished else { throw ChildDataRoutes.running(code) }
        try await audited(.deleteRoom, target: "room:\(code)", request, schoolID: room.owner?.schoolID) {
            do {
                try await book.deleteRoom(code)
            } catch {
                throw ChildDataRoutes.storeRefusal(error)
            }
        }
        // Gone from memory too (its connections closed), so nobody reads a deleted room's results. Its
        // audio stays in the cache: sentences of a story, nothing of a child's.
        await registry.directory.forgetFinished([code])
        return HTTPResponse(status: 204, contentType: "application/json; charset=utf-8", body: [])
    }
}
