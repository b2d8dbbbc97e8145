import Dispatch
import Glibc

/// Waits for SIGINT or SIGTERM (Ctrl-C, `kill`, Docker stopping the container), or for SIGHUP (reload the TLS
/// certificate).
enum Signals {
    static func stream() -> AsyncStream<Int32> {
        stream(of: [SIGINT, SIGTERM])
    }

    /// SIGHUP, which asks the server to read its certificate and key again (`kill -HUP`, `systemctl reload`,
    /// a certificate renewal's hook). Ignored from the call on, so it never ends the process.
    static func hangUps() -> AsyncStream<Int32> {
        stream(of: [SIGHUP])
    }

    /// Whether a SIGHUP is the terminal hanging up (its window closed), which stops the server as it always
    /// did, rather than a request to reload: the output was a terminal at start, and that terminal is gone
    /// (a hung-up terminal answers every question with EIO). Then what the server still writes while it
    /// stops goes to /dev/null: a write to the hung-up terminal fails, and a failed write stops the process
    /// before its goodbyes and queued records are out.
    static func terminalHungUp(outputWasTerminal: Bool) -> Bool {
        guard outputWasTerminal, tcgetpgrp(STDOUT_FILENO) == -1, errno == EIO else { return false }
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            for standard in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] { dup2(null, standard) }
            close(null)
        }
        return true
    }

    private static func stream(of numbers: [Int32]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = numbers.map { number -> any DispatchSourceSignal in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            }
            let kept = KeptSources(sources)
            continuation.onTermination = { _ in kept.cancel() }
        }
    }
}

/// Keeps the signal sources alive as long as the stream. `@unchecked Sendable`: the array is never
/// changed, and cancelling a dispatch source is thread-safe.
private final class KeptSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
