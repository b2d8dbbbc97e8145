import Foundation
import Glibc
import Locking

/// Who the clients talk to: StoryCircle itself, or a minimal broadcast server (a baseline).
protocol FanoutTarget: Sendable {
    var name: String { get }
    /// Connects teachers and children and gets every room to where a trigger broadcasts to it.
    func prepare(rooms: Int, childrenPerRoom: Int, clients: LoadClients) async throws -> FanoutLayout
    /// What the room's trigger connection sends for round `round`.
    func trigger(round: Int, room: Int) -> String
}

struct FanoutLayout: Sendable {
    var teachers: [UInt64]
    var children: [[UInt64]]

    /// Each child's place among all children (room by room), by its connection.
    func slots(childrenPerRoom: Int) -> [UInt64: Int] {
        var slots: [UInt64: Int] = [:]
        for (room, children) in children.enumerated() {
            for (i, child) in children.enumerated() { slots[child] = room * childrenPerRoom + i }
        }
        return slots
    }
}

/// The broadcast of round `round` is recognised by this marker.
func roundMarker(_ round: Int) -> [UInt8] {
    Array((round % 2 == 0 ? "\"paused\"" : "\"resumed\"").utf8)
}

struct FanoutResult: Encodable {
    var scenario: String
    var target: String
    var rooms: Int
    var children: Int
    /// Measured latency rounds; `warmupRounds` ran before them and are not in `latency`.
    var rounds: Int
    var warmupRounds: Int
    var latency: Percentiles
    var throughputMessagesPerSecond: Double
    var throughputMessages: Int
    var messageBytes: Double
    /// The server's CPU time and context switches per frame it sent during the throughput burst (the
    /// children's and the teachers'): what a message costs the server, which the shared-machine throughput
    /// figure alone cannot show.
    var cost: ServerCost?
    /// Frames the trigger connections received in the burst: StoryCircle's teacher gets every broadcast
    /// too; a peer sends its trigger nothing. Counted in `cost` and the figures below.
    var framesToTeachers: Int
    /// Per frame in the burst: the server's time on a CPU in nanoseconds, summed over its threads' schedstat.
    var nanosecondsPerMessage: Double?
    /// Per frame: system calls counted by `perf stat` on the server from the burst's start for
    /// `syscallSeconds`, divided by the frames that arrived within that window.
    var syscallsPerMessage: [String: Double]?
    var framesInSyscallWindow: Int?
    /// Which side was the bottleneck in the burst: the server's or the generator's CPU at ≥ 90 % of a core.
    /// A burst bound by the generator measures the generator's throughput, not the server's.
    var saturated: String
}

/// Measures broadcast latency (trigger sent → each child received, same clock) over `rounds` rounds in
/// lock-step after `warmup` rounds that are not counted, then throughput and server cost with `burst`
/// triggers per room back to back.
/// `phaseFile`, if given, gets the line `burst` as the throughput burst starts (bench/profile.sh attaches
/// its profilers then, so they see the steady state and not the setup).
func runFanout(scenario: String, target: some FanoutTarget, port: Int, rooms: Int, childrenPerRoom: Int, rounds: Int, warmup: Int, burst: Int, serverPID: Int32?, syscallSeconds: Double = 1, phaseFile: String? = nil) async throws -> FanoutResult {
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let layout = try await target.prepare(rooms: rooms, childrenPerRoom: childrenPerRoom, clients: clients)
    let total = rooms * childrenPerRoom
    let slots = layout.slots(childrenPerRoom: childrenPerRoom)
    let state = Locked(RoundState(total: total))

    var latencies: [UInt64] = []
    latencies.reserveCapacity(total * rounds)
    var bytes = 0
    var messages = 0
    for round in 0..<(warmup + rounds) {
        let marker = roundMarker(round)
        let latch = Latch(total)
        state.withLock { $0.reset() }
        clients.onMessage { id, data in
            guard let index = slots[id], contains(data, marker) else { return }
            let now = nanoseconds()
            let first = state.withLock { state -> Bool in
                guard state.receivedAt[index] == 0 else { return false }
                state.receivedAt[index] = now
                state.bytes += data.count
                return true
            }
            if first { latch.countDown() }
        }
        var sentAt = [UInt64](repeating: 0, count: rooms)
        for room in 0..<rooms {
            sentAt[room] = nanoseconds()
            clients.send(target.trigger(round: round, room: room), to: layout.teachers[room])
        }
        guard await latch.wait(timeout: 30) else { throw BenchError("round \(round): \(latch.count) of \(total) children got nothing in 30 s") }
        guard round >= warmup else { continue }
        let received = state.withLock { ($0.receivedAt, $0.bytes) }
        for index in 0..<total { latencies.append(received.0[index] - sentAt[index / childrenPerRoom]) }
        bytes += received.1
        messages += total
    }

    // Throughput: every room's trigger fires `burst` times back to back.
    let expected = total * burst
    let latch = Latch(expected)
    let teachers = Set(layout.teachers)
    // perf's window (it counts for a fixed time from its start) and the frames, children's and teachers',
    // that arrived inside it; and the teachers' frames of the whole burst.
    let window = Locked((from: UInt64(0), until: UInt64(0), inWindow: 0, teachers: 0))
    clients.onMessage { id, data in
        guard contains(data, roundMarker(0)) || contains(data, roundMarker(1)) else { return }
        let child = slots[id] != nil
        guard child || teachers.contains(id) else { return }
        let now = nanoseconds()
        window.withLock { window in
            if now >= window.from && now < window.until { window.inWindow += 1 }
            if !child { window.teachers += 1 }
        }
        if child { latch.countDown() }
    }
    if let phaseFile { try "burst\n".write(toFile: phaseFile, atomically: true, encoding: .utf8) }
    let perfFrom = nanoseconds()
    let counter = serverPID.flatMap { SyscallCounter(pid: $0, seconds: syscallSeconds) }
    if counter != nil {
        window.withLock { $0.from = perfFrom; $0.until = perfFrom + UInt64(syscallSeconds * 1e9) }
        // perf attaches within milliseconds.
        try await Task.sleep(for: .milliseconds(200))
    }
    let sched = serverPID.map(schedNanoseconds) ?? [:]
    let meter = try CostMeter(pid: serverPID)
    let started = nanoseconds()
    for k in 0..<burst {
        for room in 0..<rooms { clients.send(target.trigger(round: warmup + rounds + k, room: room), to: layout.teachers[room]) }
    }
    guard await latch.wait(timeout: 120) else { throw BenchError("throughput: \(latch.count) of \(expected) messages missing after 120 s") }
    let seconds = Double(nanoseconds() - started) / 1e9
    // The teacher's own frames of the last broadcasts may still be on their way: a moment for them.
    if !layout.teachers.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
    let (inWindow, teacherFrames) = window.withLock { window in
        let counts = (window.inWindow, window.teachers)
        window.until = 0
        return counts
    }
    let sent = expected + teacherFrames
    let cost = try meter.finish(messages: sent)
    var perMessage: Double?
    if let serverPID {
        let spent = schedNanoseconds(serverPID, since: sched)
        perMessage = Double(spent) / Double(max(sent, 1))
    }
    let calls = await counter?.finish()?.mapValues { Double($0) / Double(max(inWindow, 1)) }
    let saturated = cost?.saturated ?? "neither"
    return FanoutResult(
        scenario: scenario, target: target.name, rooms: rooms, children: total, rounds: rounds, warmupRounds: warmup,
        latency: Percentiles(nanoseconds: latencies), throughputMessagesPerSecond: Double(expected) / seconds,
        throughputMessages: expected, messageBytes: Double(bytes) / Double(max(messages, 1)), cost: cost,
        framesToTeachers: teacherFrames, nanosecondsPerMessage: perMessage, syscallsPerMessage: calls,
        framesInSyscallWindow: counter == nil ? nil : inWindow, saturated: saturated
    )
}

