import Foundation
import Glibc

/// What a process has used so far: CPU time split into user and system, and context switches.
struct ProcessSample {
    var userSeconds: Double
    var systemSeconds: Double
    /// Per thread (the generator's own: one entry, the whole process), so that a window counts the
    /// switches of the threads that lived through it, and a thread that ends does not make it negative.
    var switches: [Int: (voluntary: Int, involuntary: Int)]
    var taken: UInt64

    /// Another process (the server), from /proc. CPU time covers every thread, living or exited
    /// (/proc/PID/stat); context switches are read per thread (/proc/PID/task/*/status), because
    /// /proc/PID/status counts the main thread only, and a server's work is on its other threads. A thread
    /// that ends inside a window takes its switches in that window with it (an undercount, small beside
    /// the long-lived service and worker threads).
    static func of(_ pid: Int32) throws -> ProcessSample {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name (which may contain spaces) start after the last ')'.
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchError("unreadable /proc/\(pid)/stat")
        }
        var switches: [Int: (voluntary: Int, involuntary: Int)] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            // A thread may end between the listing and the read; it then simply adds nothing.
            guard let tid = Int(task), let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            var counts = (voluntary: 0, involuntary: 0)
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") { counts.voluntary = Int(line.split(separator: "\t").last ?? "") ?? 0 }
                if line.hasPrefix("nonvoluntary_ctxt_switches:") { counts.involuntary = Int(line.split(separator: "\t").last ?? "") ?? 0 }
            }
            switches[tid] = counts
        }
        return ProcessSample(userSeconds: user / ticks, systemSeconds: system / ticks, switches: switches, taken: nanoseconds())
    }

    /// This process (the generator), from getrusage: all its threads.
    static func ofSelf() -> ProcessSample {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return ProcessSample(userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime),
                             switches: [0: (usage.ru_nvcsw, usage.ru_nivcsw)], taken: nanoseconds())
    }

    /// Switches since `before`: threads alive at both samples by their difference, threads born since by
    /// all of theirs.
    func switches(since before: ProcessSample) -> (voluntary: Int, involuntary: Int) {
        var total = (voluntary: 0, involuntary: 0)
        for (tid, now) in switches {
            let then = before.switches[tid] ?? (0, 0)
            total.voluntary += max(0, now.voluntary - then.voluntary)
            total.involuntary += max(0, now.involuntary - then.involuntary)
        }
        return total
    }
}

/// What the server spent on the messages it delivered in one measured window, per message.
struct ServerCost: Encodable {
    var messages: Int
    var wallSeconds: Double
    var userSeconds: Double
    var systemSeconds: Double
    /// User + system CPU per delivered message, the figure compared between servers.
    var microsecondsPerMessage: Double
    var userMicrosecondsPerMessage: Double
    var systemMicrosecondsPerMessage: Double
    var voluntarySwitchesPerMessage: Double
    var involuntarySwitchesPerMessage: Double
    /// The server's CPU use over the window, in percent of one core (100 = its core was never idle).
    var serverCPUPercent: Double
    /// The generator's own CPU use over the same window, in percent of one core: near 100, the
    /// generator (not the server) may be what limits throughput and latency.
    var generatorCPUPercent: Double
    /// Everything else on the machine over the window (all cores busy, from /proc/stat, less the server and
    /// the generator), in percent of one core: well above zero, other work shared the cores and the
    /// latencies are not a quiet machine's.
    var otherCPUPercent: Double

    /// Which side was the bottleneck: the server's or the generator's CPU at ≥ 90 % of a core.
    var saturated: String {
        switch (serverCPUPercent >= 90, generatorCPUPercent >= 90) {
        case (true, true): "both"
        case (true, false): "server"
        case (false, true): "generator"
        case (false, false): "neither"
        }
    }
}

/// The whole machine's busy CPU time so far, in seconds (all cores), from /proc/stat.
func machineBusySeconds() -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
          let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return 0 }
    // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count >= 8 else { return 0 }
    let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
    return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Samples the server (and the generator) at the start of a window and turns the difference into a cost.
struct CostMeter {
    let pid: Int32?
    private var server: ProcessSample?
    private var generator = ProcessSample.ofSelf()
    private var machine = machineBusySeconds()

    init(pid: Int32?) throws {
        self.pid = pid
        server = try pid.map(ProcessSample.of)
    }

    /// The window's cost for `messages` delivered messages; nil without a server PID (nothing to read).
    func finish(messages: Int) throws -> ServerCost? {
        guard let pid, let before = server else { return nil }
        let after = try ProcessSample.of(pid)
        let mine = ProcessSample.ofSelf()
        let wall = Double(after.taken - before.taken) / 1e9
        let user = after.userSeconds - before.userSeconds
        let system = after.systemSeconds - before.systemSeconds
        let count = Double(max(messages, 1))
        let generatorCPU = (mine.userSeconds - generator.userSeconds) + (mine.systemSeconds - generator.systemSeconds)
        let switches = after.switches(since: before)
        let others = max(0, machineBusySeconds() - machine - (user + system) - generatorCPU)
        return ServerCost(
            messages: messages, wallSeconds: wall, userSeconds: user, systemSeconds: system,
            microsecondsPerMessage: (user + system) * 1e6 / count,
            userMicrosecondsPerMessage: user * 1e6 / count, systemMicrosecondsPerMessage: system * 1e6 / count,
            voluntarySwitchesPerMessage: Double(switches.voluntary) / count,
            involuntarySwitchesPerMessage: Double(switches.involuntary) / count,
            serverCPUPercent: wall > 0 ? (user + system) * 100 / wall : 0,
            generatorCPUPercent: wall > 0 ? generatorCPU * 100 / wall : 0,
            otherCPUPercent: wall > 0 ? others * 100 / wall : 0
        )
    }
}
