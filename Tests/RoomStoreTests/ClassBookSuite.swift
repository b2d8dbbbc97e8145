import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `ClassBook`, held to by every backend alike: classes by version, names unique by their
/// keys, members' ids stable, a child's data erased from every room, and the rooms' retention.
@Suite("Classes, every backend")
struct ClassBookSuite {
    static func book(_ store: any RoomLeases) -> any ClassBook {
        store.offers.classes!
    }

    /// A draft as `ClassRules.check` would make it; the key is the name in lower case (the rules' own
    /// folding is tested in the core).
    static func draft(_ name: String, _ children: [ClassDraft.Child]) -> ClassDraft {
        ClassDraft(name: name, nameKeys: [name.lowercased()], children: children)
    }

    static func child(_ name: String, _ avatar: String = "owl", id: String? = nil) -> ClassDraft.Child {
        ClassDraft.Child(id: id, name: name, avatar: avatar)
    }

    @Test(arguments: Backend.all)
    func aClassIsCreatedReadListedUpdatedAndDeleted(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let created = try await book.createClass(Self.draft("Class 1B", [Self.child("Ada"), Self.child("Bo", "emoji:🦊")]))
        #expect(created.version == 1)
        #expect(created.id.hasPrefix("cls_"))
        #expect(created.members.map(\.name) == ["Ada", "Bo"])
        #expect(created.members.map(\.avatar) == ["owl", "emoji:🦊"])
        #expect(created.members.allSatisfy { $0.id.hasPrefix("mem_") })
        #expect(try await book.schoolClass(created.id) == created)
        #expect(try await book.schoolClass("cls_nothing") == nil)
        #expect(try await book.listClasses() == [created.entry])

        // Ada keeps her id under a corrected name, Bo leaves, Cy is new.
        let ada = created.members[0]
        let updated = try await book.updateClass(created.id, to: Self.draft("Class 1B", [Self.child("Cy", "cat"), Self.child("Adah", "fox", id: ada.id)]), basedOn: 1)
        #expect(updated.version == 2)
        #expect(updated.members.map(\.name) == ["Cy", "Adah"])
        #expect(updated.members[1].id == ada.id)
        #expect(updated.members[1].avatar == "fox")
        #expect(!updated.members.contains { $0.id == created.members[1].id })
        #expect(try await book.listClasses().map(\.children) == [2])

        await #expect(throws: ClassBookError.memberNotFound(id: "mem_unknown")) {
            try await book.updateClass(created.id, to: Self.draft("Class 1B", [Self.child("Zed", id: "mem_unknown")]), basedOn: 2)
        }
        #expect(try await book.schoolClass(created.id) == updated, "a refused update changes nothing")

