import Foundation
import Testing
import WebSocketTransport

/// The keepalive's shell (`WebSocketServer+Keepalive`) over a real socket: the sweep pings, a pong reaches
/// the connection's state, and the hang-up drops the socket. When each happens is `ConnectionState`'s rule,
/// tested on a manual clock in `ConnectionStateTests`; nothing here measures time.
@Suite("Keepalive", .serialized)
struct KeepaliveTests {
    /// What the server's pings carry (and a pong must echo): the name the application gave its protocol.
    let ping = Array("storycircle".utf8)

    @Test func aSilentConnectionIsPingedAPongCountsAndSilenceIsHungUpOn() async throws {
        let harness = try TransportHarness { $0.pingAfterIdleSeconds = 1; $0.hangUpAfterIdleSeconds = 3; $0.helloTimeoutSeconds = 0; $0.protocolName = "storycircle" }
        defer { harness.stop() }
        let port = harness.port
        let ping = ping
        let (first, rest, ended) = try await onOwnThread {
            let socket = try RawSocket(port: port, timeout: 10)
            #expect(try socket.upgrade(port: port).status == 101)
            let first = socket.nextFrame()
            socket.send(RawSocket.clientFrame(opcode: 0xA, ping))
            let (rest, ended) = socket.readFrames()
            return (first, rest, ended)
        }
        let pingFrame = RawSocket.Frame(opcode: 0x9, payload: ping)
        #expect(first == pingFrame)
        // A second ping only if the pong reset the connection's idleness; without it, the hang-up alone.
        #expect(rest == [pingFrame], "pinged again after the pong, then nothing")
        #expect(ended, "the server hung up")
        #expect(await harness.events.wait { $0.contains(where: \.isClosed) }, "the application hears of it")
        #expect(harness.server.metrics.snapshot.pingsSent == 2)
        #expect(harness.server.metrics.snapshot.idleHangUps == 1)
    }
}
