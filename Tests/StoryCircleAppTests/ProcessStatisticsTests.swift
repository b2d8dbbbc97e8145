import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import StoryCircleApp
import StoryCircleServer

@Suite("Process statistics")
struct ProcessStatisticsTests {
    @Test func theKernelsFilesAreReadByFieldAndAnythingElseIsNot() throws {
        #expect(try #require(ProcessStatistics.memoryPages(statm: "52381 3012 1590 1263 0 6120 0\n")) == (52381, 3012))
        for wrong in ["", "12", "a 3", "-1 3", "12 -3"] { #expect(ProcessStatistics.memoryPages(statm: wrong) == nil, "\(wrong)") }
        // A command name with spaces and a ')' of its own: fields are counted after the last ')'.
        let stat = "4242 (story (circle) x) S 1 4242 4242 0 -1 4194560 9 0 0 0 5 3 0 0 20 0 9 0 173645 1048576 300"
        #expect(ProcessStatistics.startTicks(stat: stat) == 173645)
        #expect(ProcessStatistics.startTicks(stat: "4242 (storycircle) S 1 2 3") == nil)
        #expect(ProcessStatistics.startTicks(stat: "no name here") == nil)
        #expect(ProcessStatistics.bootTime(stat: "cpu  1 2 3 4\nintr 5\nbtime 1796342400\nprocesses 9\n") == 1796342400)
        #expect(ProcessStatistics.bootTime(stat: "cpu  1 2 3 4\n") == nil)
    }

    @Test func onlyNumberedEntriesAreDescriptors() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["0", "7", "12345", "x", "4a", ".hidden"] {
            FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: nil)
        }
        #expect(ProcessStatistics.descriptors(listedIn: folder.path) == 3)
        #expect(ProcessStatistics.descriptors(listedIn: folder.appendingPathComponent("missing").path) == nil)
    }

    @Test func aFigureThatCannotBeReadIsLeftOutNotMadeUp() {
        var text = PrometheusText()
        ProcessStatistics(cpuSeconds: 1.5, openFileDescriptors: 12).write(to: &text)
        #expect(text.lines == [
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.",
            "# TYPE process_cpu_seconds_total counter",
            "process_cpu_seconds_total 1.500000000",
            "# HELP process_open_fds Number of open file descriptors.",
            "# TYPE process_open_fds gauge",
            "process_open_fds 12",
        ])
        var none = PrometheusText()
        ProcessStatistics().write(to: &none)
        #expect(none.lines.isEmpty)
    }

    /// The live figures against what this test does to its own process: CPU it burns, files it opens.
    @Test func theLiveFiguresFollowWhatTheProcessDoes() async throws {
        let before = ProcessStatistics.current()
        let opened = (0..<5).map { _ in open("/dev/null", O_RDONLY) }
        defer { opened.forEach { close($0) } }
        // 50 ms on this thread's own CPU clock (a shared machine may give it less in 50 ms of wall time).
        @Sendable func threadCPU() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        // On a thread of its own, not this one: the process's CPU holds every thread's.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                var spin = 0.0
                let until = threadCPU() + 0.05
                while threadCPU() < until { spin += sin(spin + 1) }
                if spin.isNaN { print(spin) }
                done.resume()
            }.start()
        }
        let after = ProcessStatistics.current()
        let cpu = try #require(after.cpuSeconds), earlier = try #require(before.cpuSeconds)
        #expect(cpu - earlier >= 0.05, "another thread's 50 ms of CPU")
        // Other tests may open and close files in parallel; these five are open throughout.
        #expect(try #require(after.openFileDescriptors) >= 5 + 3)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(after.maxFileDescriptors == Int(clamping: limit.rlim_cur))
        #expect(try #require(after.residentBytes) > 1 << 20)
        #expect(try #require(after.virtualBytes) >= (try #require(after.residentBytes)))
        let started = try #require(after.startTimeSeconds)
        #expect(started <= Date().timeIntervalSince1970 + 1)
        #expect(started > Date().timeIntervalSince1970 - 86_400 * 7, "this test process started less than a week ago")
    }
}
