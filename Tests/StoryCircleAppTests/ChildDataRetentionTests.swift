import Foundation
import Testing
@testable import SQLiteStorage
@testable import StoryCircleApp
@testable import StoryCircleCore

/// The retention settings of classes and their removed members (docs/privacy.md, "For how long"): their
/// defaults never delete a teacher's class, and the sweep applies them to the store.
@Suite("Retention of classes, removed members, stories and pictures")
struct ChildDataRetentionTests {
    @Test func removedMembersGoAfterThirtyDaysAndClassesNeverUnlessConfigured() throws {
        let defaults = try ServerConfiguration.load(file: nil, environment: [:])
        #expect(defaults.storage.removedMemberRetentionDays == 30)
        #expect(defaults.storage.classRetentionDays == 0, "never: a class is a teacher's work")
        #expect(defaults.storage.storyRetentionDays == 0 && defaults.storage.pictureRetentionDays == 0, "never: a teacher's work")
        let set = try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_REMOVED_MEMBER_RETENTION_DAYS": "0", "STORYCIRCLE_CLASS_RETENTION_DAYS": "365"])
        #expect(set.storage.removedMemberRetentionDays == 0 && set.storage.classRetentionDays == 365)
        #expect(performing: { _ = try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_CLASS_RETENTION_DAYS": "-1"]) }, throws: { error in
            String(describing: error).hasSuffix("classRetentionDays, storyRetentionDays and pictureRetentionDays must be 0 (never) or more")
        })
    }

    @Test func theSweepErasesRemovedMembersAndUnusedClassesAsConfigured() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-retention-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
        let made = try await store.createClass(ClassDraft(name: "1A", nameKeys: ["1a"], children: [.init(id: nil, name: "Ada", avatar: "owl"), .init(id: nil, name: "Bo", avatar: "owl")]))
        let bo = made.members[1]
        _ = try await store.updateClass(made.id, to: ClassDraft(name: "1A", nameKeys: ["1a"], children: [.init(id: bo.id, name: "Bo", avatar: "owl")]), basedOn: 1)
        let day: Int64 = 86_400_000
        let now = SQLiteRoomStore.now()
        var storage = ServerConfiguration.Storage()

        await ClassroomServer.sweepClasses(store, at: now + Int(29 * day), storage: storage, logger: nil)
        #expect(try await store.memberData(made.members[0].id, ofClass: made.id).member?.name == "Ada", "not before 30 days")
        await ClassroomServer.sweepClasses(store, at: now + Int(31 * day), storage: storage, logger: nil)
        await #expect(throws: ClassBookError.memberNotFound(id: made.members[0].id)) { try await store.memberData(made.members[0].id, ofClass: made.id) }
        await ClassroomServer.sweepClasses(store, at: now + Int(3_650 * day), storage: storage, logger: nil)
        #expect(try await store.schoolClass(made.id)?.members == [bo], "by default a class is never deleted")

        storage.classRetentionDays = 365
        await ClassroomServer.sweepClasses(store, at: now + Int(300 * day), storage: storage, logger: nil)
        #expect(try await store.schoolClass(made.id) != nil)
        await ClassroomServer.sweepClasses(store, at: now + Int(400 * day), storage: storage, logger: nil)
        #expect(try await store.schoolClass(made.id) == nil)
        await store.close()
    }

    @Test func eachSchoolsRuleAppliesToItsOwnClassesAndEveryDeletionIsAudited() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-retention-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
        let made = { (name: String, school: String?) in
            try await store.createClass(ClassDraft(
                name: name, nameKeys: [name.lowercased()], children: [.init(id: nil, name: "Ada", avatar: "owl")],
                owner: school.map { Owner(accountID: "acc_\($0)", schoolID: $0) }
            ))
        }
        let north = try await made("1A", "sch_north")
        let south = try await made("1B", "sch_south")
        let unowned = try await made("1C", nil)
        let day = 86_400_000
        let now = SQLiteRoomStore.now()
        var storage = ServerConfiguration.Storage()
        storage.classRetentionDays = 365
        let schools = ["sch_north": SchoolRetention([.classes: 30]), "sch_south": SchoolRetention([.classes: 0])]

        await ClassroomServer.sweepClasses(store, at: now + 31 * day, storage: storage, schools: schools, audit: store, logger: nil)
        #expect(try await store.schoolClass(north.id) == nil, "north keeps unused classes 30 days")
        #expect(try await store.schoolClass(south.id) != nil)
        #expect(try await store.schoolClass(unowned.id) != nil)
        await ClassroomServer.sweepClasses(store, at: now + 400 * day, storage: storage, schools: schools, audit: store, logger: nil)
        #expect(try await store.schoolClass(unowned.id) == nil, "the server's 365 days for a class of no school")
        #expect(try await store.schoolClass(south.id) != nil, "south keeps its classes until they are deleted")

        let rows = try await store.entries(AuditQuery(action: .retentionDeleted)).entries.map(\.event).reversed()
        #expect(rows.map(\.schoolID) == ["sch_north", nil])
        #expect(rows.map(\.detail) == ["classes 1", "classes 1"], "the kind and the count, never a child's name")
        #expect(rows.allSatisfy { $0.actor.kind == .retention && $0.address.isEmpty })
        #expect(rows.map(\.at) == [now + 31 * day, now + 400 * day])
        await store.close()
    }
}
