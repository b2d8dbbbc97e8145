import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How many cores this process may really compute on: the CPUs online, narrowed by its CPU affinity
/// (`taskset`, a container's cpuset) and by a cgroup v2 CPU quota (`docker --cpus`, a Kubernetes limit),
/// each read from the kernel's own files. `ProcessInfo.activeProcessorCount` is not enough: it ignores the
/// affinity, and a quota shared with a busy worker would throttle the server with it, which nice cannot
/// prevent. A file that cannot be read narrows nothing.
enum CPUBudget {
    static func cores() -> Int {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var cores = online >= 1 ? online : ProcessInfo.processInfo.processorCount
        if let status = contents("/proc/self/status"), let allowed = coreCount(status: status) {
            cores = min(cores, allowed)
        }
        if let cgroup = contents("/proc/self/cgroup"), let path = cgroupPath(cgroup),
           let limit = contents("/sys/fs/cgroup" + (path == "/" ? "" : path) + "/cpu.max"), let quota = quotaCores(cpuMax: limit) {
            cores = min(cores, quota)
        }
        return max(cores, 1)
    }

    /// The cores `/proc/PID/status` allows (its `Cpus_allowed_list`); nil if it has none that can be read.
    static func coreCount(status: String) -> Int? {
        let key = "Cpus_allowed_list:"
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return nil }
        return coreCount(list: line.dropFirst(key.count))
    }

    /// How many cores a kernel CPU list names ("0-3,8,10-11" is 7); nil if it is not one.
    static func coreCount(list: Substring) -> Int? {
        var count = 0
        for part in list.split(separator: ",") {
            let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
                .map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            // (No machine has 65,536 CPUs; the bound keeps a corrupt list from overflowing the count.)
            guard let first = bounds.first ?? nil, let last = bounds.last ?? nil, first >= 0, first <= last, last - first < 65_536 else {
                return nil
            }
            count += last - first + 1
        }
        return count > 0 ? count : nil
    }

    /// The process's cgroup v2 path, from `/proc/self/cgroup` (its `0::PATH` line); nil on cgroup v1 alone.
    static func cgroupPath(_ cgroup: String) -> String? {
        guard let line = cgroup.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let path = String(line.dropFirst(3)).trimmingCharacters(in: .whitespacesAndNewlines)
        return path.hasPrefix("/") ? path : nil
    }

    /// Whole cores a cgroup v2 `cpu.max` ("QUOTA PERIOD") allows, rounded down (1.5 CPUs is one core a
    /// busy worker cannot take from the server), at least 1; nil for no limit ("max") or what is not one.
    static func quotaCores(cpuMax: String) -> Int? {
        let fields = cpuMax.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0 else { return nil }
        return max(quota / period, 1)
    }

    private static func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }
}
