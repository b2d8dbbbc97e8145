/// An instant on the server's clock, in milliseconds since the Unix epoch.
///
/// The server is the only clock that counts: every event that must happen everywhere at once carries a
/// `ServerTime`, and clients convert it with their measured offset. It encodes as a bare JSON number so a
/// browser can compare it with `Date.now()` directly.
public struct ServerTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public init(from decoder: any Decoder) throws {
        milliseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }

    public static func < (lhs: ServerTime, rhs: ServerTime) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    /// The instant `milliseconds` later (or earlier, when negative).
    public static func + (lhs: ServerTime, milliseconds: Int) -> ServerTime {
        ServerTime(milliseconds: lhs.milliseconds + Int64(milliseconds))
    }

    /// The milliseconds from `rhs` to `lhs`.
    public static func - (lhs: ServerTime, rhs: ServerTime) -> Int {
        Int(lhs.milliseconds - rhs.milliseconds)
    }

    public var description: String { "\(milliseconds)ms" }
}
