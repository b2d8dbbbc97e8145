import Foundation
import Testing
import TransportCore
@testable import SQLiteStorage
@testable import StoryCircleApp
@testable import StoryCircleCore

/// `GET|PUT /api/schools/:id/retention`: the form's numbers (the school's choices, the defaults, the bounds),
/// a change stored whole and recorded old → new, and every value out of its bounds refused with the bounds
/// in the answer, changing nothing. Who may ask is the authorization matrix's (`AuthorizationMatrixTests`).
@Suite("HTTP API: a school's retention rules")
struct RetentionRoutesTests {
    typealias World = AuthorizationMatrixTests.World

    static func json(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    @Test func aSchoolAdministratorReadsAndChangesTheirSchoolsRulesAndTheChangeIsAudited() async throws {
        let world = try await World()
        defer { world.close() }
        let school = try #require(world.a.schoolID)
        let path = "/api/schools/\(school)/retention"
        // The world's accounts are in memory; a school's rules name a school of the store's own table.
        _ = try await world.store.createSchool(name: "North", id: school)

        let shown = Self.json(await world.ask(.schoolAdminA, .get, path))
        #expect((shown["retention"] as? [String: Any])?["rooms"] is NSNull, "nothing chosen: the default")
        #expect((shown["defaults"] as? [String: Any])?["rooms"] as? Int == 30)
        #expect((shown["defaults"] as? [String: Any])?["audit"] as? Int == 400)
        #expect(((shown["bounds"] as? [String: Any])?["audit"] as? [String: Any])?["min"] as? Int == 365)
        #expect(((shown["bounds"] as? [String: Any])?["classes"] as? [String: Any])?["keep"] as? Bool == true)

        let changed = await world.ask(.schoolAdminA, .put, path, body: #"{"rooms": 7, "classes": 0, "audit": null}"#)
        #expect(changed.status == 200)
        #expect((Self.json(changed)["retention"] as? [String: Any])?["rooms"] as? Int == 7)
        #expect(try await world.store.schoolRetentions() == [school: SchoolRetention([.rooms: 7, .classes: 0])])
        let again = await world.ask(.districtAdmin, .put, path, body: #"{"pictures": 90}"#)
        #expect(again.status == 200, "the district's administrator may too")

        let rows = try await world.store.entries(AuditQuery(action: .retentionChanged)).entries.map(\.event).reversed()
        #expect(rows.map(\.detail) == ["defaults → rooms=7 classes=0", "rooms=7 classes=0 → pictures=90"])
        #expect(rows.map(\.schoolID) == [school, school] && rows.map(\.target) == ["school:\(school)", "school:\(school)"])
        #expect(rows.map(\.actor.login) == ["n", "d"])
    }

    @Test(arguments: [
        (#"{"audit": 30}"#, "audit", "365"), (#"{"rooms": 0}"#, "rooms", "1"), (#"{"stories": 3651}"#, "stories", "1"),
        (#"{"pictures": 1.5}"#, "pictures", "1"), (#"{"classes": "30"}"#, "classes", "1"), (#"{"removed_members": -1}"#, "removed_members", "1"),
    ])
    func aValueOutOfItsBoundsIsRefusedWithTheBoundsAndChangesNothing(_ body: String, _ kind: String, _ min: String) async throws {
        let world = try await World()
        defer { world.close() }
        let path = "/api/schools/\(try #require(world.a.schoolID))/retention"
        let refused = await world.ask(.schoolAdminA, .put, path, body: body)
        #expect(refused.status == 400)
        let error = Self.json(refused)["error"] as? [String: Any]
        #expect(error?["code"] as? String == "invalid_settings")
        #expect((error?["params"] as? [String: String])?["kind"] == kind && (error?["params"] as? [String: String])?["min"] == min)
        #expect(try await world.store.schoolRetentions().isEmpty)
        #expect(try await world.store.entries(AuditQuery(action: .retentionChanged)).entries.isEmpty, "nothing done, nothing recorded")
    }

    @Test func anUnknownRuleOrAMissingSchoolIsRefused() async throws {
        let world = try await World()
        defer { world.close() }
        let path = "/api/schools/\(try #require(world.a.schoolID))/retention"
        let unknown = await world.ask(.districtAdmin, .put, path, body: #"{"children": 1}"#)
        #expect(unknown.status == 400 && World.code(unknown) == "invalid_settings")
        let missing = await world.ask(.districtAdmin, .get, "/api/schools/sch_nowhere/retention")
        #expect(missing.status == 404 && World.code(missing) == "school_not_found")
        let tooLarge = await world.ask(.districtAdmin, .put, path, body: "{" + String(repeating: " ", count: 2_000) + "}")
        #expect(tooLarge.status == 413)
    }
}
