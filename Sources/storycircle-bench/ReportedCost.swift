import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server's CPU over a measured window as the server itself reports it on `/metrics`
/// (`process_cpu_seconds_total`: every thread, living or ended, in nanosecond steps). It is the one figure a
/// generator on another machine can read, where the server's /proc is not; on one machine it stands beside
/// `ServerCost` as a check of it. Over loopback the server's CPU includes its clients' receive path (the
/// kernel runs it inside the server's `sendto`); with the generator on another machine it does not.
struct ReportedCost: Encodable {
    var messages: Int
    var children: Int
    var wallSeconds: Double
    var cpuSeconds: Double
    var microsecondsPerMessage: Double
    var microsecondsPerChildSecond: Double
    /// The server's share of one core over the window.
    var serverCPUPercent: Double
    /// The generator's own share of one core over the window (this process, wherever it runs).
    var generatorCPUPercent: Double
    /// The server's open files and their limit at the window's end: its headroom for children.
    var openFileDescriptors: Int?
    var maxFileDescriptors: Int?
}

/// Reads the server's `/metrics` at a window's start and turns the difference at its end into a cost.
struct ReportedCostMeter {
    private let url: URL
    private let cpuAtStart: Double
    private let startedAt: UInt64
    private let generatorAtStart = ProcessSample.ofSelf()

    /// nil when the server's `/metrics` has no `process_cpu_seconds_total` (an older build, or a peer).
    init?(host: String, port: Int) async throws {
        url = URL(string: "http://\(host):\(port)/metrics")!
        guard let cpu = try await Self.read(url)["process_cpu_seconds_total"] else { return nil }
        cpuAtStart = cpu
        startedAt = nanoseconds()
    }

    func finish(messages: Int, children: Int) async throws -> ReportedCost {
        let figures = try await Self.read(url)
        let taken = nanoseconds()
        guard let cpu = figures["process_cpu_seconds_total"] else { throw BenchError("the server's /metrics lost process_cpu_seconds_total") }
        let wall = Double(taken - startedAt) / 1e9
        let spent = cpu - cpuAtStart
        let mine = ProcessSample.ofSelf()
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
        let (data, status): (Data, Int) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: url) { data, response, error in
                if let error { continuation.resume(throwing: error) } else {
                    continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
        guard status == 200 else { throw BenchError("GET \(url) answered \(status)") }
        return samples(String(decoding: data, as: UTF8.self))
    }
}
