import Foundation
import Testing
import WebSocketTransport

/// The transport's own keepalive (`WebSocketServer+Keepalive`): silence is pinged, then hung up on; any
/// frame from the peer (a pong, a message) counts as life.
@Suite("Keepalive", .serialized)
struct KeepaliveTests {
    /// What the server's pings carry (and a pong must echo).
    let ping = Array("storycircle".utf8)

    @Test func aSilentConnectionIsPingedThenHungUpOn() async throws {
        let harness = try TransportHarness { $0.pingAfterIdleSeconds = 1; $0.hangUpAfterIdleSeconds = 2; $0.helloTimeoutSeconds = 0 }
        defer { harness.stop() }
        let port = harness.port
        let (frames, ended, seconds) = try await onOwnThread {
            let socket = try RawSocket(port: port, timeout: 8)
            let opened = ContinuousClock.now  // before the server's clock for this connection starts
            #expect(try socket.upgrade(port: port).status == 101)
            let (frames, ended) = socket.readFrames()
            return (frames, ended, (ContinuousClock.now - opened) / .seconds(1))
        }
        #expect(frames == [RawSocket.Frame(opcode: 0x9, payload: ping)], "one ping, then nothing")
        #expect(ended, "the server hung up")
        #expect(seconds >= 2, "not before hangUpAfterIdleSeconds")
        #expect(await harness.events.wait { $0.contains(where: \.isClosed) }, "the application hears of it")
        #expect(harness.server.metrics.snapshot.pingsSent == 1)
        #expect(harness.server.metrics.snapshot.idleHangUps == 1)
    }

    @Test func aPongOrAMessageKeepsAConnectionAlivePastTheHangUpTime() async throws {
        let harness = try TransportHarness { $0.pingAfterIdleSeconds = 1; $0.hangUpAfterIdleSeconds = 2; $0.helloTimeoutSeconds = 0 }
        defer { harness.stop() }
        let port = harness.port
        let ping = ping
        let (pings, seconds) = try await onOwnThread {
            let socket = try RawSocket(port: port, timeout: 8)
            #expect(try socket.upgrade(port: port).status == 101)
            let opened = ContinuousClock.now
            var pings: [RawSocket.Frame?] = []
            // Each ping comes a second of silence after the last reply; the third comes well after
            // hangUpAfterIdleSeconds from the start, so only the replies can have kept the connection.
            for reply in [RawSocket.clientFrame(opcode: 0xA, ping), RawSocket.clientFrame(opcode: 0x1, Array(#"{"type":"ping"}"#.utf8))] {
                pings.append(socket.nextFrame())
                socket.send(reply)
            }
            pings.append(socket.nextFrame())
            return (pings, (ContinuousClock.now - opened) / .seconds(1))
        }
        #expect(pings == Array(repeating: RawSocket.Frame(opcode: 0x9, payload: ping), count: 3))
        #expect(seconds > 2)
        #expect(harness.server.metrics.snapshot.idleHangUps == 0)
        #expect(harness.events.messages == [#"{"type":"ping"}"#])
    }
}
