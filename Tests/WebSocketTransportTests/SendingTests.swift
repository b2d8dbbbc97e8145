import Foundation
import Testing
import WebSocketTransport
import TransportCore

/// What the application sends arrives whole and in order, however the transport groups it.
@Suite("Sending over real sockets", .serialized)
struct SendingTests {
    /// Opens `count` raw WebSockets, each introducing itself with its index; returns them with the server's
    /// connection ids, in the same order.
    static func open(_ count: Int, on harness: TransportHarness) async throws -> [(RawSocket, UInt64)] {
        let port = harness.port
        let sockets = try await offPool {
            try (0..<count).map { index in
                let socket = try RawSocket(port: port, timeout: 10)
                #expect(try socket.upgrade(port: port).status == 101)
                socket.send(RawSocket.clientFrame(opcode: 0x1, Array("socket \(index)".utf8)))
                return socket
            }
        }
        #expect(await harness.events.wait { EventRecorder.messages(in: $0).count == count })
        var ids: [String: UInt64] = [:]
        for case .message(let connection, let bytes) in harness.events.all { ids[String(decoding: bytes, as: UTF8.self)] = connection }
        return sockets.enumerated().map { ($0.element, ids["socket \($0.offset)"] ?? 0) }
    }

    static func read(_ count: Int, from socket: RawSocket) -> [String] {
        (0..<count).compactMap { _ in socket.nextFrame().map { String(decoding: $0.payload, as: UTF8.self) } }
    }

