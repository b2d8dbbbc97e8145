import Foundation
import Testing
import TransportCore
import WebSocketTransport

@Suite("RFC 6455 over real sockets", .serialized)
struct WebSocketProtocolTests {
    @Test func aOneByteClosePayloadIsAProtocolError() async throws {
        // A close frame with a 1-byte payload has no room for a status code: a protocol error (1002), not a
        // close to echo back.
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        let frames = try await offPool {
            let socket = try RawSocket(port: port)
            #expect(try socket.upgrade(port: port).status == 101)
            socket.send(RawSocket.clientFrame(opcode: 0x8, [0x03]))
            return socket.readFrames().frames
        }
        #expect(frames.last?.closeStatus == 1002, "\(frames)")
        #expect(frames.last?.payload != [0x03], "not an echo")
        #expect(harness.server.metrics.snapshot.protocolErrors == 1)
    }

    /// The transport reads nothing into the upgrade URL's query: it hands the whole of it on (a room's code
    /// is the application's business), the first of a name given twice, as a proxy routing by it reads it.
    @Test func theUpgradeURLsQueryIsHandedOnWhole() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        let socket = try await offPool {
            let socket = try RawSocket(port: port)
            #expect(try socket.upgrade(port: port, path: "/ws?room=482913&lang=es&flag&room=111111").status == 101)
            return socket
        }
        #expect(await harness.events.wait { $0.contains(where: \.isOpened) })
        let queries = harness.events.all.compactMap { event -> [String: String]? in
            if case .opened(_, _, let query) = event { query } else { nil }
        }
        #expect(queries == [["room": "482913", "lang": "es", "flag": ""]])
        withExtendedLifetime(socket) {}
    }

    @Test func wellFormedClosesAreAnsweredAndBadCodesBecome1002() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        try await offPool {
            for (payload, expected) in [([UInt8]([0x03, 0xE8]), UInt16?(1000)), ([0x03, 0xE8] + Array("bye".utf8), 1000), ([], nil), ([0x03, 0xED], 1002), ([0x00, 0x10], 1002)] {
                let socket = try RawSocket(port: port)
                #expect(try socket.upgrade(port: port).status == 101)
                socket.send(RawSocket.clientFrame(opcode: 0x8, payload))
                let frames = socket.readFrames().frames
                #expect(frames.last?.opcode == 8, "a close answers \(payload)")
                #expect(frames.last?.closeStatus == expected, "\(payload)")
            }
        }
    }

    @Test func maskedFramesAreUnmaskedAndDelivered() async throws {
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        let socket = try await offPool {
            let socket = try RawSocket(port: port)
            #expect(try socket.upgrade(port: port).status == 101)
            socket.send(RawSocket.clientFrame(opcode: 0x1, Array(#"{"type":"ping"}"#.utf8)))
            return socket
        }
        #expect(await harness.events.wait { EventRecorder.messages(in: $0) == [#"{"type":"ping"}"#] })
        withExtendedLifetime(socket) {}
    }

    @Test func aMessageLongerThanLibwebsocketsBufferArrivesWholeAndOneByteOverTheLimitIsRefused() async throws {
        // lws hands a frame over in pieces of the protocol's receive buffer (1 KiB), so a message at the
        // limit (4 KiB by default) comes in four RECEIVE callbacks, a fragmented one in more: each must
        // reach the application as one message, and the limit must count the whole message.
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        let atLimit = String(repeating: "a", count: 4_090) + "(4096)"
        let fragments = (String(repeating: "b", count: 1_500), String(repeating: "c", count: 1_600))
        let socket = try await offPool {
            let socket = try RawSocket(port: port)
            #expect(try socket.upgrade(port: port).status == 101)
            socket.send(RawSocket.clientFrame(opcode: 0x1, Array(atLimit.utf8)))
            socket.send(RawSocket.clientFrame(opcode: 0x1, Array(fragments.0.utf8), final: false))
            socket.send(RawSocket.clientFrame(opcode: 0x0, Array(fragments.1.utf8)))
            return socket
        }
        #expect(atLimit.utf8.count == 4_096)
        #expect(await harness.events.wait { EventRecorder.messages(in: $0).count == 2 })
        #expect(EventRecorder.messages(in: harness.events.all) == [atLimit, fragments.0 + fragments.1])
        let closing = try await offPool {
            socket.send(RawSocket.clientFrame(opcode: 0x1, Array(repeating: UInt8(ascii: "d"), count: 4_097)))
            return socket.readFrames().frames.last?.closeStatus
        }
        #expect(closing == 1009)
        #expect(EventRecorder.messages(in: harness.events.all).count == 2, "nothing of the refused message was delivered")
    }

    @Test func anUnmaskedFrameIsWhatLibwebsockets41CannotRefuse() async throws {
        // RFC 6455, 5.1 wants a server to close on an unmasked client frame. libwebsockets 4.1.6 reads the
        // mask bit and otherwise ignores it (lib/roles/ws/ops-ws.c, LWS_RXPS_04_FRAME_HDR_LEN), and no
        // callback or API shows a frame's header to the application, so the frame is delivered like any
        // other (docs/protocol.md, "What the server cannot refuse"). This test pins that down: if a newer
        // libwebsockets starts closing with 1002, it fails, and the documentation must change with it.
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        let socket = try await offPool {
            let socket = try RawSocket(port: port)
            #expect(try socket.upgrade(port: port).status == 101)
            socket.send(RawSocket.clientFrame(opcode: 0x1, Array(#"{"type":"ping","id":7}"#.utf8), masked: false))
            return socket
        }
        #expect(await harness.events.wait { EventRecorder.messages(in: $0) == [#"{"type":"ping","id":7}"#] })
        withExtendedLifetime(socket) {}
    }
}
