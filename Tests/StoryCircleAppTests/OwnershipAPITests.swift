import Foundation
import Locking
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import SQLiteStorage
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer
@testable import StoryCircleServerTesting

/// `account adopt` and story sharing over the API in process, on a real SQLite store; the accounts come
/// from a book of fixed accounts (the accounts' own store is tested in its suite).
@Suite("HTTP API: ownership")
struct OwnershipAPITests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-ownership-api-\(UUID().uuidString)")

    static let ada = Account(id: "acc_ada", login: "ada", displayName: "Ada", role: .teacher, schoolID: "sch_north", createdAt: ServerTime(milliseconds: 1))
    static let district = Account(id: "acc_dee", login: "dee", displayName: "Dee", role: .districtAdmin, schoolID: nil, createdAt: ServerTime(milliseconds: 1))

    private func handler() throws -> (APIHandler, SQLiteRoomStore, RoomRegistry) {
        let store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
        let clock = ManualClock()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        let api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true, library: store, classes: store, pictures: store,
            lookalikes: LookalikeTable(), accounts: FixedAccounts([Self.ada, Self.district]), ownership: store
        )
        return (api, store, registry)
    }

    private func request(_ api: APIHandler, _ method: HTTPMethod, _ path: String, token: String? = "admin-token", body: String = "") async -> (Int, [String: Any]) {
        let response = await api.handle(.testRequest(method: method, path: path, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:], body: Array(body.utf8)))
        return (response.status.code, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:])
    }

    @Test func adoptNamesTheOwnerOfWhatWasStoredBeforeAccountsOnce() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        let made = try await store.createClass(ClassDraft(name: "1B", nameKeys: ["1b"], children: []))
        let story = try await store.createStory(ServerFixtures.story, by: "admin")
        _ = try await registry.directory.createRoom(story: ServerFixtures.story)

        // Refused without the admin token, before anything is read.
        #expect(await request(api, .post, "/api/accounts/ada/adopt", token: nil).0 == 401)
        let (status, body) = await request(api, .post, "/api/accounts/ada/adopt")
        #expect(status == 200, "\(body)")
        #expect(body["account"] as? String == "acc_ada")
        #expect((body["adopted"] as? [String: Int]) == ["classes": 1, "rooms": 1, "stories": 1, "pictures": 0])
        #expect(try await store.schoolClass(made.id)?.owner == Owner(Self.ada))
        #expect(try await store.story(story.entry.id)?.entry.owner == Owner(Self.ada))
        #expect(try await store.summaries(scope: .school("sch_north")).count == 1)

        // By id as well as by login; nothing is left the second time.
        let (again, second) = await request(api, .post, "/api/accounts/acc_ada/adopt")
        #expect(again == 200 && (second["adopted"] as? [String: Int]) == ["classes": 0, "rooms": 0, "stories": 0, "pictures": 0])
        // Nobody by that name; an account without a school cannot own a school's things.
        #expect(await request(api, .post, "/api/accounts/nobody/adopt").0 == 404)
        #expect(await request(api, .post, "/api/accounts/dee/adopt").0 == 400)
    }

    @Test func aStoryIsSharedAndUnsharedByTheAdmin() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        let story = try await store.createStory(ServerFixtures.story, by: "Ada", owner: Owner(Self.ada))
        let (status, body) = await request(api, .put, "/api/stories/\(story.entry.id)/shared", body: #"{"shared": true}"#)
        #expect(status == 200)
        #expect((body["story"] as? [String: Any])?["shared"] as? Bool == true)
        #expect(try await store.listStories(matching: nil, after: nil, limit: 5, scope: .account("acc_bo", schoolID: "sch_north")).stories.count == 1)
        #expect(await request(api, .put, "/api/stories/\(story.entry.id)/shared", body: #"{"shared": "yes"}"#).0 == 400)
        #expect(await request(api, .put, "/api/stories/nothing/shared", body: #"{"shared": false}"#).0 == 404)
        #expect(await request(api, .put, "/api/stories/\(story.entry.id)/shared", body: #"{"shared": false}"#).0 == 200)
        #expect(try await store.story(story.entry.id)?.entry.shared == false)
    }

    /// A room made without anyone proved (never so for an admitted request) gets no class and no story:
    /// the ownership check fails closed instead of reading nobody as the admin token.
    @Test func nobodyProvedUsesNoClassAndNoStoryForARoom() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        let made = try await store.createClass(ClassDraft(name: "1B", nameKeys: ["1b"], children: []))
        let story = try await store.createStory(ServerFixtures.story, by: "admin")
        #expect(try await api.classForRoom(.string(made.id), for: .adminToken).id == made.id)
        #expect(try await api.libraryStory(.string(story.entry.id), for: .adminToken).title == ServerFixtures.story.title)
        await #expect(throws: HTTPError.self) { try await api.classForRoom(.string(made.id), for: nil) }
        await #expect(throws: HTTPError.self) { try await api.libraryStory(.string(story.entry.id), for: nil) }
    }
}

/// Accounts fixed in advance, found by id or login; the rest of the book is not used by these tests.
final class FixedAccounts: AccountBook {
    let accounts: [Account]

    init(_ accounts: [Account]) { self.accounts = accounts }

    struct Unused: Error {}

    func listSchools() async throws -> [School] { [] }
    func school(_ id: String) async throws -> School? { nil }
    func createSchool(name: String, id: String) async throws -> School { throw Unused() }
    func listAccounts(schoolID: String?) async throws -> [Account] { accounts.filter { schoolID == nil || $0.schoolID == schoolID } }
    func account(id: String) async throws -> Account? { accounts.first { $0.id == id } }
    func disabledAccountIDs() async throws -> Set<String> { Set(accounts.filter(\.disabled).map(\.id)) }
    func account(login: String) async throws -> Account? { accounts.first { $0.login == login } }
    func createAccount(_ draft: AccountDraft) async throws -> Account { throw Unused() }
    func updateAccount(_ id: String, _ change: AccountChange, basedOn version: Int) async throws -> Account { throw Unused() }
    func setPasswordHash(_ id: String, _ hash: String?) async throws { throw Unused() }
    func resetAccount(_ id: String, setupCodeHash: String, expiresAt: ServerTime) async throws { throw Unused() }
    func setupCodeAccount(codeHash: String, at now: ServerTime) async throws -> Account? { nil }
    func useSetupCode(codeHash: String, passwordHash: String, at now: ServerTime) async throws -> Account? { nil }
    func createSession(_ session: SessionRecord, ifPasswordHash passwordHash: String?) async throws -> Bool { throw Unused() }
    func session(tokenHash: String, at now: ServerTime) async throws -> (session: SessionRecord, account: Account)? { nil }
    func deleteSession(tokenHash: String) async throws {}
    func deleteSessions(accountID: String) async throws -> Int { 0 }
    func pruneSessions(before now: ServerTime) async throws -> Int { 0 }
    func addPasskey(_ passkey: PasskeyRecord, limit: Int) async throws { throw Unused() }
    func passkeys(accountID: String) async throws -> [PasskeyRecord] { [] }
    func passkey(credentialID: String) async throws -> (passkey: PasskeyRecord, account: Account)? { nil }
    func recordPasskeyUse(credentialID: String, signCount: UInt32, at time: ServerTime) async throws -> Bool { true }
    func deletePasskey(credentialID: String, accountID: String) async throws {}
}
