import CLibWebSockets
import Locking

/// Where libwebsockets' own log lines go. By default lws writes them to standard error in a format of its
/// own (`[2026/11/30 11:31:43:2873] E: …`); a program that logs in one format routes them to its log.
///
/// lws has one emit function for the whole process, a C function with no context, so the route is
/// process-wide too (like swift-log's `LoggingSystem.bootstrap`): set once by the program, not per server.
/// The servers' `lws_set_log_level(…, NULL)` calls change only the level and leave the route in place.
public enum LibWebSocketsLog {
    public enum Level: Sendable, Equatable {
        case error, warning, notice, other
    }

    public typealias Sink = @Sendable (Level, String) -> Void

    private static let sink = Locked<Sink?>(nil)

    /// Sends lws's error and warning lines to `sink` from now on (without their trailing newline); `nil`
    /// gives them back to standard error in lws's format.
    public static func route(to sink: Sink?) {
        self.sink.withLock { $0 = sink }
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), emit)
    }

    /// Called by lws, on whichever thread logs (the service thread, or the one creating a context).
    private static let emit: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, line in
        guard let line else { return }
        guard let sink = LibWebSocketsLog.sink.withLock({ $0 }) else {
            lwsl_emit_stderr(level, line)
            return
        }
        var text = String(cString: line)
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        let kind: Level = switch level {
        case Int32(LLL_ERR): .error
        case Int32(LLL_WARN): .warning
        case Int32(LLL_NOTICE): .notice
        default: .other
        }
        sink(kind, text)
    }
}
