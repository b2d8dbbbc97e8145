import Foundation
import Locking
import StoryCircleCore
import StoryCircleServer
import StoryCircleTesting
import TransportCore

/// A narrator that answers at once with sentence durations of (i + 1) seconds, and fails for voices it
/// is told are missing.
package final class ScriptedNarrator: NarrationPreparing {
    package struct MissingVoice: FriendlyError {
        package var voice: String
        package var narrationProblem: NarrationProblem {
            NarrationProblem(.voiceNotInstalled, "Pip could not find the voice \"\(voice)\".", params: ["voice": voice])
        }
    }

    package let missingVoices: Set<String>
    private let requests = Locked<[NarrationRequest]>([])
    private let readingAhead = Locked<[(room: String, request: NarrationRequest)]>([])
    private let stopped = Locked<[String]>([])

    package init(missingVoices: Set<String> = []) {
        self.missingVoices = missingVoices
    }

    package var received: [NarrationRequest] { requests.withLock { $0 } }

    /// The read-aheads rooms asked for, in order.
    package var readAheads: [(room: String, request: NarrationRequest)] { readingAhead.withLock { $0 } }

    package func readAhead(_ request: NarrationRequest, room: String) {
        readingAhead.withLock { $0.append((room, request)) }
    }

    /// The rooms that said they read ahead no more, in order.
    package var stoppedReadingAhead: [String] { stopped.withLock { $0 } }

    package func stopReadingAhead(room: String) {
        stopped.withLock { $0.append(room) }
    }

    package func prepare(_ request: NarrationRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> NarrationPlan {
        requests.withLock { $0.append(request) }
        if missingVoices.contains(request.settings.voice) { throw MissingVoice(voice: request.settings.voice) }
        var sentences: [NarratedSentence] = []
        for (index, text) in request.sentences.enumerated() {
            sentences.append(NarratedSentence(index: index, text: text, durationMs: (index + 1) * 1_000, words: [], audio: "/audio/\(index).mp3"))
            progress(index + 1, request.sentences.count)
        }
        return NarrationPlan(sentences: sentences)
    }
}

/// A store that, while `holding`, keeps every append's completion until the test releases it: "is it
/// durable yet?" is under the test's control. Not holding, it completes at once.
package final class GatedStore: RoomStore {
    package init() {}

    private struct State {
        var holding = false
        var held: [@Sendable ((any Error)?) -> Void] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let memory = MemoryRoomStore()
    private let state = Locked(State())

    package func hold() { state.withLock { $0.holding = true } }

    package var heldCount: Int { state.withLock { $0.held.count } }

    /// Returns once at least `count` completions are being held.
    package func waitForHeld(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Completes everything held and stops holding.
    package func releaseAll() {
        let completions = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        completions.forEach { $0(nil) }
    }

    package func createRoom(_ header: RoomHeader) async throws { try await memory.createRoom(header) }

    package func append(_ record: RoomRecord, room code: String, resuming: Bool, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        memory.append(record, room: code) { _ in }
        let (complete, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            guard state.holding else { return (true, []) }
            state.held.append(whenDurable)
            let count = state.held.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return (false, ready)
        }
        if complete { whenDurable(nil) }
        ready.forEach { $0.resume() }
    }

    package func archive(room code: String) async throws -> RoomArchive? { try await memory.archive(room: code) }
    package func unfinishedRooms() async throws -> [RoomArchive] { try await memory.unfinishedRooms() }
    package func summaries() async throws -> [RoomSummary] { try await memory.summaries() }
    package func codeExists(_ code: String) async throws -> Bool { try await memory.codeExists(code) }
    package func purge(createdBefore cutoff: ServerTime) async throws -> Int { try await memory.purge(createdBefore: cutoff) }
    package var health: StoreHealth { .ok }
    package var offers: Storage { Storage(rooms: self) }
    package func probe() async -> StoreHealth { .ok }
    package func close() async {}
}

package enum ServerFixtures {
    package static let story = Story(
        title: "Test Story",
        sentences: ["Pip lost a gear.", "It was blue.", "Dot had it."],
        quiz: Quiz(questions: [
            Question(text: "What colour was the gear?", options: ["Red", "Green", "Blue", "Yellow"], answer: 2, timeLimit: 20),
            Question(text: "Who had it?", options: ["Dot", "Pip", "Sam"], answer: 0, timeLimit: 10),
        ])
    )

    /// A registry over the given doubles, routing the events the test yields.
    package static func registry(
        transport: RecordingTransport, store: any RoomStore = MemoryRoomStore(), clock: ManualClock = ManualClock(),
        narrator: any NarrationPreparing = ScriptedNarrator(), settings: RoomRegistry.Settings = RoomRegistry.Settings(),
        metrics: ServerMetrics = ServerMetrics(), bindings: ConnectionBindings = ConnectionBindings()
    ) -> (RoomRegistry, AsyncStream<TransportCore.TransportEvent>.Continuation) {
        let (events, sink) = AsyncStream.makeStream(of: TransportCore.TransportEvent.self)
        let services = RoomServices(
            transport: transport, storage: store.offers, clock: clock, narrator: narrator, lookalikes: LookalikeTable(), metrics: metrics,
            logger: StoryCircleLog(label: "test", minimumLevel: .error, sink: { _ in }), bindings: bindings
        )
        let registry = RoomRegistry(events: events, services: services, settings: settings)
        Task { await registry.run() }
        return (registry, sink)
    }

    /// One node of several sharing `store`, as nodes share PostgreSQL: rooms are loaded only where the
    /// proxy sends them, each under its lease.
    package struct Node: Sendable {
        package let registry: RoomRegistry
        package let events: AsyncStream<TransportCore.TransportEvent>.Continuation
        package let transport: RecordingTransport
    }

    /// The key every node of a test's cluster is given, as a cluster's nodes share `tokenKeyFile`: a room's
    /// tokens, issued by one node, are proved on any other.
    package static let clusterTokens = RoomTokens(key: Array(repeating: 0x5C, count: 32))

    package static func node(
        _ name: String, store: any RoomLeases, clock: ManualClock = ManualClock(), leaseClock: ManualMonotonicClock = ManualMonotonicClock(),
        narrator: ScriptedNarrator = ScriptedNarrator(), configure: (inout RoomRegistry.Settings) -> Void = { _ in }
    ) -> Node {
        let transport = RecordingTransport()
        var settings = RoomRegistry.Settings()
        settings.nodeId = name
        // Renewals run on `leaseClock`, which moves only when the test moves it, while the store ends leases
        // in real time: a long lease keeps a loaded machine from letting a room's lease lapse mid-test.
        settings.leaseSeconds = 300
        configure(&settings)
        let (events, sink) = AsyncStream.makeStream(of: TransportCore.TransportEvent.self)
        // Shared whatever the store: its leases are offered, as PostgreSQL offers them.
        let services = RoomServices(
            transport: transport, storage: Storage(rooms: store, leases: store), clock: clock, narrator: narrator, lookalikes: LookalikeTable(),
            metrics: ServerMetrics(), logger: StoryCircleLog(label: "test", minimumLevel: .error, sink: { _ in }), leaseClock: leaseClock,
            tokens: clusterTokens
        )
        let registry = RoomRegistry(events: events, services: services, settings: settings)
        Task { await registry.run() }
        return Node(registry: registry, events: sink, transport: transport)
    }
}


extension AsyncStream<TransportEvent>.Continuation {
    /// A client connecting and sending `message` as its first frame.
    package func hello(_ connection: UInt64, _ message: ClientMessage, peer: String = "10.0.0.1") {
        yield(.opened(connection: connection, peer: peer))
        send(connection, message)
    }

    package func send(_ connection: UInt64, _ message: ClientMessage) {
        yield(.message(connection: connection, bytes: Array(try! JSONEncoder().encode(message))))
    }

    package func raw(_ connection: UInt64, _ text: String) {
        yield(.message(connection: connection, bytes: Array(text.utf8)))
    }
}