        try await book.deleteClass(created.id)
        #expect(try await book.schoolClass(created.id) == nil)
        await #expect(throws: ClassBookError.notFound(id: created.id)) { try await book.deleteClass(created.id) }
    }

    @Test(arguments: Backend.all)
    func aClassKeepsItsSpeedPointsOffByDefaultAndAcrossAChangeThatDoesNotSay(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let quiet = try await book.createClass(Self.draft("1A", [Self.child("Ada")]))
        #expect(quiet.speedPoints == false, "off unless the teacher turns it on")
        var racing = Self.draft("1B", [Self.child("Bo")])
        racing.speedPoints = true
        let fast = try await book.createClass(racing)
        #expect(fast.speedPoints == true)
        // A change that does not say keeps it; one that does changes it.
        let renamed = try await book.updateClass(fast.id, to: Self.draft("1B!", [Self.child("Bo", id: fast.members[0].id)]), basedOn: 1)
        #expect(renamed.speedPoints == true)
        var slower = Self.draft("1B!", [Self.child("Bo", id: fast.members[0].id)])
        slower.speedPoints = false
        #expect(try await book.updateClass(fast.id, to: slower, basedOn: 2).speedPoints == false)
        racing.name = "1C"
        racing.nameKeys = ["1c"]
        #expect(try await book.createClass(racing).speedPoints == true)
    }

    /// A database whose classes were stored before the setting existed (schema version 7, whatever steps
    /// came after): they read with it off once the store has migrated it.
    @Test(arguments: Backend.all)
    func aClassStoredBeforeSpeedPointsExistedReadsWithThemOff(_ backend: Backend) async throws {
        let insert = "INSERT INTO classes (id, name, version, created_at, changed_at) VALUES ('cls_before', '1D', 1, 0, 0)"
        let store: any RoomLeases
        let cleanUp: () -> Void
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-suite-\(UUID().uuidString)")
            cleanUp = { try? FileManager.default.removeItem(at: folder) }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("rooms.sqlite").path
            let database = try SQLiteDatabase(path: path)
            try Migrations.migrate(database, to: 7, now: 0)
            try database.execute(insert)
            store = try SQLiteRoomStore(path: path)
        case .postgres:
            let schema = try TestPostgres.freshSchema()
            cleanUp = { schema.drop() }
            let connection = try PostgresConnection(schema.settings.connectionParameters)
            try PostgresMigrations.migrate(connection, to: 7, now: 0)
            try connection.query(insert)
            store = try PostgresRoomStore(schema.settings)
        }
        defer { cleanUp() }
        let read = try await Self.book(store).schoolClass("cls_before")
        await store.close()
        #expect(read?.speedPoints == false)
        #expect(read?.name == "1D")
    }

    @Test(arguments: Backend.all)
    func anEmptyClassIsAClass(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let created = try await book.createClass(Self.draft("Nobody yet", []))
        #expect(try await book.schoolClass(created.id)?.members == [])
        #expect(try await book.listClasses().first?.children == 0)
    }

    @Test(arguments: Backend.all)
    func aStaleUpdateIsRefusedWithTheCurrentClassAndChangesNothing(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let created = try await book.createClass(Self.draft("2A", [Self.child("Ana")]))
        let first = try await book.updateClass(created.id, to: Self.draft("2A", [Self.child("Ana", id: created.members[0].id), Self.child("Ben")]), basedOn: 1)
        await #expect(throws: ClassBookError.conflict(current: first)) {
            try await book.updateClass(created.id, to: Self.draft("2A", []), basedOn: 1)
        }
        await fixture.store.close()
        let reopened = Self.book(try fixture.reopen())
        #expect(try await reopened.schoolClass(created.id) == first, "durable, and the stale save changed nothing")
    }

    @Test(arguments: Backend.all)
    func ofTwoEditorsOfOneVersionExactlyOneWins(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let books = [Self.book(fixture.store), Self.book(try fixture.anotherNode())]
        let created = try await books[0].createClass(Self.draft("3C", [Self.child("Ana")]))
        let outcomes = await withTaskGroup(of: Result<SchoolClass, any Error>.self) { group in
            for editor in 0..<6 {
                group.addTask {
                    do {
                        return .success(try await books[editor % 2].updateClass(created.id, to: Self.draft("3C", [Self.child("Editor \(editor)")]), basedOn: 1))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var all: [Result<SchoolClass, any Error>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let winners = outcomes.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        let stored = try #require(try await books[0].schoolClass(created.id))
        #expect(stored == winners.first)
        for case .failure(let error) in outcomes {
            #expect(error as? ClassBookError == .conflict(current: stored))
        }
    }

    @Test(arguments: Backend.all)
    func aClassNameIsTakenByAnyOfItsKeys(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let first = try await book.createClass(ClassDraft(name: "Ida's class", nameKeys: ["ida's class", "lda's class"], children: []))
        await #expect(throws: ClassBookError.nameTaken(name: "lda's class")) {
            try await book.createClass(ClassDraft(name: "lda's class", nameKeys: ["lda's class"], children: []))
        }
        let second = try await book.createClass(Self.draft("Other", []))
        await #expect(throws: ClassBookError.nameTaken(name: "IDA'S CLASS")) {
            try await book.updateClass(second.id, to: ClassDraft(name: "IDA'S CLASS", nameKeys: ["ida's class"], children: []), basedOn: 1)
        }
        // A class may keep its own name, and the name is free again once its class is gone.
        _ = try await book.updateClass(first.id, to: ClassDraft(name: "Ida's class", nameKeys: ["ida's class", "lda's class"], children: [Self.child("Ana")]), basedOn: 1)
        try await book.deleteClass(first.id)
        _ = try await book.createClass(ClassDraft(name: "lda's class", nameKeys: ["lda's class"], children: []))
        #expect(try await book.listClasses().count == 2)
    }

    /// A class room with two children, one released and back on a new device, and their answers.
    static func playClassRoom(_ store: any RoomStore, code: String, classID: String?, members: [ClassMember], createdAt: Int64 = 1_000) async throws -> [RoomRecord] {
        var header = Sample.header(code, createdAt: createdAt)
        header.classID = classID
        try await store.createRoom(header)
        let records: [RoomRecord] = [
            .playerJoined(PlayerRecord(id: "p1", nickname: members[0].name, tokenHash: RoomCredentials.hash("\(code)-a"), joinedAt: ServerTime(milliseconds: createdAt + 1), member: MemberID(members[0].id))),
            .playerJoined(PlayerRecord(id: "p2", nickname: members[1].name, tokenHash: RoomCredentials.hash("\(code)-b"), joinedAt: ServerTime(milliseconds: createdAt + 2), member: MemberID(members[1].id))),
            .playerReleased(player: "p1", at: ServerTime(milliseconds: createdAt + 3)),
            .playerReclaimed(player: "p1", tokenHash: RoomCredentials.hash("\(code)-a2"), at: ServerTime(milliseconds: createdAt + 4)),
            .phase(PhaseRecord(phase: .question, question: 0, at: ServerTime(milliseconds: createdAt + 5))),
            .answer(AnswerRecord(player: "p1", question: 0, option: 1, receivedAt: ServerTime(milliseconds: createdAt + 6), elapsedMs: 900, correct: true, points: 900)),
            .answer(AnswerRecord(player: "p2", question: 0, option: 0, receivedAt: ServerTime(milliseconds: createdAt + 7), elapsedMs: 1_200, correct: false, points: 0)),
            .playerReleased(player: "p2", at: ServerTime(milliseconds: createdAt + 8)),
        ]
        try await appendAndWait(store, records, room: code)
        return records
    }

    @Test(arguments: Backend.all)
    func aClassRoomKeepsItsClassMembersAndReleasesAfterReopening(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let schoolClass = try await book.createClass(Self.draft("4D", [Self.child("Ada"), Self.child("Bo")]))
        let records = try await Self.playClassRoom(fixture.store, code: "400001", classID: schoolClass.id, members: schoolClass.members)
        await fixture.store.close()

        let reopened = try fixture.reopen()
        let stored = try #require(try await reopened.archive(room: "400001"))
        var expected = RoomArchive(header: { var header = Sample.header("400001"); header.classID = schoolClass.id; return header }())
        for record in records { expected.apply(record) }
        #expect(stored == expected)
        #expect(stored.header.classID == schoolClass.id)
        #expect(stored.players.map(\.member?.rawValue) == schoolClass.members.map(\.id))
        #expect(stored.players[0].tokenHash == RoomCredentials.hash("400001-a2"), "the new device's token")
        #expect(stored.released == ["p2"])
        #expect(stored.releasedTokenHashes == [RoomCredentials.hash("400001-a"), RoomCredentials.hash("400001-b")])
        #expect(try await Self.book(reopened).classRooms(schoolClass.id).map(\.header.code) == ["400001"])
    }

    @Test(arguments: Backend.all)
    func erasingAChildDeletesTheirDataInEveryRoomAndNothingElse(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let schoolClass = try await book.createClass(Self.draft("5E", [Self.child("Ada"), Self.child("Bo")]))
        let (ada, bo) = (schoolClass.members[0], schoolClass.members[1])
        _ = try await Self.playClassRoom(fixture.store, code: "500001", classID: schoolClass.id, members: schoolClass.members, createdAt: 1_000)
        _ = try await Self.playClassRoom(fixture.store, code: "500002", classID: schoolClass.id, members: schoolClass.members, createdAt: 2_000)

        // Not while a room of the class runs: it holds the child, and would write them back.
        await #expect(throws: ClassBookError.inUse(id: schoolClass.id, rooms: ["500001", "500002"])) { try await book.eraseMember(ada.id, ofClass: schoolClass.id) }
        await #expect(throws: ClassBookError.inUse(id: schoolClass.id, rooms: ["500001", "500002"])) { try await book.deleteClass(schoolClass.id) }
        for code in ["500001", "500002"] {
            try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: code)
        }

        try await book.eraseMember(ada.id, ofClass: schoolClass.id)
        for code in ["500001", "500002"] {
            let archive = try #require(try await fixture.store.archive(room: code))
            #expect(archive.players.map(\.member?.rawValue) == [bo.id])
            #expect(archive.answers.map(\.player) == ["p2"])
            #expect(archive.releasedTokenHashes == [RoomCredentials.hash("\(code)-b")])
        }
        #expect(try await book.schoolClass(schoolClass.id)?.members == [bo])
        await #expect(throws: ClassBookError.memberNotFound(id: ada.id)) { try await book.eraseMember(ada.id, ofClass: schoolClass.id) }
        if let path = fixture.sqlitePath {
            // Nothing of hers anywhere in the file's tables.
            let database = try SQLiteDatabase(path: path, readOnly: true)
            #expect(try database.integer("SELECT count(*) FROM players WHERE member_id = ? OR nickname = 'Ada'", .text(ada.id)) == 0)
            #expect(try database.integer("SELECT count(*) FROM class_members WHERE id = ?", .text(ada.id)) == 0)
            #expect(try database.integer("SELECT count(*) FROM answers WHERE player_id = 'p1'") == 0)
        }

        // A child taken out of the class earlier can still be erased: their rooms still have them.
        // An erase is a change of the class: its version moves, so a node holding its rooms sees it.
        let erased = try #require(try await book.schoolClass(schoolClass.id))
        #expect(erased.version == schoolClass.version + 1)
        _ = try await book.updateClass(schoolClass.id, to: Self.draft("5E", []), basedOn: erased.version)
        try await book.eraseMember(bo.id, ofClass: schoolClass.id)
        #expect(try await fixture.store.archive(room: "500001")?.players == [])
        // A member of another class is not this class's to erase.
        let other = try await book.createClass(Self.draft("6F", [Self.child("Cy")]))
        await #expect(throws: ClassBookError.memberNotFound(id: other.members[0].id)) { try await book.eraseMember(other.members[0].id, ofClass: schoolClass.id) }
    }

    @Test(arguments: Backend.all)
    func deletingAClassDeletesItsRoomsAndLeavesNoLinkToItsChildren(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let schoolClass = try await book.createClass(Self.draft("8H", [Self.child("Ada"), Self.child("Bo")]))
        let other = try await book.createClass(Self.draft("9I", [Self.child("Cy"), Self.child("Di")]))
        _ = try await Self.playClassRoom(fixture.store, code: "800001", classID: schoolClass.id, members: schoolClass.members, createdAt: 1_000)
        _ = try await Self.playClassRoom(fixture.store, code: "800002", classID: schoolClass.id, members: schoolClass.members, createdAt: 2_000)
        // A room of another class that (as an old room may) links players to this class's members.
        _ = try await Self.playClassRoom(fixture.store, code: "900001", classID: other.id, members: schoolClass.members, createdAt: 3_000)
        try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: "800001")

        await #expect(throws: ClassBookError.inUse(id: schoolClass.id, rooms: ["800002"])) { try await book.deleteClass(schoolClass.id) }
        #expect(try await fixture.store.archive(room: "800001") != nil, "a refused deletion deletes nothing")
        #expect(try await book.schoolClass(schoolClass.id) == schoolClass)

        try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_500)))], room: "800002")
        try await book.deleteClass(schoolClass.id)
        #expect(try await book.schoolClass(schoolClass.id) == nil)
        #expect(try await book.classRooms(schoolClass.id).isEmpty)
        #expect(try await fixture.store.archive(room: "800001") == nil)
        #expect(try await fixture.store.archive(room: "800002") == nil)
        let kept = try #require(try await fixture.store.archive(room: "900001"))
        #expect(kept.players.map(\.nickname) == ["Ada", "Bo"], "another class's room keeps its results")
        #expect(kept.players.map(\.member) == [nil, nil], "no player keeps a member id of the deleted class")
        #expect(try await book.schoolClass(other.id) == other)
        if let path = fixture.sqlitePath {
            let database = try SQLiteDatabase(path: path, readOnly: true)
            #expect(try database.integer("SELECT count(*) FROM players WHERE room_code LIKE '8%'") == 0)
            #expect(try database.integer("SELECT count(*) FROM answers WHERE room_code LIKE '8%'") == 0)
            #expect(try database.integer("SELECT count(*) FROM players WHERE member_id IS NOT NULL AND room_code = '900001'") == 0)
        }
    }

    @Test(arguments: Backend.all)
    func theRetentionPeriodTakesAClassesRoomsAndLeavesTheClass(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let schoolClass = try await book.createClass(Self.draft("7G", [Self.child("Ada"), Self.child("Bo")]))
        _ = try await Self.playClassRoom(fixture.store, code: "700001", classID: schoolClass.id, members: schoolClass.members, createdAt: 1_000)
        _ = try await Self.playClassRoom(fixture.store, code: "700002", classID: schoolClass.id, members: schoolClass.members, createdAt: 50_000)
        #expect(try await book.classRooms(schoolClass.id).map(\.header.code) == ["700002", "700001"], "newest first")
        #expect(try await fixture.store.purge(createdBefore: ServerTime(milliseconds: 10_000)) == 1)
        #expect(try await book.classRooms(schoolClass.id).map(\.header.code) == ["700002"])
        #expect(try await book.schoolClass(schoolClass.id) == schoolClass, "the class and its children stay")
    }
}
