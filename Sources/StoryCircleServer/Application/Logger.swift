import Foundation

/// A small logger in swift-log's manner: messages are constant sentences, the data goes in metadata
/// (`room.code`, `connection.id`), and nothing logged ever contains a message body or a token.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, notice, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    public typealias Metadata = [String: String]

    public let label: String
    public var minimumLevel: Level
    private let sink: @Sendable (String) -> Void

    public init(label: String, minimumLevel: Level = .info, sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    public func log(_ level: Level, _ message: StaticString, _ metadata: Metadata = [:]) {
        guard level >= minimumLevel else { return }
        var line = "\(Self.timestamp()) \(level.name) \(label): \(message)"
        for key in metadata.keys.sorted() {
            line += " \(key)=\(metadata[key]!)"
        }
        sink(line)
    }

    public func debug(_ message: StaticString, _ metadata: Metadata = [:]) { log(.debug, message, metadata) }
    public func info(_ message: StaticString, _ metadata: Metadata = [:]) { log(.info, message, metadata) }
    public func notice(_ message: StaticString, _ metadata: Metadata = [:]) { log(.notice, message, metadata) }
    public func warning(_ message: StaticString, _ metadata: Metadata = [:]) { log(.warning, message, metadata) }
    public func error(_ message: StaticString, _ metadata: Metadata = [:]) { log(.error, message, metadata) }

    private static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}
