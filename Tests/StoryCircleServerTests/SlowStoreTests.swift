import Foundation
import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer

/// A store that takes seconds for one room delays no other room: the store's blocking work runs on
/// threads of its own, so the rooms' actors, the `ConnectionRouter` and the `RoomDirectory` keep Swift's
/// cooperative threads.
@Suite("A slow store delays no other room")
struct SlowStoreTests {
    /// How long room B's replies may take: they wait for nothing of room A's, whose commits stay stalled
    /// until the test lets them end.
    static let prompt = Duration.seconds(5)

    @Test func roomBIsAnsweredWhileRoomAsCommitsAndANewRoomAreStalled() async throws {
        let transport = RecordingTransport()
        let store = SlowStore()
        defer { store.finishSlowCalls() }  // a failed expectation must not leave the store's threads stalled
        let clock = ManualClock()
        let (registry, events) = ServerFixtures.registry(transport: transport, store: store, clock: clock)
        let roomA = try await registry.directory.createRoom(story: ServerFixtures.story)
        let roomB = try await registry.directory.createRoom(story: ServerFixtures.story)
        store.slowDown(roomA.code)

        // Four children join room A: each join's commit holds a store thread until the end of the test
        // (more of them than there are cores).
        for child in UInt64(1)...4 { events.hello(child, .join(room: roomA.code, nickname: "A\(child)")) }
        await store.waitForSlowCalls(4)

        // Room B: a join is welcomed (its record stored), a ping answered, the quiz runs and an answer is
        // acknowledged, all while room A's commits are stalled.
        events.hello(11, .join(room: roomB.code, nickname: "Bea"))
        _ = await transport.log.next("welcome", to: 11, timeout: Self.prompt)
        // Room A's commits are stalled, so its joins cannot have been welcomed.
        #expect(!transport.types(to: 1).contains("welcome"), "room A's join is not stored yet, so not welcomed")
        events.send(11, .ping(id: 1, clientTime: 1, roundTripMs: 10))
        _ = await transport.log.next("pong", to: 11, timeout: Self.prompt)
        let room = try #require(await registry.directory.room(roomB.code))
        _ = try await room.perform(.start)
        _ = try await room.perform(.skip)
        guard case .question(let question) = await transport.log.next("question", to: 11, timeout: Self.prompt) else {
            Issue.record("expected a question")
            return
        }
        clock.advance(to: question.opensAt + 800)
        events.send(11, .answer(question: 0, option: 2))
        #expect(await transport.log.next("answer.ack", to: 11, timeout: Self.prompt) == .answerAck(AnswerAck(question: 0, option: 2)))

        // A room being created stalls too; meanwhile room B still welcomes and answers at once.
        store.slowDownCreations()
        let creating = Task { try await registry.directory.createRoom(story: ServerFixtures.story) }
        await store.waitForSlowCalls(5)
        events.hello(12, .join(room: roomB.code, nickname: "Bo"))
        _ = await transport.log.next("welcome", to: 12, timeout: Self.prompt)
        events.send(12, .ping(id: 2, clientTime: 2, roundTripMs: 10))
        _ = await transport.log.next("pong", to: 12, timeout: Self.prompt)

        // Once the slow work ends, room A's children are welcomed (their joins stored) and the new room
        // exists.
        #expect(!transport.types(to: 1).contains("welcome"), "room A's join is still not stored")
        store.finishSlowCalls()
        for child in UInt64(1)...4 { _ = await transport.next("welcome", to: child) }
        let created = try await creating.value
        #expect(await registry.directory.room(created.code) != nil)
        await registry.shutDown()
        await store.close()
    }
}
