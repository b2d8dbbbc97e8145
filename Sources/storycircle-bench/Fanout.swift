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
    var rounds: Int
    var latency: Percentiles
    var throughputMessagesPerSecond: Double
    var throughputMessages: Int
    var messageBytes: Double
    /// The server's CPU time (user + system) per delivered message during the throughput phase: what a
    /// message costs the server, which the shared-machine throughput figure alone cannot show.
    var serverMicrosecondsPerMessage: Double?
}

/// Measures broadcast latency (trigger sent → each child received, same clock) over `rounds` rounds in
/// lock-step, then throughput with `burst` triggers per room back to back.
func runFanout(scenario: String, target: some FanoutTarget, port: Int, rooms: Int, childrenPerRoom: Int, rounds: Int, burst: Int, serverPID: Int32?) async throws -> FanoutResult {
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let layout = try await target.prepare(rooms: rooms, childrenPerRoom: childrenPerRoom, clients: clients)
    let total = rooms * childrenPerRoom
    var slot: [UInt64: Int] = [:]
    for (room, children) in layout.children.enumerated() {
        for (i, child) in children.enumerated() { slot[child] = room * childrenPerRoom + i }
    }
    let slots = slot
    let state = Locked(RoundState(total: total))

    var latencies: [UInt64] = []
    latencies.reserveCapacity(total * rounds)
    var bytes = 0
    var messages = 0
    for round in 0..<rounds {
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
        let received = state.withLock { ($0.receivedAt, $0.bytes) }
        for index in 0..<total { latencies.append(received.0[index] - sentAt[index / childrenPerRoom]) }
        bytes += received.1
        messages += total
    }

    // Throughput: every room's trigger fires `burst` times back to back.
    let expected = total * burst
    let latch = Latch(expected)
    clients.onMessage { id, data in
        guard slots[id] != nil, contains(data, roundMarker(0)) || contains(data, roundMarker(1)) else { return }
        latch.countDown()
    }
    let cpuBefore = try serverPID.map(cpuSeconds)
    let started = nanoseconds()
    for k in 0..<burst {
        for room in 0..<rooms { clients.send(target.trigger(round: rounds + k, room: room), to: layout.teachers[room]) }
    }
    guard await latch.wait(timeout: 120) else { throw BenchError("throughput: \(latch.count) of \(expected) messages missing after 120 s") }
    let seconds = Double(nanoseconds() - started) / 1e9
    let cpu = try serverPID.map(cpuSeconds).flatMap { after in cpuBefore.map { after - $0 } }
    return FanoutResult(
        scenario: scenario, target: target.name, rooms: rooms, children: total, rounds: rounds,
        latency: Percentiles(nanoseconds: latencies), throughputMessagesPerSecond: Double(expected) / seconds,
        throughputMessages: expected, messageBytes: Double(bytes) / Double(max(messages, 1)),
        serverMicrosecondsPerMessage: cpu.map { $0 * 1e6 / Double(expected) }
    )
}

/// A process's CPU time so far (user + system), from /proc.
func cpuSeconds(_ pid: Int32) throws -> Double {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (Double(fields[11])! + Double(fields[12])!) / ticks
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
    var name: String { "storycircle" }

    func prepare(rooms: Int, childrenPerRoom: Int, clients: LoadClients) async throws -> FanoutLayout {
        let created = try await RoomSetup(port: port, adminToken: adminToken).create(rooms, maxPlayers: max(childrenPerRoom, 100))
        let teachers = try await clients.connect(rooms)
        let children = try await clients.connect(rooms * childrenPerRoom)
        let welcomed = Latch(rooms * childrenPerRoom + rooms)
        let questions = Latch(rooms * childrenPerRoom)
        clients.onMessage { _, data in
            if contains(data, Array(#""type":"welcome""#.utf8)) { welcomed.countDown() }
            if contains(data, Array(#""type":"question""#.utf8)) { questions.countDown() }
        }
        for (room, teacher) in teachers.enumerated() {
            clients.send(#"{"type":"control","room":"\#(created[room].code)","token":"\#(created[room].teacherToken)"}"#, to: teacher)
            for i in 0..<childrenPerRoom {
                clients.send(#"{"type":"join","room":"\#(created[room].code)","nickname":"kid \#(room)-\#(i)"}"#, to: children[room * childrenPerRoom + i])
            }
        }
        guard await welcomed.wait(timeout: 120) else { throw BenchError("\(welcomed.count) hellos unanswered") }
        for teacher in teachers {
            clients.send(#"{"type":"command","command":"start"}"#, to: teacher)
            clients.send(#"{"type":"command","command":"skip"}"#, to: teacher)
        }
        guard await questions.wait(timeout: 120) else { throw BenchError("\(questions.count) children got no question") }
        return FanoutLayout(teachers: teachers, children: (0..<rooms).map { Array(children[($0 * childrenPerRoom)..<(($0 + 1) * childrenPerRoom)]) })
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
