import Foundation
import Locking
import Testing
import WebSocketTransport

@Suite("libwebsockets' own log lines", .serialized)
struct LibWebSocketsLogTests {
    private final class Lines: Sendable {
        let lines = Locked<[(LibWebSocketsLog.Level, String)]>([])
        func append(_ level: LibWebSocketsLog.Level, _ line: String) { lines.withLock { $0.append((level, line)) } }
        var all: [(LibWebSocketsLog.Level, String)] { lines.withLock { $0 } }
    }

    @Test func aRoutedLineReachesTheSinkAsOneLineWithItsLevel() throws {
        let lines = Lines()
        LibWebSocketsLog.route(to: lines.append)
        defer { LibWebSocketsLog.route(to: nil) }
        // A real lws error: a second server on a port the first holds cannot bind, and lws says so.
        let first = try TransportHarness()
        defer { first.stop() }
        let port = first.port
        #expect(throws: LWSError.self) { _ = try TransportHarness { $0.port = port } }
        let binding = lines.all.filter { $0.1.contains("\(port)") }
        #expect(!binding.isEmpty, "lws said nothing about port \(port): \(lines.all)")
        #expect(binding.allSatisfy { $0.0 == .error && !$0.1.hasSuffix("\n") && !$0.1.isEmpty })
    }
}
