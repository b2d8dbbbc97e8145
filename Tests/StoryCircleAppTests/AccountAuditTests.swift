import Foundation
import Testing
import TransportCore
import WebSocketTransportTesting
@testable import StoryCircleApp
@testable import StoryCircleCore
@testable import StoryCircleServer

/// An audit trail that stores no row (a full disk): what would be recorded is not done.
private final class FullAuditLog: AuditLog {
    func append(_ event: AuditEvent) async throws -> AuditEntry { throw StoreFailure(.unavailable, record: "audit", reason: "database or disk is full") }
    func entries(_ query: AuditQuery) async throws -> AuditPage { AuditPage(entries: [], next: nil) }
    func prune(before cutoff: ServerTime) async throws -> Int { 0 }
}

/// A school or an account is made only with its audit row: the row is written first, under the id the
/// school or account will have, and a trail that cannot store it leaves nothing made.
@Suite("Accounts and schools are made with their audit row")
struct AccountAuditTests {
    let clock = ManualClock()

    private func api(_ book: MemoryAccountBook, _ log: any AuditLog) -> APIHandler {
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport(), store: MemoryRoomStore(), clock: clock)
        return APIHandler(
            registry: registry, store: MemoryRoomStore(), clock: clock, metrics: ServerMetrics(), transportMetrics: nil, adminTokenHash: RoomCredentials.hash("admin-token"),
            publicURL: "https://192.0.2.1:8443", startedAt: clock.now(), audio: nil, qrCodes: true, accounts: book, auditTrail: AuditTrail(log: log)
        )
    }

    private func post(_ api: APIHandler, _ path: String, _ body: String) async -> HTTPResponse {
        await api.handle(.testRequest(method: .post, path: path, headers: ["authorization": "Bearer admin-token"], body: Array(body.utf8)))
    }

    @Test func nothingIsMadeWhenItsRowCannotBeStored() async throws {
        let book = MemoryAccountBook(now: { [clock] in clock.now() })
        let school = try await book.createSchool(name: "North")
        let full = api(book, FullAuditLog())
        #expect(await post(full, "/api/schools", #"{"name": "South"}"#).status == 503)
        #expect(await post(full, "/api/accounts", #"{"login": "ana", "displayName": "Ana", "role": "teacher", "schoolID": "\#(school.id)"}"#).status == 503)
        #expect(try await book.listSchools().map(\.name) == ["North"])
        #expect(try await book.listAccounts(schoolID: nil).isEmpty)
    }

    @Test func theRowNamesWhatWasMadeByTheIdItGot() async throws {
        let book = MemoryAccountBook(now: { [clock] in clock.now() })
        let log = MemoryAuditLog()
        let working = api(book, log)
        let made = await post(working, "/api/schools", #"{"name": "South"}"#)
        #expect(made.status == 201)
        let school = try #require(try JSONSerialization.jsonObject(with: Data(made.body)) as? [String: Any])["id"] as? String
        let rows = try await log.entries(AuditQuery()).entries
        #expect(rows.map(\.event.target) == ["school:\(try #require(school))"])
        #expect(rows.map(\.event.schoolID) == [school])
    }
}
