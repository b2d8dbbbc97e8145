import Foundation
import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer
import WebSocketTransport

/// `ConnectionBindings`: a greeted connection's messages skip the `ConnectionRouter`, and never overtake the
/// ones still queued for it.
@Suite("Inbound routes")
struct ConnectionBindingsTests {
    /// What `ClassroomServer`'s transport callback does with a message: the direct way, or the router's.
    private func transportDelivers(_ routes: ConnectionBindings, _ events: AsyncStream<WebSocketTransport.TransportEvent>.Continuation, _ connection: UInt64, _ message: ClientMessage) -> Bool {
        let bytes = Array(try! JSONEncoder().encode(message))
        if routes.deliver(connection, bytes) { return true }
        events.yield(.message(connection: connection, bytes: bytes))
        return false
    }

    private func ping(_ id: Int) -> ClientMessage { .ping(id: id, clientTime: nil, roundTripMs: nil) }

    @Test func messagesSentWhileTheHelloIsStillWithTheRegistryKeepTheirOrder() async throws {
        let transport = RecordingTransport()
        let routes = ConnectionBindings()
        let (registry, events) = ServerFixtures.registry(transport: transport, bindings: routes)
        let created = try await registry.createRoom(story: ServerFixtures.story)

        events.yield(.opened(connection: 1, peer: "10.0.0.1"))
        // Nothing is bound yet: the hello and the messages right behind it all go to the router.
        #expect(!transportDelivers(routes, events, 1, .join(room: created.code, nickname: "Ana")))
        #expect(!transportDelivers(routes, events, 1, ping(1)))
        #expect(!transportDelivers(routes, events, 1, ping(2)))
        guard case .pong(let second) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
        #expect(second.id == 1)
        guard case .pong(let third) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
        #expect(third.id == 2)
        // The router counts each message off as it routes it, and binds the connection last, in the turn
        // that hands the queued messages to the room.
        _ = await registry.liveRoomCount

        #expect(transportDelivers(routes, events, 1, ping(3)), "bound, nothing queued: the direct way")
        #expect(transportDelivers(routes, events, 1, ping(4)))
        for id in [3, 4] {
            guard case .pong(let pong) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
            #expect(pong.id == id)
        }
        #expect(transport.types(to: 1).filter { $0 != "preparing" } == ["welcome", "pong", "pong", "pong", "pong"])
    }

    @Test func aBoundConnectionTakesTheDirectWayOnlyOnceNothingOfItsIsQueued() async throws {
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport())
        let created = try await registry.createRoom(story: ServerFixtures.story)
        let room = try #require(await registry.room(created.code))
        let routes = ConnectionBindings()
        let bytes = Array(#"{"type":"ping","id":1}"#.utf8)
        #expect(!routes.deliver(9, bytes))
        #expect(!routes.deliver(9, bytes))
        routes.bind(9, to: room)
        #expect(!routes.deliver(9, bytes), "two are still with the registry")
        routes.countOff(9)
        routes.countOff(9)
        #expect(!routes.deliver(9, bytes), "the third still is")
        routes.countOff(9)
        routes.countOff(9)
        #expect(routes.deliver(9, bytes))
        routes.unbind(9)
        #expect(!routes.deliver(9, bytes))
    }

    @Test func aRefusedHelloBindsNothingAndACloseUnbinds() async throws {
        let transport = RecordingTransport()
        let routes = ConnectionBindings()
        let (registry, events) = ServerFixtures.registry(transport: transport, bindings: routes)
        let created = try await registry.createRoom(story: ServerFixtures.story)

        events.yield(.opened(connection: 1, peer: "10.0.0.1"))
        #expect(!transportDelivers(routes, events, 1, .join(room: "000000", nickname: "Ana")))
        _ = await transport.next("error", to: 1)
        _ = await registry.liveRoomCount
        #expect(!transportDelivers(routes, events, 1, ping(1)), "no room: still the registry's")

        events.yield(.opened(connection: 2, peer: "10.0.0.2"))
        #expect(!transportDelivers(routes, events, 2, .join(room: created.code, nickname: "Ben")))
        _ = await transport.next("welcome", to: 2)
        _ = await registry.liveRoomCount
        #expect(transportDelivers(routes, events, 2, ping(1)))
        events.yield(.closed(connection: 2))
        // A close says nothing back; a refused hello behind it in the stream shows it has been routed.
        events.yield(.opened(connection: 3, peer: "10.0.0.3"))
        events.raw(3, "{}")
        _ = await transport.next("error", to: 3)
        _ = await registry.liveRoomCount
        #expect(!transportDelivers(routes, events, 2, ping(2)), "closed: unbound")
    }
}