struct RoundState {
    var receivedAt: [UInt64]
    var bytes = 0

    init(total: Int) { receivedAt = Array(repeating: 0, count: total) }

    mutating func reset() {
        for i in receivedAt.indices { receivedAt[i] = 0 }
        bytes = 0
    }
}

/// StoryCircle: rooms created over HTTP, children `join`, a teacher per room `control`s; the rooms are
/// taken to their first question, where `pause` and `resume` broadcast to everyone.
struct StoryCircleTarget: FanoutTarget {
    let port: Int
    let adminToken: String
    /// How the results name this server: "storycircle", or a variant's name (a setting changed, another build).
    var name = "storycircle"

    func prepare(rooms: Int, childrenPerRoom: Int, clients: LoadClients) async throws -> FanoutLayout {
        let classroom = try await Classroom.seat(port: port, adminToken: adminToken, rooms: rooms, childrenPerRoom: childrenPerRoom, dashboards: false, clients: clients)
        _ = try await classroom.toFirstQuestion(clients: clients)
        return FanoutLayout(teachers: classroom.teachers, children: classroom.children)
    }

    func trigger(round: Int, room: Int) -> String {
        round % 2 == 0 ? #"{"type":"command","command":"pause"}"# : #"{"type":"command","command":"resume"}"#
    }
}

/// A minimal broadcast server (`bench/baseline/`): `J<room>` joins, `B<room>|<payload>` sends the payload to
/// everyone in the room. The payload matches StoryCircle's message size.
struct BaselineTarget: FanoutTarget {
    let name: String
    let payloadBytes: Int

    func prepare(rooms: Int, childrenPerRoom: Int, clients: LoadClients) async throws -> FanoutLayout {
        let teachers = try await clients.connect(rooms)
        let children = try await clients.connect(rooms * childrenPerRoom)
        let joined = Latch(rooms * childrenPerRoom)
        clients.onMessage { _, data in if data == Array("ok".utf8) { joined.countDown() } }
        for room in 0..<rooms {
            for i in 0..<childrenPerRoom { clients.send("J\(room)", to: children[room * childrenPerRoom + i]) }
        }
        guard await joined.wait(timeout: 120) else { throw BenchError("\(joined.count) joins unanswered") }
        return FanoutLayout(teachers: teachers, children: (0..<rooms).map { Array(children[($0 * childrenPerRoom)..<(($0 + 1) * childrenPerRoom)]) })
    }

    func trigger(round: Int, room: Int) -> String {
        let head = round % 2 == 0 ? #"{"type":"paused","pad":""# : #"{"type":"resumed","pad":""#
        let padding = String(repeating: "x", count: max(0, payloadBytes - head.count - 2))
        return "B\(room)|\(head)\(padding)\"}"
    }
}
