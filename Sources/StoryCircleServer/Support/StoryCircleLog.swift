import Foundation

/// The server's log, in swift-log's manner: messages are constant sentences, the data goes in metadata
/// (`room.code`, `connection.id`), and nothing logged ever contains a message body or a token. Named so
/// that it does not clash with swift-log's `Logger` in a program that links both.
///
/// One line per event, to standard error unless given a sink: `text` (`<time> <level> <label>: <message>
/// key=value …`) for people, or `json` (one object per line) for log collectors.
public struct StoryCircleLog: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, notice, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public typealias Metadata = [String: String]

    public let label: String
    public var minimumLevel: Level
    public var format: Format
    private let sink: @Sendable (String) -> Void
    /// The clock, for tests that compare whole lines.
    private let now: @Sendable () -> timespec

    public init(label: String, minimumLevel: Level = .info, format: Format = .text, sink: @escaping @Sendable (String) -> Void = StoryCircleLog.standardError) {
        self.init(label: label, minimumLevel: minimumLevel, format: format, sink: sink, now: Self.realTime)
    }

    init(label: String, minimumLevel: Level, format: Format, sink: @escaping @Sendable (String) -> Void, now: @escaping @Sendable () -> timespec) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.format = format
        self.sink = sink
        self.now = now
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    public func log(_ level: Level, _ message: StaticString, _ metadata: Metadata = [:]) {
        guard level >= minimumLevel else { return }
        sink(line(level, message.description, metadata))
    }

    public func debug(_ message: StaticString, _ metadata: Metadata = [:]) { log(.debug, message, metadata) }
    public func info(_ message: StaticString, _ metadata: Metadata = [:]) { log(.info, message, metadata) }
    public func notice(_ message: StaticString, _ metadata: Metadata = [:]) { log(.notice, message, metadata) }
    public func warning(_ message: StaticString, _ metadata: Metadata = [:]) { log(.warning, message, metadata) }
    public func error(_ message: StaticString, _ metadata: Metadata = [:]) { log(.error, message, metadata) }

    func line(_ level: Level, _ message: String, _ metadata: Metadata) -> String {
        let time = Self.timestamp(now())
        let keys = metadata.keys.sorted()
        switch format {
        case .text:
            var line = "\(time) \(level.name) \(label): \(message)"
            for key in keys { line += " \(key)=\(metadata[key]!)" }
            return line
        case .json:
            var line = "{\"time\":\(Self.quoted(time)),\"level\":\(Self.quoted(level.name)),\"label\":\(Self.quoted(label)),\"message\":\(Self.quoted(message))"
            if !keys.isEmpty {
                line += ",\"metadata\":{" + keys.map { "\(Self.quoted($0)):\(Self.quoted(metadata[$0]!))" }.joined(separator: ",") + "}"
            }
            return line + "}"
        }
    }

    private static let realTime: @Sendable () -> timespec = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time
    }

    /// RFC 3339 in UTC with milliseconds (`2026-11-30T11:31:43.287Z`, what ISO8601DateFormatter gave with
    /// fractional seconds), formatted by hand: no formatter object to build for every line, and none to
    /// share between the threads that log (corelibs Foundation does not promise that is safe).
    static func timestamp(_ time: timespec) -> String {
        var seconds = time.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(parts.tm_year + 1_900, 4) + "-" + padded(parts.tm_mon + 1, 2) + "-" + padded(parts.tm_mday, 2)
            + "T" + padded(parts.tm_hour, 2) + ":" + padded(parts.tm_min, 2) + ":" + padded(parts.tm_sec, 2)
            + "." + padded(Int32(time.tv_nsec / 1_000_000), 3) + "Z"
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