    @Test func aBatchArrivesInOrderOnEveryConnection() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let clients = try await Self.open(3, on: harness)
        let ids = clients.map(\.1)
        // A reveal's shape: one message per child, then one for everyone, then more for some.
        var batch: [(OutboundFrame, [UInt64])] = ids.enumerated().map { (OutboundFrame(text: "reveal \($0.offset)"), [$0.element]) }
        batch.append((OutboundFrame(text: "scoreboard"), ids))
        batch.append((OutboundFrame(text: "podium 1"), [ids[1]]))
        harness.server.send(batch)
        let sockets = clients.map(\.0)
        let received: [[String]] = try await offPool { sockets.enumerated().map { Self.read($0.offset == 1 ? 3 : 2, from: $0.element) } }
        #expect(received[0] == ["reveal 0", "scoreboard"])
        #expect(received[1] == ["reveal 1", "scoreboard", "podium 1"])
        #expect(received[2] == ["reveal 2", "scoreboard"])
    }

    /// Frames queued together for one connection (one batch, one lock) go out in one write; with
    /// `coalesceWrites` off each is a write of its own. Either way they all arrive, in order.
    @Test(arguments: [true, false]) func framesQueuedTogetherAreCoalescedOnlyWhenAskedTo(coalesce: Bool) async throws {
        let harness = try TransportHarness { $0.coalesceWrites = coalesce }
        defer { harness.stop() }
        let (socket, id) = try await Self.open(1, on: harness)[0]
        let count = 10
        harness.server.send((0..<count).map { (OutboundFrame(text: "news \($0)"), [id]) })
        let received: [String] = try await offPool { Self.read(count, from: socket) }
        #expect(received == (0..<count).map { "news \($0)" })
        socket.send(RawSocket.clientFrame(opcode: 0x1, Array("done".utf8)))
        #expect(await harness.events.wait { EventRecorder.messages(in: $0).contains("done") })
        let metrics = harness.server.metrics.snapshot
        #expect(metrics.messagesSent == count)
        #expect(metrics.framesCoalesced == (coalesce ? count : 0))
    }

    /// More connections with news than one turn of the loop arms (`connectionsArmedPerTurn`): the rest are
    /// armed in later turns without anyone sending again, and a reply queued last is not left behind.
    @Test func newsForMoreConnectionsThanOneTurnArmsReachesEveryOne() async throws {
        let harness = try TransportHarness { $0.maxConnectionsPerAddress = 0 }
        defer { harness.stop() }
        let count = WebSocketServer.connectionsArmedPerTurn * 2 + 44
        let clients = try await Self.open(count, on: harness)
        let ids = clients.map(\.1)
        harness.server.send(ids.enumerated().map { (OutboundFrame(text: "reveal \($0.offset)"), [$0.element]) })
        harness.server.send(OutboundFrame(text: "ack", priority: .reply), to: [ids[count - 1]])
        let sockets = clients.map(\.0)
        let received: [[String]] = try await offPool { sockets.enumerated().map { Self.read($0.offset == count - 1 ? 2 : 1, from: $0.element) } }
        #expect(received.enumerated().allSatisfy { $0.element.first == "reveal \($0.offset)" }, "every connection got its own")
        #expect(received[count - 1] == ["reveal \(count - 1)", "ack"], "a connection's order holds whichever lane it is in")
    }

    @Test func manyQueuedFramesOfEverySizeArriveWholeAndInOrder() async throws {
        // A small kernel buffer, so writes come back partial and libwebsockets buffers the rest.
        let harness = try TransportHarness { $0.socketSendBufferBytes = 4_096 }
        defer { harness.stop() }
        let clients = try await Self.open(1, on: harness)
        let (socket, id) = clients[0]
        // Lengths in each of the three header forms (7-bit, 16-bit, 64-bit), many small ones between.
        let large = [65_535, 65_536, 70_000]
        let small = [1, 60, 125, 126, 300]
        var frames: [OutboundFrame] = []
        for index in 0..<600 {
            let length: Int = index % 100 == 99 ? large[(index / 100) % 3] : small[index % 5]
            let prefix: [UInt8] = Array("\(index):".utf8)
            let filler = [UInt8](repeating: UInt8(ascii: "a") + UInt8(index % 26), count: max(0, length - prefix.count))
            frames.append(OutboundFrame(prefix + filler))
        }
        // Queued at once (one batch, one wake-up), so the service thread finds them all waiting and writes
        // them many to a send.
        harness.server.send(frames.map { ($0, [id]) })
        let count = frames.count
        let received: [RawSocket.Frame?] = try await offPool { (0..<count).map { _ in socket.nextFrame() } }
        let opcodes: [UInt8?] = received.map { $0?.opcode }
        let payloads: [[UInt8]?] = received.map { $0?.payload }
        let sent: [[UInt8]?] = frames.map { $0.bytes }
        #expect(opcodes == [UInt8?](repeating: 0x1, count: count))
        #expect(payloads == sent, "every byte, in order")
        #expect(harness.server.metrics.snapshot.messagesSent == frames.count)
    }

    /// A connection that falls behind sends made on the service thread itself (a room's reveal) is dropped
    /// at once: those sends are written (or found too many) after the turn, with no socket event and no
    /// keepalive sweep (off here) to wake the loop again. (The first frame is written where it is sent and
    /// mostly left in lws's buffer by the small socket buffer, so the others are queued behind it.)
    @Test func aConnectionOverflowedFromTheServiceThreadIsDroppedAtOnce() async throws {
        let harness = try TransportHarness { configuration in
            configuration.maxQueuedFramesPerConnection = 4
            configuration.maxQueuedBytesPerConnection = 8 << 20
            configuration.socketSendBufferBytes = 4_096
            configuration.pingAfterIdleSeconds = 0
            configuration.hangUpAfterIdleSeconds = 0
        }
        defer { harness.stop() }
        let (socket, id) = try await Self.open(1, on: harness)[0]
        let server = harness.server
        let news = [UInt8](repeating: UInt8(ascii: "n"), count: 200_000)
        server.loopExecutor.execute {
            for _ in 0..<10 { server.send(OutboundFrame(news), to: [id]) }
        }
        let ended = try await offPool { () -> Bool in
            return socket.readFrames().ended
        }
        #expect(ended, "the connection was not closed")
        #expect(server.metrics.snapshot.slowClientsDropped == 1)
    }

    @Test func aRefusalMadeOnTheServiceThreadHoldsUpNoLaterSend() async throws {
        // A refusal notes its wake-up on the service thread itself; unless it also wakes the loop, the next
        // send from the application finds a wake-up "pending" and does not wake it either.
        let harness = try TransportHarness { $0.maxMessageBytes = 64 }
        defer { harness.stop() }
        let clients = try await Self.open(2, on: harness)
        let (refused, other) = (clients[0].0, clients[1])
        let closing = try await offPool {
            refused.send(RawSocket.clientFrame(opcode: 0x1, Array(repeating: UInt8(ascii: "x"), count: 100)))
            return refused.readFrames().frames.last?.closeStatus
        }
        #expect(closing == 1009)
        harness.server.send(OutboundFrame(text: "still here"), to: [other.1])
        let socket = other.0
        let received = try await offPool { Self.read(1, from: socket) }
        #expect(received == ["still here"])
    }

    /// A server reserves lws's headroom in every frame made after it, so frames are written where they lie;
    /// a frame made with less (before any server was) is copied behind enough, and arrives the same.
    @Test func aFrameMadeWithoutTheServersHeadroomStillArrivesWhole() async throws {
        let harness = try TransportHarness { $0.coalesceWrites = false }
        defer { harness.stop() }
        #expect(OutboundFrame.reservedHeadroom > 0 && OutboundFrame(text: "x").headroom == OutboundFrame.reservedHeadroom)
        let (socket, id) = try await Self.open(1, on: harness)[0]
        let large = [UInt8](repeating: UInt8(ascii: "l"), count: 70_000)
        let frames = [OutboundFrame(Array("bare".utf8), headroom: 0), OutboundFrame(large, headroom: 0), OutboundFrame(text: "reserved")]
        for frame in frames { harness.server.send(frame, to: [id]) }
        let received: [[UInt8]?] = try await offPool { (0..<3).map { _ in socket.nextFrame()?.payload } }
        #expect(received == frames.map(\.bytes))
    }
}
