import Foundation
import Locking

/// The classroom's rates with the broadcast alone, for StoryCircle and the peers alike: the rooms broadcast in
/// turn, `broadcastsPerSecond` across all of them, open loop (a broadcast goes at its time whether or not
/// the last has arrived). Between broadcasts the server has nothing to do and sleeps, as it does in a class,
/// so a frame's cost includes waking up for it, which lock-step spreads over a whole round's frames. The
/// times are a Poisson process with a fixed seed, the same for every server: at a steady period the
/// server's wake-ups lock to the kernel's tick, and /proc's 10 ms user/system split then reads one of them
/// as nothing.
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
    /// Child × broadcast pairs still missing when the room's next turn came (or a second after the window, for
    /// the last): lost, or later than a whole turn. 0 unless the server fell that far behind.
    var missed: Int
    /// The children's frames' mean size (a peer is given StoryCircle's).
    var messageBytes: Double
    var cost: ServerCost?
    /// Per frame: the server's time on a CPU in nanoseconds, summed over its threads' schedstat.
    var nanosecondsPerMessage: Double?
    /// Per frame: system calls counted by `perf stat` for `seconds` from its start, divided by the frames that
    /// arrived in that span (nil without perf).
    var syscallsPerMessage: [String: Double]?
    var framesInSyscallWindow: Int?
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
    /// perf's own span, and the frames (children's and teachers') that arrived in it.
    var perfFrom: UInt64 = .max
    var perfUntil: UInt64 = .max
    var framesInPerf = 0
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
    guard rooms > 0, childrenPerRoom > 0 else { throw BenchError("paced needs at least one room and one child a room") }
    guard broadcastsPerSecond.isFinite, broadcastsPerSecond > 0, seconds.isFinite, seconds > 0, warmup.isFinite, warmup >= 0 else {
        throw BenchError("paced needs a positive --broadcasts-per-second and --seconds, and a --warmup of 0 or more")
    }
    // A room's broadcast is recognised by its marker until the room's next turn (the markers alternate), so
    // a turn must come round well after a broadcast arrives.
    guard Double(rooms) / broadcastsPerSecond >= 0.1 else {
        throw BenchError("paced needs a room's turns 0.1 s apart or more on average (rooms ÷ broadcasts per second); more rooms or a lower rate")
    }
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let layout = try await target.prepare(rooms: rooms, childrenPerRoom: childrenPerRoom, clients: clients)
    let total = rooms * childrenPerRoom
    let slots = layout.slots(childrenPerRoom: childrenPerRoom)
    let teachers = Set(layout.teachers)
    let state = Locked(PacedState(rooms: rooms, total: total))
    clients.onMessage { id, data in
        let now = nanoseconds()
        state.withLock { state in
            let inPerf = now >= state.perfFrom && now < state.perfUntil
            guard let index = slots[id] else {
                if teachers.contains(id) {
                    if state.inWindow(now) { state.teachers += 1 }
                    if inPerf { state.framesInPerf += 1 }
                }
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
            if inPerf { state.framesInPerf += 1 }
            if state.measured[room] { state.latencies.append(since(state.intended[room], now)) }
        }
    }

    let start = nanoseconds() + 100_000_000
    let windowFrom = start + UInt64(warmup * 1e9)
    let windowUntil = windowFrom + UInt64(seconds * 1e9)
    state.withLock { state in
        state.windowFrom = windowFrom
        state.windowUntil = windowUntil
    }
    // The meters follow the clock, not the broadcasts: perf from a moment before the window (it attaches
    // within milliseconds and then counts for `seconds`, over frames counted in its own span), the CPU from
    // the window's first instant to its last.
    let meters = Task { () throws -> (cost: ServerCost?, sched: UInt64?, calls: [String: Int]?) in
        try await sleep(until: windowFrom - min(windowFrom - start, 200_000_000))
        let perfFrom = nanoseconds()
        let counter = serverPID.flatMap { SyscallCounter(pid: $0, seconds: seconds) }
        if counter != nil {
            state.withLock { state in
                state.perfFrom = perfFrom
                state.perfUntil = perfFrom + UInt64(seconds * 1e9)
            }
        }
        try await sleep(until: windowFrom)
        let before = serverPID.map(schedNanoseconds)
        let meter = try CostMeter(pid: serverPID)
        try await sleep(until: windowUntil)
        let cost = try meter.finish(messages: 1)
        let spent = before.flatMap { before in serverPID.map { schedNanoseconds($0, since: before) } }
        return (cost, spent, await counter?.finish())
    }

    // Open loop: broadcast n goes to room n mod rooms, an exponentially distributed gap after the one
    // before. A late wake-up sends what is due at once, timed from when each was meant to go.
    let meanGap = 1e9 / broadcastsPerSecond
    var random = SeededRandom(seed: 0x5C0F_FEE5)
    var due = start
    var measuredBroadcasts = 0
    var n = 0
    while true {
        due += UInt64(min(-log(1 - random.unit()) * meanGap, 60e9))
        if due >= windowUntil { break }
        try await sleep(until: due)
        let room = n % rooms, round = n / rooms
        let measured = due >= windowFrom
        state.withLock { state in
            // The room's last broadcast has had a whole turn to reach every child: whoever lacks it now
            // is counted (lost, or later than the turn).
            if state.measured[room] {
                for index in room * childrenPerRoom..<(room + 1) * childrenPerRoom where state.got[index] < state.round[room] { state.missed += 1 }
            }
            state.round[room] = round
            state.intended[room] = due
            state.measured[room] = measured
            state.marker[room] = roundMarker(round)
        }
        clients.send(target.trigger(round: round, room: room), to: layout.teachers[room])
        if measured { measuredBroadcasts += 1 }
        n += 1
    }
    let measuredWindow = try await meters.value
    // The last broadcasts get a second to arrive.
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
        return (latencies: state.latencies, children: state.children, teachers: state.teachers, missed: missed, bytes: state.bytes, framesInPerf: state.framesInPerf)
    }
    let messages = final.children + final.teachers
    let cost = measuredWindow.cost.map { rescale($0, messages: messages) }
    let perMessage = measuredWindow.sched.map { Double($0) / Double(max(messages, 1)) }
    let saturated = cost?.saturated ?? "neither"
    return PacedResult(
        target: target.name, rooms: rooms, children: total, broadcastsPerSecond: broadcastsPerSecond, seconds: seconds,
        broadcasts: measuredBroadcasts, latency: Percentiles(nanoseconds: final.latencies), framesToChildren: final.children,
        framesToTeachers: final.teachers, missed: final.missed, messageBytes: Double(final.bytes) / Double(max(final.children, 1)),
        cost: cost, nanosecondsPerMessage: perMessage,
        syscallsPerMessage: measuredWindow.calls?.mapValues { Double($0) / Double(max(final.framesInPerf, 1)) },
        framesInSyscallWindow: measuredWindow.calls == nil ? nil : final.framesInPerf, saturated: saturated
    )
}

/// Sleeps until `time` (monotonic nanoseconds); at once if it has passed.
private func sleep(until time: UInt64) async throws {
    let now = nanoseconds()
    if time > now { try await Task.sleep(for: .nanoseconds(Int(time - now))) }
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
