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
    /// The server's open files and their limit at the window's end (each child holds one).
    var openFileDescriptors: Int?
    var maxFileDescriptors: Int?
}
