import Foundation
import Testing
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting
@testable import SQLiteStorage
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer
@testable import StoryCircleServerTesting

/// The story library's routes in process, over a real SQLite store (the pytest suite drives the same
/// routes over sockets, with the real voices).
@Suite("HTTP API: the story library")
struct StoryLibraryAPITests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-library-api-\(UUID().uuidString)")

    private func handler(library: Bool = true) throws -> (APIHandler, SQLiteRoomStore, RoomRegistry) {
        let store = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
        let clock = ManualClock()
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: store, clock: clock)
        let api = APIHandler(
            registry: registry, store: store, clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true, library: library ? store : nil,
            pictures: store
        )
        return (api, store, registry)
    }

    private func request(_ api: APIHandler, _ method: HTTPMethod, _ path: String, token: String? = "admin-token", body: String = "", query: [String: String] = [:]) async -> (Int, [String: Any]) {
        let response = await api.handle(.testRequest(method: method, path: path, query: query, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:], body: Array(body.utf8)))
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status.code, object)
    }

    private static let story = #"{"title": "Kite", "text": "Kim had a kite. It flew.", "quiz": {"question": "What flew?", "options": ["A kite", "A cat"], "answer": "A kite"}}"#

    private static func code(_ object: [String: Any]) -> String? {
        (object["error"] as? [String: Any])?["code"] as? String
    }

    @Test func aRoomsTokenIsRefusedWith403AndNoTokenWith401() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        let room = try await registry.directory.createRoom(story: ServerFixtures.story)
        for (method, path) in [(HTTPMethod.get, "/api/stories"), (.post, "/api/stories"), (.post, "/api/stories/validate"), (.delete, "/api/stories/abc")] {
            let (status, body) = await request(api, method, path, token: room.teacherToken, body: Self.story)
            #expect(status == 403 && Self.code(body) == "wrong_role", "\(method) \(path)")
            #expect(await request(api, method, path, token: nil, body: Self.story).0 == 401)
        }
        #expect(await request(api, .patch, "/api/stories/abc").0 == 405)
    }

    @Test func withoutALibraryTheRoutesSaySo() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler(library: false)
        defer { Task { await registry.shutDown(); await store.close() } }
        let (status, body) = await request(api, .get, "/api/stories")
        #expect(status == 404 && Self.code(body) == "not_found")
        // Checking a story and listing the voices need no stored stories.
        let (validated, report) = await request(api, .post, "/api/stories/validate", body: #"{"story": \#(Self.story)}"#)
        #expect(validated == 200 && (report["issues"] as? [Any])?.isEmpty == true, "\(report)")
        let (listed, voices) = await request(api, .get, "/api/stories/voices")
        #expect(listed == 200 && voices["voices"] is [Any])
        // This handler has no narrator: listen says so, not that there is no library.
        let (listened, refused) = await request(api, .post, "/api/stories/listen", body: #"{"text": "Hello."}"#)
        #expect(listened == 404 && !((refused["error"] as? [String: Any])?["message"] as? String ?? "").contains("library"), "\(refused)")
    }

    @Test func aRoomFromALibraryStoryRemembersItAndKeepsItFromBeingDeleted() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        let (created, body) = await request(api, .post, "/api/stories", body: Self.story)
        #expect(created == 201)
        let id = try #require(body["id"] as? String)

        let (stale, refused) = await request(api, .put, "/api/stories/\(id)", body: #"{"story": \#(Self.story), "version": 7}"#)
        #expect(stale == 409 && Self.code(refused) == "story_conflict")
        #expect(((refused["error"] as? [String: Any])?["current"] as? [String: Any])?["version"] as? Int == 1)

        let (roomStatus, room) = await request(api, .post, "/api/rooms", body: #"{"storyId": "\#(id)"}"#)
        #expect(roomStatus == 201)
        let code = try #require(room["code"] as? String)
        #expect(try await store.archive(room: code)?.header.storyID == id)
        let (inUse, refusal) = await request(api, .delete, "/api/stories/\(id)")
        #expect(inUse == 409 && Self.code(refusal) == "story_in_use")
        #expect((refusal["error"] as? [String: Any])?["rooms"] as? [String] == [code])
        #expect(await request(api, .post, "/api/rooms", body: #"{"storyId": "Not An Id!"}"#).0 == 400)
        #expect(await request(api, .post, "/api/rooms", body: #"{"storyId": "abcdef"}"#).0 == 404)
    }

    private static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/stories").path

    @Test func aSeededPictureSampleHoldsStoredPicturesAndStartsARoomByItsId() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        await SampleStories.seed(store, pictures: store, from: Self.samples, logger: StoryCircleLog(label: "test", minimumLevel: .error), now: ServerTime(milliseconds: 1))
        let (_, listed) = await request(api, .get, "/api/stories")
        let olive = try #require((listed["stories"] as? [[String: Any]])?.first { ($0["title"] as? String) == "Olive the Owl" })
        let id = try #require(olive["id"] as? String)
        let stored = try #require(try await store.story(id))
        #expect(!stored.story.pictureReferences.isEmpty)
        #expect(stored.story.pictureReferences.allSatisfy { $0.storedID != nil })
        let (status, room) = await request(api, .post, "/api/rooms", body: #"{"storyId": "\#(id)"}"#)
        #expect(status == 201, "\(room)")
    }

    @Test func aStoryNamingPictureFilesIsRefusedAtEachFieldAndNothingIsSaved() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (api, store, registry) = try handler()
        defer { Task { await registry.shutDown(); await store.close() } }
        let pictured = #"{"title": "Kite", "text": [{"text": "Kim had a kite.", "picture": {"file": "kite.png", "alt": "A kite"}}, "It flew."], "quiz": {"question": "What flew?", "options": [{"label": "A kite", "picture": {"file": "../kite.png"}}, {"label": "A cat", "picture": {"file": "cat.png"}}], "answer": "A kite"}}"#
        let (status, body) = await request(api, .post, "/api/stories", body: pictured)
        #expect(status == 422 && Self.code(body) == "invalid_story", "\(body)")
        let issues = try #require((body["error"] as? [String: Any])?["issues"] as? [[String: Any]])
        #expect(issues.compactMap { $0["path"] as? String } == ["text[0].picture.file", "quiz.options[0].picture.file", "quiz.options[1].picture.file"])
        #expect(issues.allSatisfy { ($0["message"] as? String)?.contains("story push") == true })
        #expect(try await store.listStories(matching: nil, after: nil, limit: 10).stories.isEmpty)

        let (created, saved) = await request(api, .post, "/api/stories", body: Self.story)
        #expect(created == 201)
        let id = try #require(saved["id"] as? String)
        let (updated, refusal) = await request(api, .put, "/api/stories/\(id)", body: #"{"story": \#(pictured), "version": 1}"#)
        #expect(updated == 422 && Self.code(refusal) == "invalid_story")
        #expect(try await store.story(id)?.entry.version == 1)
    }
}
