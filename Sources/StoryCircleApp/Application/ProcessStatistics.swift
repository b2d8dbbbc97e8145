import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What this process uses, for `/metrics` under the names every Prometheus client library gives them
/// (`process_cpu_seconds_total`, `process_open_fds`, …), so that a school's existing dashboards and alerts
/// read them as they are. They answer an IT person's two questions about a node: how busy it is, and how
/// near it is to the open-file limit, which caps the children it can hold (one socket each). CPU time comes
/// from the kernel's per-process clock, in nanoseconds and over every thread that ever ran, so that a
/// measurement from another machine can divide it by what it delivered. A figure that cannot be read is
/// left out, not made up.
struct ProcessStatistics: Equatable {
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
        // The listing's own descriptor is open while it is read: not counted.
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            statistics.openFileDescriptors = max(entries.count - 1, 0)
        }
        // No limit (RLIM_INFINITY, all ones) is not a number of files: left out.
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
            statistics.maxFileDescriptors = Int(clamping: limit.rlim_cur)
        }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let stat = contents("/proc/self/stat"), let started = startTicks(stat: stat),
           let machine = contents("/proc/stat"), let boot = bootTime(stat: machine), ticks > 0 {
            statistics.startTimeSeconds = boot + started / ticks
        }
        return statistics
    }

    /// Prometheus text lines, in the client libraries' names, types and units.
    func prometheusLines() -> [String] {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ value: String?) {
            guard let value else { return }
            lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(type)", "\(name) \(value)"]
        }
        metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpuSeconds.map { String(format: "%.9f", $0) })
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", residentBytes.map(String.init))
        metric("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", virtualBytes.map(String.init))
        metric("process_open_fds", "gauge", "Number of open file descriptors.", openFileDescriptors.map(String.init))
        metric("process_max_fds", "gauge", "Maximum number of open file descriptors.", maxFileDescriptors.map(String.init))
        metric("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", startTimeSeconds.map { String(format: "%.2f", $0) })
        return lines
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
