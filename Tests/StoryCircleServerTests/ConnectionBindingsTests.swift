import Foundation
import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer
import TransportCore

/// `ConnectionBindings`: a greeted connection's messages skip the `ConnectionRouter`, and never overtake the
/// ones still queued for it.
@Suite("Connection bindings")
struct ConnectionBindingsTests {
    /// What `ClassroomServer`'s transport callback does with a message: the direct way, or the router's.
    private func transportDelivers(_ bindings: ConnectionBindings, _ events: AsyncStream<TransportCore.TransportEvent>.Continuation, _ connection: UInt64, _ message: ClientMessage) -> Bool {
        let bytes = Array(try! JSONEncoder().encode(message))
        if bindings.deliver(connection, bytes) { return true }
        events.yield(.message(connection: connection, bytes: bytes))
        return false
    }

    private func ping(_ id: Int) -> ClientMessage { .ping(id: id, clientTime: nil, roundTripMs: nil) }

    /// Returns once the router has routed everything yielded before: a refused hello from a connection of
    /// its own (`probe`), behind it in the stream, is answered only after it. (A close says nothing back.)
    private func routedSoFar(_ events: AsyncStream<TransportCore.TransportEvent>.Continuation, _ transport: RecordingTransport, probe: UInt64) async {
        events.yield(.opened(connection: probe, peer: "10.0.0.\(probe)"))
        events.raw(probe, "{}")
        _ = await transport.next("error", to: probe)
    }

    @Test func messagesSentWhileTheHelloIsStillWithTheRouterKeepTheirOrder() async throws {
        let transport = RecordingTransport()
        let bindings = ConnectionBindings()
        let (registry, events) = ServerFixtures.registry(transport: transport, bindings: bindings)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)

        events.yield(.opened(connection: 1, peer: "10.0.0.1"))
        // Nothing is bound yet: the hello and the messages right behind it all go to the router.
        #expect(!transportDelivers(bindings, events, 1, .join(room: created.code, nickname: "Ana")))
        #expect(!transportDelivers(bindings, events, 1, ping(1)))
        #expect(!transportDelivers(bindings, events, 1, ping(2)))
        guard case .pong(let second) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
        #expect(second.id == 1)
        guard case .pong(let third) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
        #expect(third.id == 2)
        // The router counts each message off as it routes it, and binds the connection last, in the turn
        // that hands the queued messages to the room.
        await registry.settled()

        #expect(transportDelivers(bindings, events, 1, ping(3)), "bound, nothing queued: the direct way")
        #expect(transportDelivers(bindings, events, 1, ping(4)))
        for id in [3, 4] {
            guard case .pong(let pong) = await transport.next("pong", to: 1) else { Issue.record("expected .pong"); return }
            #expect(pong.id == id)
        }
        #expect(transport.types(to: 1).filter { $0 != "preparing" } == ["welcome", "pong", "pong", "pong", "pong"])
    }

    @Test func aBoundConnectionTakesTheDirectWayOnlyOnceNothingOfItsIsQueued() async throws {
        let (registry, _) = ServerFixtures.registry(transport: RecordingTransport())
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        let room = try #require(await registry.directory.room(created.code))
        let bindings = ConnectionBindings()
        let bytes = Array(#"{"type":"ping","id":1}"#.utf8)
        #expect(!bindings.deliver(9, bytes))
        #expect(!bindings.deliver(9, bytes))
        #expect(bindings.bind(9, to: room))
        #expect(!bindings.deliver(9, bytes), "two are still with the router")
        bindings.countOff(9)
        bindings.countOff(9)
        #expect(!bindings.deliver(9, bytes), "the third still is")
        bindings.countOff(9)
        bindings.countOff(9)
        #expect(bindings.deliver(9, bytes))
        bindings.unbind(9)
        #expect(!bindings.deliver(9, bytes))
    }

    /// A hello that found its room just before the room let its connections go is not bound to it: the
    /// router is told, and tells the page to try again.
    @Test func nothingBindsToARoomThatHasLetItsConnectionsGo() async throws {
        let transport = RecordingTransport()
        let bindings = ConnectionBindings()
        let (registry, _) = ServerFixtures.registry(transport: transport, bindings: bindings)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        let room = try #require(await registry.directory.room(created.code))
        #expect(bindings.bind(1, to: room))
        #expect(bindings.unbindAll(of: room) == [1])
        #expect(!bindings.bind(2, to: room))
        guard case .unbound = bindings.binding(of: 2) else { Issue.record("connection 2 is bound or let go"); return }
        #expect(bindings.unbindAll(of: room) == [])
    }

    /// A room that stops (its lease lost, handed over) unbinds its connections, then closes them with 1012
    /// so that they reconnect. A tap routed in between is not a hello: greeting it would refuse it with
    /// `hello_required` and a policy close (1008), after which the page gives up instead of reconnecting.
    @Test func aConnectionItsRoomLetGoIsClosedOnlyByTheRoomThatLetItGo() async throws {
        let transport = RecordingTransport()
        let bindings = ConnectionBindings()
        let (registry, events) = ServerFixtures.registry(transport: transport, bindings: bindings)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)
        events.hello(1, .join(room: created.code, nickname: "Ana"))
        _ = await transport.next("welcome", to: 1)
        await registry.settled()
        let room = try #require(await registry.directory.room(created.code))

        // What `RoomDirectory` does when it lets the room go, up to the refusal that follows.
        #expect(bindings.unbindAll(of: room) == [1])
        #expect(!transportDelivers(bindings, events, 1, .answer(question: 0, option: 1)), "let go: the router's")
        #expect(!transportDelivers(bindings, events, 1, ping(1)))
        await routedSoFar(events, transport, probe: 2)
        await registry.settled()
        #expect(transport.closeStatus(1) == nil, "closed by the router: \(String(describing: transport.closeStatus(1)))")
        #expect(!transport.types(to: 1).contains("error"))
        #expect(!transport.types(to: 1).contains("pong"), "nothing it sends is answered now")
        guard case .letGo = bindings.binding(of: 1) else { Issue.record("connection 1 is not let go"); return }

        events.yield(.closed(connection: 1))
        await routedSoFar(events, transport, probe: 3)
        await registry.settled()
        guard case .unbound = bindings.binding(of: 1) else { Issue.record("a closed connection is still remembered"); return }
    }

    @Test func aRefusedHelloBindsNothingAndACloseUnbinds() async throws {
        let transport = RecordingTransport()
        let bindings = ConnectionBindings()
        let (registry, events) = ServerFixtures.registry(transport: transport, bindings: bindings)
        let created = try await registry.directory.createRoom(story: ServerFixtures.story)

        events.yield(.opened(connection: 1, peer: "10.0.0.1"))
        #expect(!transportDelivers(bindings, events, 1, .join(room: "000000", nickname: "Ana")))
        _ = await transport.next("error", to: 1)
        await registry.settled()
        #expect(!transportDelivers(bindings, events, 1, ping(1)), "no room: still the router's")

        events.yield(.opened(connection: 2, peer: "10.0.0.2"))
        #expect(!transportDelivers(bindings, events, 2, .join(room: created.code, nickname: "Ben")))
        _ = await transport.next("welcome", to: 2)
        await registry.settled()
        #expect(transportDelivers(bindings, events, 2, ping(1)))
        events.yield(.closed(connection: 2))
        await routedSoFar(events, transport, probe: 3)
        await registry.settled()
        #expect(!transportDelivers(bindings, events, 2, ping(2)), "closed: unbound")
    }
}
