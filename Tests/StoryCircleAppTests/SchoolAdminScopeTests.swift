import Foundation
import Testing
import TransportCore
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer

/// A school administrator manages the teacher accounts of their own school and reads its audit rows; the
/// district administrator keeps everything; the rows of a room's or a class's children's data carry the
/// school, so they can be read by it; and a room an administrator starts from a teacher's class is the
/// teacher's. On the authorization matrix's world: teachers A and B and administrator N in North, teacher C
/// and administrator S in South, district administrator D.
@Suite("HTTP API: a school administrator's reach")
struct SchoolAdminScopeTests {
    typealias World = AuthorizationMatrixTests.World

    private func json(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// A GET with a query string, as `asker`'s signed-in browser sends it (`World.ask` sends none).
    private func get(_ world: World, _ asker: AuthorizationMatrixTests.Asker, _ path: String, query: [String: String]) async throws -> HTTPResponse {
        let account = try #require(world.people[asker])
        let (token, _) = try #require(try await world.sessions.start(account, method: "password"))
        return await world.api.handle(.testRequest(method: .get, path: path, query: query, headers: ["cookie": "storycircle_session=\(token)"]))
    }

    private func logins(_ world: World, _ asker: AuthorizationMatrixTests.Asker, _ path: String = "/api/accounts") async throws -> [String] {
        let listed = await world.ask(asker, .get, path)
        #expect(listed.status == 200, "\(asker): \(listed.status)")
        return try #require(try json(listed)["accounts"] as? [[String: Any]]).compactMap { $0["login"] as? String }
    }

    @Test func aSchoolAdministratorManagesTheTeachersOfTheirSchoolAndNothingElse() async throws {
        let world = try await World()
        defer { world.close() }
        let (a, c) = (world.a, try #require(world.people[.teacherC]))
        let (north, south) = (try #require(a.schoolID), try #require(c.schoolID))
        let n = try #require(world.people[.schoolAdminA]), s = try #require(world.people[.schoolAdminOther])

        #expect(try await logins(world, .schoolAdminA) == ["a", "b", "n"])
        #expect(try await logins(world, .schoolAdminOther) == ["c", "s"])
        #expect(try await logins(world, .districtAdmin) == ["a", "b", "c", "d", "n", "s"])
        #expect(try await get(world, .schoolAdminA, "/api/accounts", query: ["school": south]).status == 403)

        // A teacher of their school, the school filled in; nothing above a teacher, nothing elsewhere.
        let made = await world.ask(.schoolAdminA, .post, "/api/accounts", body: #"{"login": "tess", "displayName": "Tess", "role": "teacher"}"#)
        #expect(made.status == 201)
        #expect(try json(made)["schoolID"] as? String == north)
        for body in [
            #"{"login": "dan", "displayName": "Dan", "role": "district_admin"}"#, #"{"login": "dan", "displayName": "Dan", "role": "school_admin"}"#,
            #"{"login": "dan", "displayName": "Dan", "role": "teacher", "schoolID": "\#(south)"}"#,
        ] {
            let refused = await world.ask(.schoolAdminA, .post, "/api/accounts", body: body)
            #expect(refused.status == 403, "\(body)")
        }
        #expect(try await world.api.accounts?.account(login: "dan") == nil)

        // Another school's accounts are as unknown as none; their own school's administrator is not theirs to change.
        for (id, status) in [(c.id, 404), (s.id, 404), (n.id, 403)] {
            #expect(await world.ask(.schoolAdminA, .patch, "/api/accounts/\(id)", body: #"{"version": 1, "disabled": true}"#).status.code == status)
            #expect(await world.ask(.schoolAdminA, .post, "/api/accounts/\(id)/reset").status.code == status)
        }
        #expect(await world.ask(.schoolAdminA, .get, "/api/accounts/\(c.id)").status == 404)
        #expect(await world.ask(.schoolAdminOther, .patch, "/api/accounts/\(a.id)", body: #"{"version": 1, "disabled": true}"#).status == 404)
        #expect(try await world.api.accounts?.account(id: c.id)?.disabled == false)
        #expect(try await world.api.accounts?.account(id: a.id)?.disabled == false)

        // Their teacher: changed and reset, never moved away or raised.
        #expect(await world.ask(.schoolAdminA, .get, "/api/accounts/\(a.id)").status == 200)
        #expect(await world.ask(.schoolAdminA, .patch, "/api/accounts/\(a.id)", body: #"{"version": 1, "schoolID": "\#(south)"}"#).status == 403)
        #expect(await world.ask(.schoolAdminA, .patch, "/api/accounts/\(a.id)", body: #"{"version": 1, "role": "district_admin"}"#).status == 403)
        #expect(await world.ask(.schoolAdminA, .patch, "/api/accounts/\(a.id)", body: #"{"version": 1, "displayName": "Ana"}"#).status == 200)
        #expect(await world.ask(.schoolAdminA, .post, "/api/accounts/\(a.id)/reset").status == 200)
        let stored = try #require(try await world.api.accounts?.account(id: a.id))
        #expect(stored.schoolID == north && stored.role == .teacher && stored.displayName == "Ana")

        // The district administrator keeps everything.
        #expect(await world.ask(.districtAdmin, .patch, "/api/accounts/\(c.id)", body: #"{"version": 1, "role": "school_admin"}"#).status == 200)
    }

    @Test func aSchoolAdministratorReadsTheRowsOfTheirSchoolAndChildrensDataRowsCarryTheirSchool() async throws {
        let world = try await World()
        defer { world.close() }
        let north = try #require(world.a.schoolID)
        #expect(await world.ask(.teacherA, .get, "/api/rooms/\(world.room.code)/results").status == 200)
        #expect(await world.ask(.teacherA, .get, "/api/classes/\(world.schoolClass.id)/report").status == 200)
        #expect(await world.ask(.adminToken, .get, "/api/classes/\(world.schoolClass.id)/results.csv").status == 200)
        #expect(await world.ask(.adminToken, .get, "/api/classes/\(world.schoolClass.id)/members/mem_nobody/data").status == 404)
        let rows = try await world.store.entries(AuditQuery()).entries.filter { [.readRoomResults, .readClassReport, .exportCSV].contains($0.event.action) }
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0.event.schoolID == north }, "\(rows.map(\.event.schoolID))")

        func actions(_ asker: AuthorizationMatrixTests.Asker, _ query: [String: String] = [:]) async throws -> [String] {
            let page = asker == .adminToken ? await world.ask(asker, .get, "/api/audit") : try await get(world, asker, "/api/audit", query: query)
            #expect(page.status == 200, "\(asker): \(page.status) \(String(decoding: page.body, as: UTF8.self))")
            let entries = try #require(try json(page)["entries"] as? [[String: Any]])
            return entries.compactMap { $0["action"] as? String }
        }
        let seen = try await actions(.schoolAdminA)
        #expect(["read_room_results", "read_class_report", "export_csv"].allSatisfy(seen.contains))
        #expect(try await actions(.schoolAdminOther).isEmpty, "another school's rows are not theirs")
        #expect(try await actions(.schoolAdminOther, ["school": north]).isEmpty, "whatever they ask for")
        #expect(try await actions(.districtAdmin).count >= 3)
        #expect(await world.ask(.teacherA, .get, "/api/audit").status == 403)
    }

    @Test func aRoomAnAdministratorStartsFromATeachersClassIsTheTeachers() async throws {
        let world = try await World()
        defer { world.close() }
        for asker in [AuthorizationMatrixTests.Asker.schoolAdminA, .adminToken] {
            let made = await world.ask(asker, .post, "/api/rooms", body: #"{"storyId": "\#(world.story.entry.id)", "classId": "\#(world.schoolClass.id)"}"#)
            #expect(made.status == 201, "\(asker): \(String(decoding: made.body, as: UTF8.self))")
            let code = try #require(try json(made)["code"] as? String)
            #expect(try await world.store.archive(room: code)?.header.owner == Owner(world.a), "\(asker)")
            let listed = try #require(try json(await world.ask(.teacherA, .get, "/api/rooms"))["rooms"] as? [[String: Any]])
            #expect(listed.contains { $0["code"] as? String == code }, "in the teacher's list")
        }
    }

    @Test func aTeacherMovedToAnotherSchoolLeavesWhatTheyMadeWithTheSchoolTheyLeft() async throws {
        let world = try await World()
        defer { world.close() }
        let south = try #require(world.people[.teacherC]?.schoolID)
        let moved = await world.ask(.districtAdmin, .patch, "/api/accounts/\(world.a.id)", body: #"{"version": 1, "schoolID": "\#(south)"}"#)
        #expect(moved.status == 200)
        // Signed in again as the account is now: North's class, room and story are no longer theirs.
        let account = try #require(try await world.api.accounts?.account(id: world.a.id))
        let (token, record) = try #require(try await world.sessions.start(account, method: "password"))
        func ask(_ method: HTTPMethod, _ path: String) async -> HTTPResponse {
            await world.api.handle(.testRequest(method: method, path: path, headers: ["cookie": "storycircle_session=\(token)", "x-csrf-token": record.csrfToken]))
        }
        #expect(await ask(.get, "/api/classes/\(world.schoolClass.id)/report").status == 401)
        #expect(await ask(.get, "/api/rooms/\(world.room.code)/results").status == 401)
        #expect(await ask(.get, "/api/stories/\(world.story.entry.id)").status == 404)
        let classes = try #require(try json(await ask(.get, "/api/classes"))["classes"] as? [[String: Any]])
        #expect(classes.isEmpty)
        // North's administrator keeps them.
        #expect(await world.ask(.schoolAdminA, .get, "/api/classes/\(world.schoolClass.id)/report").status == 200)
        #expect(await world.ask(.schoolAdminA, .get, "/api/rooms/\(world.room.code)/results").status == 200)
    }
}
