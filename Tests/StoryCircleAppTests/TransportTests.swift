import Foundation
import Testing
import WebSocketTransport
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// The whole server over real sockets on a free port, driven by libwebsockets clients, with a manual clock
/// for the room's time. These are the tests `make test` also runs under ThreadSanitizer.
@Suite("Transport over real sockets")
struct TransportTests {
    private static func webRoot() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "<!doctype html><title>StoryCircle</title>".write(to: folder.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        return folder.path
    }

    private static func start(clock: ManualClock, maxMessageBytes: Int = 4_096, configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> ClassroomServer {
        var configuration = ServerConfiguration()
        configuration.network.port = 0
        configuration.network.bindAddress = "127.0.0.1"
        configuration.files.webRoot = try webRoot()
        configuration.files.dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-data-\(UUID().uuidString)").path
        configuration.storage.database = "none"
        configuration.network.adminToken = "admin"
        configuration.connections.maxMessageBytes = maxMessageBytes
        // Real time, while a test's hello waits for the cooperative pool, which the whole suite starting at
        // once on two cores has kept busy for more than a minute: the longest timeout allowed, so that only
        // the test of the hello timeout itself (which says hello from the client's thread) meets one.
        configuration.connections.helloTimeoutSeconds = 3_600
        configure(&configuration)
        return try await ClassroomServer.start(configuration: configuration, clock: clock, store: MemoryRoomStore(), narrator: ScriptedNarrator(), logger: StoryCircleLog(label: "test", minimumLevel: .error))
    }

    @Test func aRoomOfTwelvePlaysFromJoinToPodium() async throws {
        let clock = ManualClock()
        let server = try await Self.start(clock: clock)
        let clients = try SocketClients(port: server.port)
        let room = try await server.rooms.create(story: ServerFixtures.story)

        var children: [UInt64] = []
        for i in 0..<12 {
            let id = try #require(await clients.connect())
            clients.send(.join(room: room.code, nickname: "Child \(i)"), from: id)
            _ = await clients.log.next("welcome", to: id)
            children.append(id)
        }
        let teacher = try #require(await clients.connect())
        clients.send(.control(room: room.code, token: room.teacherToken), from: teacher)
        _ = await clients.log.next("welcome", to: teacher)
        clients.send(.command(.start), from: teacher)
        _ = await clients.log.next("narration.plan", to: teacher)
        clients.send(.command(.skip), from: teacher)

        for question in 0..<2 {
            guard case .question(let view) = await clients.log.next("question", to: children[0]) else { Issue.record("expected .question"); return }
            clock.advance(to: view.opensAt + 500)
            for (i, child) in children.enumerated() {
                clients.send(.answer(question: question, option: i % 3), from: child)
            }
            for child in children {
                guard case .reveal(let reveal) = await clients.log.next("reveal", to: child) else { Issue.record("expected .reveal"); return }
                #expect(reveal.question == question)
                #expect(reveal.you != nil)
            }
            clients.send(.command(.next), from: teacher)
        }
        guard case .finished(let podium) = await clients.log.next("finished", to: teacher) else { Issue.record("expected .finished"); return }
        #expect(podium.entries?.count == 12)
        for child in children {
            _ = await clients.log.next("finished", to: child)
        }
        clients.stop()
        await server.stop()
    }

    @Test func protocolViolationsCloseTheConnectionWithAReason() async throws {
        let server = try await Self.start(clock: ManualClock(), maxMessageBytes: 512)
        let clients = try SocketClients(port: server.port)

        let big = try #require(await clients.connect())
        clients.sendRaw(String(repeating: "x", count: 600), from: big)
        #expect(await clients.closeStatus(big) == 1009)
        guard case .error(let tooBig) = clients.log.messages(to: big).first else { Issue.record("no error before the close"); return }
        #expect(tooBig.code == .messageTooBig)

        let rude = try #require(await clients.connect())
        clients.send(.answer(question: 0, option: 0), from: rude)
        #expect(await clients.closeStatus(rude) == 1008)
        #expect(clients.log.messages(to: rude).first == .error(RoomError(.helloRequired, "Say who you are first: join, rejoin, watch or control.")))

        #expect(await clients.connect(path: "/elsewhere") == nil, "only /ws upgrades")

        // The server still serves.
        let fine = try #require(await clients.connect())
        clients.send(.join(room: "123456", nickname: "Ana"), from: fine)
        guard case .error(let missing) = await clients.log.next("error", to: fine) else { Issue.record("expected .error"); return }
        #expect(missing.code == .roomNotFound)
        clients.stop()
        await server.stop()
    }

    @Test func theHelloTimeoutAndThePerAddressLimitComeFromTheConfiguration() async throws {
        // The hello timeout runs on the transport's real clock. What must beat it happens on the clients'
        // and the server's own threads, never on the cooperative pool, which the whole suite starting at once
        // on two cores can keep from running a test for longer than any timeout: the child's join goes out
        // from the client's thread as its connection opens, and the connections that fill the address's
        // share are opened together, so the server meets them all while it still holds the first ones. (The
        // rule itself, to the millisecond, is ConnectionStateTests'.)
        let server = try await Self.start(clock: ManualClock()) { $0.connections.helloTimeoutSeconds = 15; $0.connections.maxConnectionsPerAddress = 3 }
        let clients = try SocketClients(port: server.port)
        let room = try await server.rooms.create(story: ServerFixtures.story)
        let child = try #require(await clients.connect(saying: .join(room: room.code, nickname: "Ana")))
        _ = await clients.log.next("welcome", to: child)
        let more = await clients.connect(count: 3)
        let silent = more.compactMap { $0 }
        #expect(silent.count == 2, "of three more connections from this address, the one over its limit of 3 is refused")
        for connection in silent {
            #expect(await clients.closeStatus(connection) == 1008)
            #expect(clients.log.messages(to: connection) == [.error(RoomError(.helloTimeout, "Say who you are within 15 seconds: join, rejoin, watch or control."))])
        }
        #expect(server.transportMetrics.snapshot.helloTimeouts == 2)
        #expect(server.transportMetrics.snapshot.rejectedPerAddress == 1)
        // Their places are free again; the child who said hello was never timed out.
        let again = try #require(await clients.connect(saying: .join(room: room.code, nickname: "Bea")))
        _ = await clients.log.next("welcome", to: again)
        clients.send(.ping(id: 1, clientTime: nil, roundTripMs: nil), from: child)
        _ = await clients.log.next("pong", to: child)
        #expect(server.transportMetrics.snapshot.helloTimeouts == 2)
        clients.stop()
        await server.stop()
    }

    @Test func pagesFromThePublicURLMayConnectAndOtherSitesMayNot() async throws {
        let server = try await Self.start(clock: ManualClock()) { $0.network.publicURL = "https://quiz.school.example/" }
        let policy = server.transport.currentOriginPolicy
        #expect(policy.allows("https://quiz.school.example"))
        #expect(policy.allows("http://127.0.0.1:\(server.port)"))
        #expect(!policy.allows("http://evil.example"))
        #expect(!policy.allows("http://quiz.school.example"), "not the scheme children use")
        await server.stop()
    }

    @Test func stoppingTheServerClosesEveryConnectionAsGoingAway() async throws {
        let server = try await Self.start(clock: ManualClock())
        let clients = try SocketClients(port: server.port)
        let room = try await server.rooms.create(story: ServerFixtures.story)
        let child = try #require(await clients.connect())
        clients.send(.join(room: room.code, nickname: "Ana"), from: child)
        _ = await clients.log.next("welcome", to: child)
        await server.stop()
        #expect(await clients.closeStatus(child) == 1001)
        clients.stop()
    }
}
