import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads the server's `/metrics` at a window's start and turns the difference at its end into a cost. The
/// figure is an addition to a run, so a server that cannot answer costs the run nothing but the figure: it
/// is left out and stderr says why.
struct ReportedCostMeter {
    private let url: URL
    private let cpuAtStart: Double
    private let startedAt: UInt64
    private let generatorAtStart: ProcessSample

    private init(url: URL, cpu: Double) {
        self.url = url
        cpuAtStart = cpu
        startedAt = nanoseconds()
        generatorAtStart = ProcessSample.ofSelf()
    }

    static func url(host: String, port: Int) -> URL { ServerTLS.url(host: host, port: port, "/metrics") }

    /// One request before the window, so that the first one's setup (the session, the connection) is not
    /// inside it.
    static func warm(_ url: URL) async {
        _ = try? await read(url)
    }

    /// Starts a window; nil when the server gives no `process_cpu_seconds_total` (a build before it, or a
    /// peer) or cannot be asked.
    static func start(_ url: URL) async -> ReportedCostMeter? {
        do {
            guard let cpu = try await read(url)["process_cpu_seconds_total"] else {
                note("the server's /metrics has no process_cpu_seconds_total: no reportedCost")
                return nil
            }
            return ReportedCostMeter(url: url, cpu: cpu)
        } catch {
            note("the server's /metrics could not be read (\(error)): no reportedCost")
            return nil
        }
    }

    func finish(messages: Int, children: Int) async -> ReportedCost? {
        let figures: [String: Double]
        do { figures = try await Self.read(url) } catch {
            Self.note("the server's /metrics could not be read at the window's end (\(error)): no reportedCost")
            return nil
        }
        let taken = nanoseconds()
        let mine = ProcessSample.ofSelf()
        guard let cpu = figures["process_cpu_seconds_total"] else {
            Self.note("the server's /metrics lost process_cpu_seconds_total: no reportedCost")
            return nil
        }
        let wall = Double(taken - startedAt) / 1e9
        let spent = cpu - cpuAtStart
        let generator = (mine.userSeconds - generatorAtStart.userSeconds) + (mine.systemSeconds - generatorAtStart.systemSeconds)
        return ReportedCost(
            messages: messages, children: children, wallSeconds: wall, cpuSeconds: spent,
            microsecondsPerMessage: spent * 1e6 / Double(max(messages, 1)),
            microsecondsPerChildSecond: wall > 0 ? spent * 1e6 / wall / Double(max(children, 1)) : 0,
            serverCPUPercent: wall > 0 ? spent * 100 / wall : 0,
            generatorCPUPercent: wall > 0 ? generator * 100 / wall : 0,
            openFileDescriptors: figures["process_open_fds"].map { Int($0) },
            maxFileDescriptors: figures["process_max_fds"].map { Int($0) }
        )
    }

    /// The unlabelled samples of a Prometheus text page, by name.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.contains("{") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let value = Double(fields[1]) { samples[String(fields[0])] = value }
        }
        return samples
    }

    private static func read(_ url: URL) async throws -> [String: Double] {
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let (data, response) = try await fetch(request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw BenchError("GET \(url) answered \(status)") }
        return samples(String(decoding: data, as: UTF8.self))
    }

    private static func note(_ text: String) {
        FileHandle.standardError.write(Data("storycircle-bench: \(text)\n".utf8))
    }
}
