import Foundation
import Testing
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// The promises of `PictureStore`, on every backend: bytes come back exactly, by id, after a reopen too.
@Suite("Picture store, every backend")
struct PictureStoreSuite {
    /// Every byte value, NUL included, and a megabyte of them: a blob, not text.
    static func picture(seed: UInt8, count: Int = 1_048_576, phone: Bool = true) -> StoredPicture {
        let large = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
        let phoneBytes = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }
        return StoredPicture(
            large: PictureRendition(mimeType: "image/png", width: 1_600, height: 900, bytes: large),
            phone: phone ? PictureRendition(mimeType: "image/png", width: 800, height: 450, bytes: phoneBytes) : nil,
            createdAt: ServerTime(milliseconds: 5_000)
        )
    }

    func pictures(_ fixture: StoreFixture) throws -> any PictureStore {
        try #require(fixture.store.offers.pictures)
    }

    @Test(arguments: Backend.all)
    func aPictureComesBackByteForByteInBothSizes(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = try pictures(fixture)
        let picture = Self.picture(seed: 7)
        #expect(picture.id == SHA256.hex(SHA256.digest(picture.large.bytes)))
        try await store.storePicture(picture)
        #expect(try await store.picture(id: picture.id, size: .large) == picture.large)
        #expect(try await store.picture(id: picture.id, size: .phone) == picture.phone)
        #expect(try await store.picture(id: String(repeating: "0", count: 64), size: .large) == nil)
    }

    @Test(arguments: Backend.all)
    func aSmallPictureAnswersItsOnlySizeForPhones(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = try pictures(fixture)
        let picture = Self.picture(seed: 1, count: 300, phone: false)
        try await store.storePicture(picture)
        #expect(try await store.picture(id: picture.id, size: .phone) == picture.large)
    }

    @Test(arguments: Backend.all)
    func storingTheSamePictureAgainChangesNothingAndIDsAreFound(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = try pictures(fixture)
        let first = Self.picture(seed: 2, count: 1_000)
        let second = Self.picture(seed: 3, count: 1_000)
        try await store.storePicture(first)
        try await store.storePicture(first)
        try await store.storePicture(second)
        let unknown = String(repeating: "ab", count: 32)
        #expect(try await store.storedPictureIDs(among: [first.id, unknown, second.id, first.id]) == [first.id, second.id])
        #expect(try await store.storedPictureIDs(among: []) == [])
    }

    @Test(arguments: Backend.all)
    func picturesOutliveAReopenAndLeaveRoomsAlone(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let picture = Self.picture(seed: 9, count: 200_000)
        try await fixture.store.createRoom(Sample.header("123456"))
        try await pictures(fixture).storePicture(picture)
        try await appendAndWait(fixture.store, Sample.records, room: "123456")
        await fixture.store.close()
        let reopened = try fixture.reopen()
        #expect(try await #require(reopened.offers.pictures).picture(id: picture.id, size: .large) == picture.large)
        #expect(try await reopened.archive(room: "123456") == Sample.expected("123456"))
    }

    @Test(arguments: Backend.all)
    func storingAfterCloseFailsAsUnavailable(_ backend: Backend) async throws {
        let fixture = try StoreFixture(backend)
        defer { fixture.close() }
        let store = try pictures(fixture)
        await fixture.store.close()
        await #expect(throws: StoreFailure.self) { try await store.storePicture(Self.picture(seed: 4, count: 100)) }
    }
}
