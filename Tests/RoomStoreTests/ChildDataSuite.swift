import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `ChildDataBook`, on every backend: one child's data read whole, a typed nickname erased
/// from a finished room (and refused, changing nothing, from a running one), a room deleted early, the
/// retention of removed members and unused classes, and, in SQLite, the erased bytes in none of the files.
@Suite("A child's data, every backend")
struct ChildDataSuite {
    /// A nickname no other test data contains, to look for in the database's files.
    static let nickname = "Zyxwquartz-7Q"

    static func book(_ store: any RoomStore) -> any ChildDataBook {
        store.offers.childData!
    }

    /// A typed-nickname room: `nickname` (p1) joins, answers, leaves; Bo (p2) joins, answers and is kicked.
    static func playRoom(_ store: any RoomStore, code: String, finished: Bool) async throws {
        try await store.createRoom(Sample.header(code))
        var records: [RoomRecord] = [
            .playerJoined(PlayerRecord(id: "p1", nickname: nickname, tokenHash: RoomCredentials.hash("\(code)-z"), joinedAt: ServerTime(milliseconds: 2_000))),
            .playerJoined(PlayerRecord(id: "p2", nickname: "Bo", tokenHash: RoomCredentials.hash("\(code)-b"), joinedAt: ServerTime(milliseconds: 2_100))),
            .phase(PhaseRecord(phase: .question, question: 0, at: ServerTime(milliseconds: 4_000))),
            .answer(AnswerRecord(player: "p1", question: 0, option: 1, receivedAt: ServerTime(milliseconds: 4_500), elapsedMs: 480, correct: true, points: 1_000)),
            .answer(AnswerRecord(player: "p2", question: 0, option: 0, receivedAt: ServerTime(milliseconds: 4_600), elapsedMs: 580, correct: false, points: 0)),
            .playerLeft(player: "p1", at: ServerTime(milliseconds: 4_700)),
            .playerBlocked(player: "p2", at: ServerTime(milliseconds: 4_800)),
        ]
        if finished { records.append(.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))) }
        try await appendAndWait(store, records, room: code)
    }

    @Test(arguments: Backend.all)
    func aTypedNicknameIsExportedWholeThenErasedFromAFinishedRoomOnly(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        try await Self.playRoom(fixture.store, code: "610001", finished: false)

        let data = try #require(try await book.playerData("p1", inRoom: "610001"))
        #expect(data.member == nil)
        let room = try #require(data.rooms.first)
        #expect(data.rooms.count == 1)
        #expect(room.room == "610001" && room.story.title == "Test Story" && room.roomPhase == .question && room.classID == nil)
        #expect(room.nickname == Self.nickname && room.player == "p1" && room.joinedAt == ServerTime(milliseconds: 2_000))
        #expect(room.leftAt == ServerTime(milliseconds: 4_700) && room.kickedAt == nil && !room.blocked && room.releasedAt == nil)
        #expect(room.answers == [AnswerRecord(player: "p1", question: 0, option: 1, receivedAt: ServerTime(milliseconds: 4_500), elapsedMs: 480, correct: true, points: 1_000)])
        let bo = try #require(try await book.playerData("p2", inRoom: "610001")?.rooms.first)
        #expect(bo.kickedAt == ServerTime(milliseconds: 4_800) && bo.blocked && bo.answers.map(\.option) == [0])
        #expect(try await book.playerData("p9", inRoom: "610001") == nil)
        #expect(try await book.playerData("p1", inRoom: "999999") == nil)

        // Running: the room holds the child in memory, and would write them back.
        let before = try await fixture.store.archive(room: "610001")
        await #expect(throws: ChildDataError.roomRunning(room: "610001")) { try await book.erasePlayer("p1", inRoom: "610001") }
        await #expect(throws: ChildDataError.roomRunning(room: "610001")) { try await book.deleteRoom("610001") }
        #expect(try await fixture.store.archive(room: "610001") == before, "a refused erasure changes nothing")

        try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: "610001")
        await #expect(throws: ChildDataError.notFound(room: "610001", player: "p9")) { try await book.erasePlayer("p9", inRoom: "610001") }
        await #expect(throws: ChildDataError.notFound(room: "999999", player: nil)) { try await book.erasePlayer("p1", inRoom: "999999") }
        try await book.erasePlayer("p1", inRoom: "610001")
        #expect(try await book.playerData("p1", inRoom: "610001") == nil)
        let archive = try #require(try await fixture.store.archive(room: "610001"))
        #expect(archive.players.map(\.nickname) == ["Bo"], "the other child stays")
        #expect(archive.answers.map(\.player) == ["p2"])
        await #expect(throws: ChildDataError.notFound(room: "610001", player: "p1")) { try await book.erasePlayer("p1", inRoom: "610001") }
    }

    @Test func anErasedNicknameIsInNoneOfTheSQLiteFiles() async throws {
        let fixture = try StoreFixture(.sqlite)
        defer { fixture.close() }
        let path = try #require(fixture.sqlitePath)
        let book = Self.book(fixture.store)
        try await Self.playRoom(fixture.store, code: "620001", finished: true)
        // The test can fail: before the erasure the name is in the files.
        #expect(Self.filesHolding(Self.nickname, beside: path) != [])

        try await book.erasePlayer("p1", inRoom: "620001")
        #expect(Self.filesHolding(Self.nickname, beside: path) == [], "no page of the database or its log keeps the erased name")
        #expect(Self.filesHolding("Bo", beside: path).contains(path), "the other child is still stored")
    }

    @Test func aDeletedRoomAndAnErasedMemberAreInNoneOfTheSQLiteFiles() async throws {
        let fixture = try StoreFixture(.sqlite)
        defer { fixture.close() }
        let path = try #require(fixture.sqlitePath)
        try await Self.playRoom(fixture.store, code: "630001", finished: true)
        try await Self.book(fixture.store).deleteRoom("630001")
        #expect(Self.filesHolding(Self.nickname, beside: path) == [])

        let classes = fixture.store.offers.classes!
        let schoolClass = try await classes.createClass(ClassBookSuite.draft("7G", [ClassBookSuite.child(Self.nickname), ClassBookSuite.child("Bo")]))
        _ = try await ClassBookSuite.playClassRoom(fixture.store, code: "630002", classID: schoolClass.id, members: schoolClass.members)
        try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: "630002")
        #expect(Self.filesHolding(Self.nickname, beside: path) != [])
        try await classes.eraseMember(schoolClass.members[0].id, ofClass: schoolClass.id)
        #expect(Self.filesHolding(Self.nickname, beside: path) == [])
    }

    @Test(arguments: Backend.all)
    func aClassMembersDataSpansTheClassesRoomsAndTheMemberRecord(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let classes = fixture.store.offers.classes!
        let schoolClass = try await classes.createClass(ClassBookSuite.draft("3C", [ClassBookSuite.child("Ada", "fox"), ClassBookSuite.child("Bo")]))
        let ada = schoolClass.members[0]
        _ = try await ClassBookSuite.playClassRoom(fixture.store, code: "640001", classID: schoolClass.id, members: schoolClass.members, createdAt: 1_000)
        _ = try await ClassBookSuite.playClassRoom(fixture.store, code: "640002", classID: schoolClass.id, members: schoolClass.members, createdAt: 2_000)
        // A room without the class, where a child typed the same name: not the member's.
        try await Self.playRoom(fixture.store, code: "640003", finished: true)

        let data = try await book.memberData(ada.id, ofClass: schoolClass.id)
        #expect(data.member == ChildData.Membership(classID: schoolClass.id, className: "3C", memberID: ada.id, name: "Ada", avatar: "fox", removedAt: nil))
        #expect(data.rooms.map(\.room) == ["640001", "640002"], "every room of the class, oldest first")
        #expect(data.rooms.allSatisfy { $0.member == MemberID(ada.id) && $0.classID == schoolClass.id && $0.answers.map(\.points) == [900] })
        // Released, then reclaimed: one old resume token kept as a hash, and no release pending.
        #expect(data.rooms.map(\.releasedTokens) == [1, 1])
        #expect(data.rooms.allSatisfy { $0.releasedAt == nil })
        let bo = try await book.memberData(schoolClass.members[1].id, ofClass: schoolClass.id)
        #expect(bo.rooms.allSatisfy { $0.releasedAt != nil })

        await #expect(throws: ClassBookError.memberNotFound(id: "mem_nobody")) { try await book.memberData("mem_nobody", ofClass: schoolClass.id) }
        await #expect(throws: ClassBookError.notFound(id: "cls_nothing")) { try await book.memberData(ada.id, ofClass: "cls_nothing") }

        // Taken out of the class: still exported, with the day they left it.
        let updated = try await classes.updateClass(schoolClass.id, to: ClassBookSuite.draft("3C", [ClassBookSuite.child("Bo", id: schoolClass.members[1].id)]), basedOn: 1)
        let removed = try await book.memberData(ada.id, ofClass: schoolClass.id)
        #expect(removed.member?.removedAt != nil && removed.rooms.count == 2)
        for code in ["640001", "640002"] {
            try await appendAndWait(fixture.store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: code)
        }
        try await classes.eraseMember(ada.id, ofClass: updated.id)
        await #expect(throws: ClassBookError.memberNotFound(id: ada.id)) { try await book.memberData(ada.id, ofClass: schoolClass.id) }
    }

    @Test(arguments: Backend.all)
    func aRoomIsDeletedEarlyOnlyOnceFinished(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        try await Self.playRoom(fixture.store, code: "650001", finished: false)
        try await Self.playRoom(fixture.store, code: "650002", finished: true)
        await #expect(throws: ChildDataError.roomRunning(room: "650001")) { try await book.deleteRoom("650001") }
        try await book.deleteRoom("650002")
        #expect(try await fixture.store.archive(room: "650002") == nil)
        #expect(try await book.playerData("p1", inRoom: "650002") == nil)
        #expect(try await fixture.store.archive(room: "650001") != nil)
        await #expect(throws: ChildDataError.notFound(room: "650002", player: nil)) { try await book.deleteRoom("650002") }
    }

    @Test(arguments: Backend.all)
    func removedMembersAndUnusedClassesGoAtTheEndOfTheirRetention(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let classes = fixture.store.offers.classes!
        let kept = try await Self.classWithAdaTakenOut(fixture.store, rooms: [("660001", ofClass: true)])
        let now = PostgresRoomStore.now()

        // Ada was taken out just now: not yet; and not while a room of the class runs.
        #expect(try await book.purgeRemovedMembers(removedBefore: now + -60_000) == 0)
        #expect(try await book.purgeRemovedMembers(removedBefore: now + 60_000) == 0, "a running room of the class holds her")
        try await Self.finish(fixture.store, "660001")
        #expect(try await book.purgeRemovedMembers(removedBefore: now + 60_000) == 1)
        await #expect(throws: ClassBookError.memberNotFound(id: kept.members[0].id)) { try await book.memberData(kept.members[0].id, ofClass: kept.id) }
        #expect(try await fixture.store.archive(room: "660001")?.players.map(\.nickname) == ["Bo"])

        // A class changed or used since the cutoff stays; one neither goes, with its (old) rooms.
        #expect(try await book.purgeClasses(unusedSince: now + -60_000) == 0)
        let fresh = try await classes.createClass(ClassBookSuite.draft("2B", [ClassBookSuite.child("Cy")]))
        var header = Sample.header("660002", createdAt: (now + 120_000).milliseconds)
        header.classID = fresh.id
        try await fixture.store.createRoom(header)
        try await Self.finish(fixture.store, "660002")
        #expect(try await book.purgeClasses(unusedSince: now + 60_000) == 1, "2B has a room created after the cutoff")
        #expect(try await classes.schoolClass(kept.id) == nil)
        #expect(try await fixture.store.archive(room: "660001") == nil)
        #expect(try await classes.schoolClass(fresh.id) != nil)
    }

    /// A removed member's players go from every room they are in, and their answers and released resume
    /// tokens with them, also in a room that is not of their class: none outlives its player.
    @Test(arguments: Backend.all)
    func aPurgedMemberLeavesNoAnswersOrTokensBehindInAnyRoom(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        _ = try await Self.classWithAdaTakenOut(fixture.store, rooms: [("680001", ofClass: true), ("680002", ofClass: false)])
        for code in ["680001", "680002"] { try await Self.finish(fixture.store, code) }
        #expect(try fixture.rows(in: "released_tokens", room: "680002") == 2, "Ada's and Bo's")

        #expect(try await book.purgeRemovedMembers(removedBefore: PostgresRoomStore.now() + 60_000) == 1)
        for code in ["680001", "680002"] {
            #expect(try fixture.rows(in: "players", room: code) == 1, "Bo stays in \(code)")
            #expect(try fixture.rows(in: "answers", room: code) == 1, "only Bo's answer is left in \(code)")
            #expect(try fixture.rows(in: "released_tokens", room: code) == 1, "only Bo's released token is left in \(code)")
            #expect(try await fixture.store.archive(room: code)?.answers.map(\.player) == [PlayerID("p2")])
        }
    }

    @Test(arguments: Backend.all)
    func unusedStoriesAndUnnamedPicturesGoOnlyWhenAsked(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let book = Self.book(fixture.store)
        let library = fixture.store.offers.library!
        let pictures = fixture.store.offers.pictures!
        let named = PictureStoreSuite.picture(seed: 1, count: 4_096, phone: false)
        let inRoom = PictureStoreSuite.picture(seed: 2, count: 4_096, phone: false)
        let unnamed = PictureStoreSuite.picture(seed: 3, count: 4_096, phone: false)
        for picture in [named, inRoom, unnamed] { try await pictures.storePicture(picture) }
        var pictured = Sample.story
        pictured.sentencePictures = [PictureReference(source: .stored(id: named.id), alt: "a gear"), nil]
        let kept = try await library.createStory(pictured, by: "test")
        let idle = try await library.createStory(Sample.story, by: "test")
        let running = try await library.createStory(Sample.story, by: "test")
        var header = Sample.header("670001")
        header.storyID = running.entry.id
        header.story.sentencePictures = [PictureReference(source: .stored(id: inRoom.id), alt: "a key"), nil]
        try await fixture.store.createRoom(header)
        let now = PostgresRoomStore.now()

        #expect(try await book.purgeStories(unusedSince: now + -60_000) == 0, "changed since the cutoff")
        #expect(try await book.purgePictures(storedBefore: ServerTime(milliseconds: 1_000)) == 0, "stored since the cutoff")
        #expect(try await book.purgePictures(storedBefore: now) == 1, "the picture nothing names")
        #expect(try await pictures.storedPictureIDs(among: [named.id, inRoom.id, unnamed.id]) == [named.id, inRoom.id])
        #expect(try await book.purgeStories(unusedSince: now + 60_000) == 2, "all but the one a running room was started from")
        #expect(try await library.story(running.entry.id) != nil)
        #expect(try await library.story(kept.entry.id) == nil)
        #expect(try await library.story(idle.entry.id) == nil)
        #expect(try await book.purgePictures(storedBefore: now) == 1, "its story gone, the picture goes; the room's stays")
        #expect(try await pictures.storedPictureIDs(among: [named.id, inRoom.id]) == [inRoom.id])
    }

    /// Class 1A with Ada and Bo, who played in `rooms` (of the class, or of no class), then Ada taken out.
    static func classWithAdaTakenOut(_ store: any RoomLeases, rooms: [(code: String, ofClass: Bool)]) async throws -> SchoolClass {
        let classes = store.offers.classes!
        let made = try await classes.createClass(ClassBookSuite.draft("1A", [ClassBookSuite.child("Ada"), ClassBookSuite.child("Bo")]))
        for room in rooms {
            _ = try await ClassBookSuite.playClassRoom(store, code: room.code, classID: room.ofClass ? made.id : nil, members: made.members)
        }
        _ = try await classes.updateClass(made.id, to: ClassBookSuite.draft("1A", [ClassBookSuite.child("Bo", id: made.members[1].id)]), basedOn: 1)
        return made
    }

    static func finish(_ store: any RoomStore, _ code: String) async throws {
        try await appendAndWait(store, [.phase(PhaseRecord(phase: .finished, at: ServerTime(milliseconds: 9_000)))], room: code)
    }

    /// The database and its -wal and -shm files that hold `text`'s bytes.
    static func filesHolding(_ text: String, beside path: String) -> [String] {
        let needle = Data(text.utf8)
        return [path, path + "-wal", path + "-shm"].filter { file in
            guard let contents = FileManager.default.contents(atPath: file) else { return false }
            return contents.range(of: needle) != nil
        }
    }
}
