import Foundation
import Testing
import WebSocketTransport

@Suite("Hostile connections", .serialized)
struct ConnectionLimitTests {
    @Test func connectionsThatSayNothingAreClosedAfterTheHelloTimeout() async throws {
        // The shell's half of the hello timeout: each connection's lws timer fires, and the refusal goes out
        // as an error message and a 1008 close. When it fires, and what counts as a hello, is
        // `ConnectionState`'s rule (`ConnectionStateTests`). Connections that never say hello but answer
        // pings would otherwise hold their places for ever.
        // The talker's frame must reach the server within the timeout of its own upgrade, on a real clock:
        // 2 s, not less, so a loaded machine (the suite runs in parallel) does not time it out too.
        let harness = try TransportHarness { $0.helloTimeoutSeconds = 2; $0.maxConnectionsPerAddress = 0 }
        defer { harness.stop() }
        let port = harness.port
        let silent = 40
        let results = try await offPool {
            let sockets = try (0..<silent).map { _ in try RawSocket(port: port) }
            for socket in sockets { #expect(try socket.upgrade(port: port).status == 101) }
            // One that says something in time is not closed by the timer.
            let talker = try RawSocket(port: port)
            #expect(try talker.upgrade(port: port).status == 101)
            talker.send(RawSocket.clientFrame(opcode: 0x1, Array(#"{"type":"join"}"#.utf8)))
            let closes = sockets.map { $0.readFrames() }
            return (closes, talker)
        }
        for (frames, _) in results.0 {
            #expect(frames.first.map { String(decoding: $0.payload, as: UTF8.self) } == #"{"type":"error","code":"hello_timeout","message":"refused"}"#)
            #expect(frames.last?.closeStatus == 1008)
            #expect(frames.last.map { String(decoding: $0.payload.dropFirst(2), as: UTF8.self) } == "hello_timeout")
        }
        // Every silent one is gone on the server's side too; the one that spoke stays.
        #expect(await harness.events.wait { events in events.filter(\.isClosed).count == silent })
        #expect(harness.server.metrics.snapshot.openConnections == 1)
        #expect(harness.server.metrics.snapshot.helloTimeouts == silent)
        withExtendedLifetime(results.1) {}
    }

    @Test func aFloodFromOneAddressNeverCostsAnotherAddressItsPlace() async throws {
        // One address's hello-less connections may fill only that address's share, so they cannot turn a
        // real child away with 503. Here the server-wide limit is the flood's own limit plus one: the one
        // is still there for somebody else.
        let perAddress = 5
        let harness = try TransportHarness { $0.maxConnectionsPerAddress = perAddress; $0.maxConnections = perAddress + 1 }
        defer { harness.stop() }
        let port = harness.port
        var (flood, child) = try await offPool {
            var flood: [RawSocket] = []
            for _ in 0..<perAddress {
                let socket = try RawSocket(port: port, from: "127.0.0.1")
                #expect(try socket.upgrade(port: port).status == 101)
                flood.append(socket)
            }
            for _ in 0..<20 {
                let more = try RawSocket(port: port, from: "127.0.0.1")
                let refused = try more.upgrade(port: port)
                #expect(refused.status == 429)
                #expect(refused.errorCode == "too_many_connections")
                #expect(more.readToEnd().ended, "a refused upgrade is closed")
            }
            let child = try RawSocket(port: port, from: "127.0.0.2")
            #expect(try child.upgrade(port: port).status == 101, "another device still gets in")
            // Now the server as a whole is full: that is 503, for everyone.
            let full = try RawSocket(port: port, from: "127.0.0.3").upgrade(port: port)
            #expect(full.status == 503 && full.errorCode == "server_full")
            return (flood, child)
        }
        // A place freed is a place for the flood's address again.
        flood.removeLast()
        #expect(await harness.events.wait { events in events.filter(\.isClosed).count == 1 })
        let again = try await offPool { try RawSocket(port: port, from: "127.0.0.1").upgrade(port: port).status }
        #expect(again == 101)
        withExtendedLifetime((flood, child)) {}
        #expect(harness.server.metrics.snapshot.rejectedPerAddress == 20)
    }

    @Test func behindATrustedProxyTheForwardedAddressCounts() async throws {
        let harness = try TransportHarness { $0.maxConnectionsPerAddress = 2; $0.trustForwardedFor = true }
        defer { harness.stop() }
        let port = harness.port
        let statuses = try await offPool {
            var open: [RawSocket] = []
            return try ["10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.9, 10.0.0.1"].map { forwarded in
                let socket = try RawSocket(port: port)
                open.append(socket)
                return try socket.upgrade(port: port, extraHeaders: ["X-Forwarded-For: \(forwarded)"]).status
            }
        }
        #expect(statuses[0...2] == [101, 101, 429])
        #expect(statuses[3] == 101, "another child behind the same proxy")
        // The proxy appends the address it saw; what the client wrote before it proves nothing.
        #expect(statuses[4] == 429)
    }

    @Test func originsOtherThanOursAreRefusedEvenWhenTheHostHeaderAgrees() async throws {
        // The Origin is checked against the allowed origins, never against the Host: a DNS-rebinding page
        // sends Host and Origin both evil.example, and they agree.
        let harness = try TransportHarness { $0.allowedOrigins = ["https://trusted.example"] }
        defer { harness.stop() }
        harness.server.allowOrigins(["http://192.168.1.20:8080"])
        let port = harness.port
        try await offPool {
            func status(host: String? = nil, origin: String?) throws -> RawSocket.Response {
                try RawSocket(port: port).upgrade(port: port, host: host, origin: origin)
            }
            let rebinding = try status(host: "evil.example:\(port)", origin: "http://evil.example:\(port)")
            #expect(rebinding.status == 403 && rebinding.errorCode == "origin_not_allowed")
            #expect(try status(host: "evil.example", origin: "http://evil.example").status == 403)
            #expect(try status(origin: "http://127.0.0.1:\(port)").status == 101, "our page on this machine")
            #expect(try status(origin: "http://localhost:\(port)").status == 101)
            #expect(try status(origin: "http://127.0.0.1:\(port + 1)").status == 403, "another program on this machine")
            #expect(try status(host: "192.168.1.20:8080", origin: "http://192.168.1.20:8080").status == 101, "the printed address")
            #expect(try status(origin: "https://trusted.example").status == 101, "allowedOrigins")
            #expect(try status(origin: nil).status == 101, "not a browser")
            let wrongPath = try RawSocket(port: port).upgrade(port: port, path: "/elsewhere")
            #expect(wrongPath.status == 404 && wrongPath.errorCode == "not_found")
        }
        #expect(harness.server.metrics.snapshot.rejectedUpgrades == 4)
    }
}
