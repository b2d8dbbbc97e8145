/// Latency figures in milliseconds.
struct Percentiles: Encodable {
    var count: Int
    var p50: Double
    var p95: Double
    var p99: Double
    var max: Double
    var mean: Double

    init(nanoseconds values: [UInt64]) {
        self.init(milliseconds: values.map { Double($0) / 1_000_000 })
    }

    init(milliseconds values: [Double]) {
        let sorted = values.sorted()
        func at(_ fraction: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
        }
        count = sorted.count
        p50 = at(0.50)
        p95 = at(0.95)
        p99 = at(0.99)
        max = sorted.last ?? 0
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)
    }

    var summary: String {
        func f(_ value: Double) -> String { value < 10 ? String(format: "%.2f", value) : String(format: "%.1f", value) }
        return "p50 \(f(p50)) ms · p95 \(f(p95)) ms · p99 \(f(p99)) ms · max \(f(max)) ms (n=\(count))"
    }
}

/// Nanoseconds from `start` to `end`; zero if `end` is not after `start` (an event cannot precede its
/// cause, but a clamp is cheaper than a trap if the clocks are ever read out of order).
@inline(__always) func since(_ start: UInt64, _ end: UInt64) -> UInt64 { end > start ? end - start : 0 }
