import Foundation
import Glibc
import Locking

/// The classroom's regime: one frame per child at a time. Every room's trigger fires once; the next round
/// starts only when every child has the last broadcast, so no connection ever has a backlog to coalesce
/// (unlike the fan-out's burst, which measures draining one). Rounds go on until the measured window has
/// lasted `seconds`; CPU, system calls and latency all come from that one window.
struct LockStepResult: Encodable {
    var scenario = "lockstep"
    var target: String
    var rooms: Int
    var children: Int
    var warmupRounds: Int
    /// Rounds in the measured window.
    var rounds: Int
    var seconds: Double
    /// Trigger sent → each child has that round's broadcast, for every child and measured round.
    var latency: Percentiles
    /// Frames the children received in the window (one per child and round).
    var framesToChildren: Int
    /// Frames the trigger connections received in the window: StoryCircle's teacher gets the broadcast
    /// too, and a `room` when the commands it may send change (pause ↔ resume); a peer sends its trigger
    /// nothing. Counted, so the cost per message divides by every frame the server sent.
    var framesToTeachers: Int
    var messageBytes: Double
    /// Per frame sent (children's and teachers'): user + system CPU from /proc/PID/stat (10 ms ticks)
    /// and switches; `messages` is every frame.
    var cost: ServerCost?
    /// Per frame: the server's time on a CPU in nanoseconds, summed over its threads' schedstat.
    var nanosecondsPerMessage: Double?
    /// Per frame: system calls that write to sockets and files, and wake-ups, counted by `perf stat`
    /// tracepoints on the server (nil where perf or its tracepoints are not available).
    var syscallsPerMessage: [String: Double]?
    /// The frames (children's and teachers') that arrived within perf's window, which the calls divide by.
    var framesInSyscallWindow: Int?
    /// Which side was the bottleneck: the server's or the generator's CPU at ≥ 90 % of a core.
    var saturated: String
}

extension LockStepResult {
    /// The one-line summary (stderr), before the cost.
    var summary: String {
        var line = "lockstep [\(target)] \(rooms)×\(children / max(rooms, 1)): \(rounds) rounds in \(String(format: "%.1f", seconds)) s · \(latency.summary)"
        line += " · \(framesToChildren)+\(framesToTeachers) frames"
        if let nanosecondsPerMessage { line += String(format: " · %.2f µs/msg on CPU (schedstat)", nanosecondsPerMessage / 1000) }
        if let syscallsPerMessage {
            let calls: [String] = syscallsPerMessage.keys.sorted().map { key in "\(key) " + String(format: "%.3f", syscallsPerMessage[key] ?? 0) }
            line += " · per msg: " + calls.joined(separator: ", ")
        }
        return line
    }
}

/// One round's state: the marker it waits for and when each child got it.
private struct LockStepRound {
    var marker: [UInt8] = []
    var receivedAt: [UInt64]
    var counting = false
    var children = 0
    var teachers = 0
    var bytes = 0
    /// perf's own window (it counts for a fixed time from when it started), and the frames received in it:
    /// the system calls divide by these, not by a rate from the rounds' window, which with a few slow
    /// rounds (a loaded machine) puts a whole round in or out.
    var perfFrom: UInt64 = 0
    var perfUntil: UInt64 = 0
    var framesInPerf = 0

    init(total: Int) { receivedAt = Array(repeating: 0, count: total) }
}

