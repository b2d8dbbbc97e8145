import Foundation
import Locking

/// The classroom's rates with the broadcast alone, for StoryCircle and the peers alike: the rooms broadcast in
/// turn, `broadcastsPerSecond` across all of them, open loop (a broadcast goes at its time whether or not
/// the last has arrived). The times are a Poisson process with a fixed seed, the same for every server: at a
/// steady period the server's wake-ups lock to the kernel's tick and its 10 ms user/system split reads one
/// of them as nothing (seen: user 0.00 µs per frame). Between broadcasts the server has
/// nothing to do and sleeps, as it does in a class, so a frame's cost includes waking up for it: the cost
/// the lock-step scenario, which never lets a server rest, does not see. The same frames the sustained
/// scenario's mix is mostly made of, and a measure that peers can be put beside.
struct PacedResult: Encodable {
    var scenario = "paced"
    var target: String
    var rooms: Int
    var children: Int
    /// Broadcasts per second across all rooms, as asked; each is one frame to each child of its room.
    var broadcastsPerSecond: Double
    var seconds: Double
    /// Broadcasts whose time fell in the measured window.
    var broadcasts: Int
    /// A broadcast's intended time → each child has it, for every child and measured broadcast.
    var latency: Percentiles
    /// Frames that arrived in the measured window: the children's, and the trigger connections' (StoryCircle's
    /// teacher gets each broadcast too), which the cost per message divides by.
    var framesToChildren: Int
    var framesToTeachers: Int
    /// Children that never got a measured broadcast (0 unless the server dropped or fell a room behind).
    var missed: Int
    /// The children's frames' mean size (a peer is given StoryCircle's).
    var messageBytes: Double
    var cost: ServerCost?
    /// Per frame: the server's time on a CPU in nanoseconds, summed over its threads' schedstat.
    var nanosecondsPerMessage: Double?
    /// Per frame: system calls counted by `perf stat` over the window (nil without perf).
    var syscallsPerMessage: [String: Double]?
    var saturated: String
}

extension PacedResult {
    var summary: String {
        var line = "paced [\(target)] \(rooms)×\(children / max(rooms, 1)) at \(Int(broadcastsPerSecond)) broadcasts/s: \(broadcasts) in \(String(format: "%.1f", seconds)) s · \(latency.summary)"
        line += " · \(framesToChildren)+\(framesToTeachers) frames · \(missed) missed"
        if let nanosecondsPerMessage { line += String(format: " · %.2f µs/msg on CPU (schedstat)", nanosecondsPerMessage / 1000) }
        if let syscallsPerMessage {
            line += " · per msg: " + syscallsPerMessage.keys.sorted().map { "\($0) " + String(format: "%.3f", syscallsPerMessage[$0] ?? 0) }.joined(separator: ", ")
        }
        return line
    }
}

/// What the receiving threads and the pacing task share.
private struct PacedState {
    /// Per room: the broadcast under way (its round), when it was meant to go, and whether it is measured.
    var round: [Int]
    var intended: [UInt64]
    var measured: [Bool]
    var marker: [[UInt8]]
    /// Per child: the last round it got.
    var got: [Int]
    var latencies: [UInt64] = []
    var windowFrom: UInt64 = .max
    var windowUntil: UInt64 = .max
    var children = 0
    var teachers = 0
    var bytes = 0
    var missed = 0

    init(rooms: Int, total: Int) {
        round = Array(repeating: -1, count: rooms)
        intended = Array(repeating: 0, count: rooms)
        measured = Array(repeating: false, count: rooms)
        marker = Array(repeating: [], count: rooms)
        got = Array(repeating: -1, count: total)
    }

    func inWindow(_ time: UInt64) -> Bool { time >= windowFrom && time < windowUntil }
}

