import Foundation
import StoryCircleServer
#if canImport(Glibc)
import Glibc
#endif

/// What this process uses, for `/metrics` under the names every Prometheus client library gives them
/// (`process_cpu_seconds_total`, `process_open_fds`, …), so that a school's existing dashboards and alerts
/// read them as they are: how busy a node is, and how near it is to the open-file limit, below which its
/// connections are capped (`storycircle_connections_max`). CPU time comes from the kernel's per-process
/// clock, in nanoseconds and over every thread that ever ran, so that a measurement from another machine
/// can divide it by what it delivered; a natural voice's worker is a process of its own and not in it. A
/// figure that cannot be read is left out, not made up.
struct ProcessStatistics {
    var cpuSeconds: Double?
    var residentBytes: Int?
    var virtualBytes: Int?
    var openFileDescriptors: Int?
    var maxFileDescriptors: Int?
    var startTimeSeconds: Double?

    static func current() -> ProcessStatistics {
        var statistics = ProcessStatistics()
        var time = timespec()
        if clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 {
            statistics.cpuSeconds = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = contents("/proc/self/statm"), let pages = memoryPages(statm: statm), pageSize > 0 {
            statistics.virtualBytes = pages.size * pageSize
            statistics.residentBytes = pages.resident * pageSize
        }
        statistics.openFileDescriptors = descriptors(listedIn: "/proc/self/fd")
        // No limit (RLIM_INFINITY, all ones) is not a number of files: left out.
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            statistics.maxFileDescriptors = Int(clamping: limit.rlim_cur)
        }
        statistics.startTimeSeconds = startTime
        return statistics
    }

    /// Worked out once: `btime` is the boot time rounded to a second, and may come out a second apart between
    /// reads, which a monitor would take for a restart.
    private static let startTime: Double? = {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard let stat = contents("/proc/self/stat"), let started = startTicks(stat: stat),
              let machine = contents("/proc/stat"), let boot = bootTime(stat: machine), ticks > 0 else { return nil }
        return boot + started / ticks
    }()

    /// The numbered entries of a folder like `/proc/self/fd`, less the descriptor the listing itself holds
    /// open (which the client libraries count), without a string per entry: a node at capacity has tens of
    /// thousands.
    static func descriptors(listedIn path: String) -> Int? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var count = 0
        while let entry = readdir(directory) {
            // A descriptor's entry is its number; "." and ".." are not descriptors.
            let number: Int? = withUnsafeBytes(of: entry.pointee.d_name) { name in
                var value = 0
                for byte in name {
                    if byte == 0 { break }
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                return value
            }
            if let number, number != Int(own) { count += 1 }
        }
        return count
    }

    /// These figures in Prometheus text, in the client libraries' names, types and units.
    func write(to text: inout PrometheusText) {
        text.metric("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.", cpuSeconds.map { String(format: "%.9f", $0) })
        text.metric("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", residentBytes.map(String.init))
        text.metric("process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.", virtualBytes.map(String.init))
        text.metric("process_open_fds", .gauge, "Number of open file descriptors.", openFileDescriptors.map(String.init))
        text.metric("process_max_fds", .gauge, "Maximum number of open file descriptors.", maxFileDescriptors.map(String.init))
        text.metric("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.", startTimeSeconds.map { String(format: "%.2f", $0) })
    }

    /// Total and resident pages from `/proc/self/statm` ("size resident shared text lib data dt").
    static func memoryPages(statm: String) -> (size: Int, resident: Int)? {
        let fields = statm.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, let size = Int(fields[0]), let resident = Int(fields[1]), size >= 0, resident >= 0 else { return nil }
        return (size, resident)
    }

    /// When the process started, in clock ticks after boot: `/proc/PID/stat`'s 22nd field. The command name
    /// (the 2nd, in parentheses) may itself hold spaces and parentheses, so fields are counted after its last ')'.
    static func startTicks(stat: String) -> Double? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so field 22 is the 20th here.
        guard fields.count >= 20, let ticks = Double(fields[19]), ticks >= 0 else { return nil }
        return ticks
    }

    /// The machine's boot time in seconds since the epoch: `/proc/stat`'s `btime` line.
    static func bootTime(stat: String) -> Double? {
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }) else { return nil }
        return Double(line.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces))
    }

    private static func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}
