import Foundation
import StoryCircleCore
import StoryCircleServer
import TransportCore

/// The router's check of a route's `Authority`, before its handler runs: the admin token is compared at
/// once; a room or class authority finds the room or class the token must belong to, and hands it on.
extension APIHandler {
    func admit(_ route: Route, _ request: HTTPRequest, parameters: [String: String]) async throws -> RouteRequest {
        var admitted = RouteRequest(http: request, parameters: parameters)
        let token = Self.bearerToken(request)
        let isAdmin = token.map { RoomCredentials.hash($0) == adminTokenHash } ?? false
        switch route.authority {
        case .none:
            break
        case .admin:
            guard isAdmin else { throw route.refusal.error(hasToken: request.headers["authorization"] != nil) }
        case .teacher, .dashboard:
            admitted.room = try await room(parameters["code"] ?? "", token: token, isAdmin: isAdmin, needs: route.authority)
        case .classTeacher:
            admitted.schoolClass = try await schoolClass(parameters["id"] ?? "", token: token, isAdmin: isAdmin)
        }
        return admitted
    }

    /// The token of `Authorization: Bearer …`, if any.
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The room `code` if the token is its teacher's (or, for `.dashboard`, its dashboard's) or the admin's.
    /// A stored room that is not in memory (finished before a restart, evicted) is loaded, but only for a
    /// request that may see it. A wrong token and a missing room get the same answer, so the API does not
    /// tell a guesser which codes exist.
    private func room(_ code: String, token: String?, isAdmin: Bool, needs: Authority) async throws -> Room {
        let shown = String(code.prefix(12))
        let refusal = HTTPError(.unauthorized, "A valid token for room \(shown) is needed (Authorization: Bearer …).")
        guard let token else { throw refusal }
        let admits: @Sendable (RoomCredentials) -> Bool = { credentials in
            if isAdmin { return true }
            switch credentials.watchRole(for: token) {
            case .teacher?: return true
            case .dashboard?: return needs == .dashboard
            default: return false
            }
        }
        let found: Room?
        do {
            found = try await registry.directory.findRoom(code, admitting: admits)
        } catch is RoomLeaseError {
            throw HTTPError(.tryAgain, "Room \(shown) is held by another server just now; try again in a moment.")
        } catch {
            throw HTTPError(.storageUnavailable, "The room cannot be read from storage just now (\(StoreFailure.from(error, record: "archive").reason)).")
        }
        guard let room = found else {
            throw isAdmin ? HTTPError(.roomNotFound, "There is no room \(shown).", params: ["code": shown]) : refusal
        }
        guard admits(room.credentials) else { throw refusal }
        return room
    }

    /// The class `id` and its rooms if the token is the admin's or the teacher's of one of its rooms. A wrong
    /// token and a missing class get the same 401, as for rooms.
    private func schoolClass(_ id: String, token: String?, isAdmin: Bool) async throws -> (found: SchoolClass, rooms: [RoomArchive]) {
        guard let classes else { throw ClassRoutes.noClasses }
        let refusal = ClassRoutes.refusal
        guard isAdmin || token != nil else { throw refusal }
        guard ClassIDs.isWellFormed(id) else { throw isAdmin ? ClassRoutes.notFound(id) : refusal }
        do {
            guard let found = try await classes.schoolClass(id) else { throw isAdmin ? ClassRoutes.notFound(id) : refusal }
            let rooms = try await classes.classRooms(id)
            guard isAdmin || rooms.contains(where: { $0.header.credentials.watchRole(for: token ?? "") == .teacher }) else { throw refusal }
            return (found, rooms)
        } catch let error as HTTPError {
            throw error
        } catch {
            throw ClassRoutes.storeRefusal(error)
        }
    }
}

extension Route.Refusal {
    func error(hasToken: Bool) -> HTTPError {
        switch self {
        case .standard:
            HTTPError(.unauthorized, "This needs the admin token (Authorization: Bearer …); the server printed where it keeps it.")
        case .unauthorized(let message):
            HTTPError(.unauthorized, message)
        case .adminOnly(let unauthorized, let wrongRole):
            hasToken ? HTTPError(.wrongRole, wrongRole) : HTTPError(.unauthorized, unauthorized)
        }
    }
}