func runLockStep(target: some FanoutTarget, port: Int, rooms: Int, childrenPerRoom: Int, warmup: Int, seconds: Double, serverPID: Int32?, phaseFile: String?) async throws -> LockStepResult {
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let layout = try await target.prepare(rooms: rooms, childrenPerRoom: childrenPerRoom, clients: clients)
    let total = rooms * childrenPerRoom
    let slots = layout.slots(childrenPerRoom: childrenPerRoom)
    let teachers = Set(layout.teachers)
    let state = Locked(LockStepRound(total: total))
    // The latch of the round under way; replaced (under the state's lock) before each round's triggers.
    let latch = Locked(Latch(0))
    clients.onMessage { id, data in
        let now = nanoseconds()
        let first: Bool = state.withLock { state in
            let inPerf = now >= state.perfFrom && now < state.perfUntil
            guard let index = slots[id] else {
                if state.counting, teachers.contains(id) {
                    state.teachers += 1
                    if inPerf { state.framesInPerf += 1 }
                }
                return false
            }
            guard state.receivedAt[index] == 0, contains(data, state.marker) else { return false }
            state.receivedAt[index] = now
            if state.counting {
                state.children += 1
                state.bytes += data.count
                if inPerf { state.framesInPerf += 1 }
            }
            return true
        }
        if first { latch.withLock { $0 }.countDown() }
    }

    var latencies: [UInt64] = []
    var meter: CostMeter?
    var sched: [Int: UInt64] = [:]
    var counter: SyscallCounter?
    var started: UInt64 = 0
    var measuredRounds = 0
    var round = 0
    while true {
        let measuring = round >= warmup
        if round == warmup {
            if let phaseFile { try "lockstep\n".write(toFile: phaseFile, atomically: true, encoding: .utf8) }
            let perfFrom = nanoseconds()
            counter = serverPID.flatMap { SyscallCounter(pid: $0, seconds: seconds) }
            if counter != nil {
                state.withLock { state in
                    state.perfFrom = perfFrom
                    state.perfUntil = perfFrom + UInt64(seconds * 1e9)
                }
            }
            // perf attaches within milliseconds; the window is seconds long.
            if counter != nil { try await Task.sleep(for: .milliseconds(200)) }
            sched = serverPID.map(schedNanoseconds) ?? [:]
            meter = try CostMeter(pid: serverPID)
            started = nanoseconds()
            state.withLock { $0.counting = true }
        }
        let marker = roundMarker(round)
        let roundLatch = Latch(total)
        state.withLock { state in
            for i in state.receivedAt.indices { state.receivedAt[i] = 0 }
            state.marker = marker
            latch.withLock { $0 = roundLatch }
        }
        var sentAt = [UInt64](repeating: 0, count: rooms)
        for room in 0..<rooms {
            sentAt[room] = nanoseconds()
            clients.send(target.trigger(round: round, room: room), to: layout.teachers[room])
        }
        guard await roundLatch.wait(timeout: 30) else { throw BenchError("lock-step round \(round): \(roundLatch.count) of \(total) children got nothing in 30 s") }
        round += 1
        guard measuring else { continue }
        measuredRounds += 1
        let received = state.withLock { $0.receivedAt }
        for index in 0..<total { latencies.append(since(sentAt[index / childrenPerRoom], received[index])) }
        if Double(nanoseconds() - started) / 1e9 >= seconds { break }
    }
    // The teacher's own frames of the last round may still be on their way: a moment for them.
    try await Task.sleep(for: .milliseconds(50))
    let (children, teacherFrames, bytes, framesInPerf) = state.withLock { state in
        state.counting = false
        return (state.children, state.teachers, state.bytes, state.framesInPerf)
    }
    let messages = children + teacherFrames
    let window = Double(nanoseconds() - started) / 1e9
    let cost = try meter?.finish(messages: messages)
    // perf counted for exactly `seconds` from its start; the rounds run on past it, so its window is full,
    // and its calls divide by the frames that arrived inside it.
    let calls = await counter?.finish()?.mapValues { Double($0) / Double(max(framesInPerf, 1)) }
    var perMessage: Double?
    if let serverPID {
        let spent = schedNanoseconds(serverPID, since: sched)
        perMessage = Double(spent) / Double(max(messages, 1))
    }
    let saturated = cost?.saturated ?? "neither"
    return LockStepResult(
        target: target.name, rooms: rooms, children: total, warmupRounds: warmup, rounds: measuredRounds, seconds: window,
        latency: Percentiles(nanoseconds: latencies), framesToChildren: children, framesToTeachers: teacherFrames,
        messageBytes: Double(bytes) / Double(max(children, 1)), cost: cost, nanosecondsPerMessage: perMessage,
        syscallsPerMessage: calls, framesInSyscallWindow: counter == nil ? nil : framesInPerf, saturated: saturated
    )
}

/// Each thread's time on a CPU so far, in nanoseconds (/proc/PID/task/TID/schedstat, first field). A
/// thread that ends inside a window takes its time with it (the server's threads live as long as it does).
func schedNanoseconds(_ pid: Int32) -> [Int: UInt64] {
    var times: [Int: UInt64] = [:]
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    for task in tasks {
        guard let tid = Int(task), let line = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
              let first = line.split(separator: " ").first, let value = UInt64(first) else { continue }
        times[tid] = value
    }
    return times
}

/// The server's time on a CPU since `before` (an earlier `schedNanoseconds`), in nanoseconds: threads alive
/// at both by their difference, threads born since by all of theirs.
func schedNanoseconds(_ pid: Int32, since before: [Int: UInt64]) -> UInt64 {
    schedNanoseconds(pid).reduce(UInt64(0)) { sum, entry in sum + (entry.value - min(entry.value, before[entry.key] ?? 0)) }
}

/// `perf stat` counting the server's system calls by tracepoint for `seconds` from its start
/// (`--timeout`: a perf started from here has SIGINT blocked, as the generator's threads do, so it could
/// not be stopped at the window's end). Absent when perf is not installed; nil counts when perf cannot use
/// its tracepoints.
final class SyscallCounter {
    static let calls = ["sendto", "sendmsg", "write", "writev", "epoll_wait", "epoll_pwait", "epoll_ctl", "poll", "ppoll", "futex"]
    private let process: Process
    private let output: String

    init?(pid: Int32, seconds: Double) {
        output = NSTemporaryDirectory() + "storycircle-bench-syscalls-\(getpid())-\(pid).csv"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
        process.arguments = ["stat", "-x", ",", "-o", output, "-e", Self.calls.map { "syscalls:sys_enter_\($0)" }.joined(separator: ","), "-p", String(pid), "--timeout", String(Int(seconds * 1000))]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/perf"), (try? process.run()) != nil else { return nil }
    }

    /// Counts per call name over the `seconds`; nil when perf counted nothing (its tracepoints are not available).
    func finish() async -> [String: Int]? {
        // perf writes its counts as its timeout ends. Polled for (no thread waits on the process): they are
        // there once the last event's line is.
        defer { unlink(output) }
        var text = ""
        for _ in 0..<500 {
            text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if text.contains("sys_enter_\(Self.calls.last!)") { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 2, let count = Int(fields[0]), let name = fields[2].split(separator: "sys_enter_").last else { continue }
            counts[String(name)] = count
        }
        return counts.isEmpty ? nil : counts
    }
}