func runPaced(target: some FanoutTarget, port: Int, rooms: Int, childrenPerRoom: Int, broadcastsPerSecond: Double, warmup: Double, seconds: Double, serverPID: Int32?) async throws -> PacedResult {
    guard broadcastsPerSecond > 0, seconds > 0 else { throw BenchError("paced needs a positive --broadcasts-per-second and --seconds") }
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let layout = try await target.prepare(rooms: rooms, childrenPerRoom: childrenPerRoom, clients: clients)
    let total = rooms * childrenPerRoom
    var slot: [UInt64: Int] = [:]
    for (room, children) in layout.children.enumerated() {
        for (i, child) in children.enumerated() { slot[child] = room * childrenPerRoom + i }
    }
    let slots = slot
    let teachers = Set(layout.teachers)
    let state = Locked(PacedState(rooms: rooms, total: total))
    clients.onMessage { id, data in
        let now = nanoseconds()
        state.withLock { state in
            guard let index = slots[id] else {
                if teachers.contains(id), state.inWindow(now) { state.teachers += 1 }
                return
            }
            let room = index / childrenPerRoom
            let round = state.round[room]
            guard round >= 0, state.got[index] < round, contains(data, state.marker[room]) else { return }
            state.got[index] = round
            if state.inWindow(now) {
                state.children += 1
                state.bytes += data.count
            }
            if state.measured[room] { state.latencies.append(since(state.intended[room], now)) }
        }
    }

    // Open loop: broadcast n goes to room n mod rooms, an exponentially distributed gap after the one
    // before. A late wake-up sends what is due at once, timed from when each was meant to go.
    let meanGap = 1e9 / broadcastsPerSecond
    var random = SplitMix64(seed: 0x5C0F_FEE5)
    var due: UInt64 = 0
    let start = nanoseconds() + 100_000_000
    let windowFrom = start + UInt64(warmup * 1e9)
    let windowUntil = windowFrom + UInt64(seconds * 1e9)
    state.withLock { state in
        state.windowFrom = windowFrom
        state.windowUntil = windowUntil
    }
    var sched: [Int: UInt64] = [:]
    var meter: CostMeter?
    var counter: SyscallCounter?
    var measuredBroadcasts = 0
    var n = 0
    due = start
    while true {
        due += UInt64(-log(1 - random.nextUnit()) * meanGap)
        if due >= windowUntil { break }
        if meter == nil, due >= windowFrom {
            // The window opens: the meters start here (perf attaches within milliseconds).
            counter = serverPID.flatMap { SyscallCounter(pid: $0, seconds: seconds) }
            sched = serverPID.map(schedNanoseconds) ?? [:]
            meter = try CostMeter(pid: serverPID)
        }
        let now = nanoseconds()
        if due > now { try await Task.sleep(for: .nanoseconds(Int(due - now))) }
        let room = n % rooms, round = n / rooms
        let measured = due >= windowFrom
        let missing: Int = state.withLock { state in
            // The room's last broadcast is due to have reached every child by now (a room's turn comes
            // round every rooms / rate seconds); the children that still lack it are counted.
            var missing = 0
            if state.measured[room] {
                for index in room * childrenPerRoom..<(room + 1) * childrenPerRoom where state.got[index] < state.round[room] { missing += 1 }
            }
            state.round[room] = round
            state.intended[room] = due
            state.measured[room] = measured
            state.marker[room] = roundMarker(round)
            return missing
        }
        if missing > 0 { state.withLock { $0.missed += missing } }
        clients.send(target.trigger(round: round, room: room), to: layout.teachers[room])
        if measured { measuredBroadcasts += 1 }
        n += 1
    }
    // The last broadcasts get a second to arrive; the cost's window closed with the broadcasts'.
    let (spentAfter, cost) = (serverPID.map(schedNanoseconds), try meter?.finish(messages: 1))
    let calls = await counter?.finish()
    let deadline = nanoseconds() + 1_000_000_000
    while nanoseconds() < deadline {
        let done = state.withLock { state in
            (0..<total).allSatisfy { !state.measured[$0 / childrenPerRoom] || state.got[$0] >= state.round[$0 / childrenPerRoom] }
        }
        if done { break }
        try await Task.sleep(for: .milliseconds(10))
    }
    let final = state.withLock { state in
        var missed = state.missed
        for index in 0..<total where state.measured[index / childrenPerRoom] && state.got[index] < state.round[index / childrenPerRoom] { missed += 1 }
        return (state.latencies, state.children, state.teachers, missed, state.bytes)
    }
    let messages = final.1 + final.2
    var costPerMessage = cost
    if let cost {
        // The meter was read as the window closed; its figures per message are for the frames in the window.
        costPerMessage = rescale(cost, messages: messages)
    }
    var perMessage: Double?
    if let spentAfter {
        let spent = spentAfter.reduce(UInt64(0)) { sum, entry in sum + (entry.value - min(entry.value, sched[entry.key] ?? 0)) }
        perMessage = Double(spent) / Double(max(messages, 1))
    }
    var saturated = "neither"
    if let cost {
        if cost.serverCPUPercent >= 90 { saturated = "server" }
        if cost.generatorCPUPercent >= 90 { saturated = saturated == "server" ? "both" : "generator" }
    }
    return PacedResult(
        target: target.name, rooms: rooms, children: total, broadcastsPerSecond: broadcastsPerSecond, seconds: seconds,
        broadcasts: measuredBroadcasts, latency: Percentiles(nanoseconds: final.0), framesToChildren: final.1, framesToTeachers: final.2,
        missed: final.3, messageBytes: Double(final.4) / Double(max(final.1, 1)), cost: costPerMessage, nanosecondsPerMessage: perMessage,
        syscallsPerMessage: calls?.mapValues { Double($0) / Double(max(messages, 1)) }, saturated: saturated
    )
}

/// A window's cost, measured before its frames were all counted, divided by `messages` instead.
private func rescale(_ cost: ServerCost, messages: Int) -> ServerCost {
    var cost = cost
    let count = Double(max(messages, 1))
    cost.messages = messages
    cost.microsecondsPerMessage = (cost.userSeconds + cost.systemSeconds) * 1e6 / count
    cost.userMicrosecondsPerMessage = cost.userSeconds * 1e6 / count
    cost.systemMicrosecondsPerMessage = cost.systemSeconds * 1e6 / count
    cost.voluntarySwitchesPerMessage *= 1 / count
    cost.involuntarySwitchesPerMessage *= 1 / count
    return cost
}

/// A small seeded generator (SplitMix64), so that every server gets the same broadcast times.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
