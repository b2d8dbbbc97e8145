/// One WebSocket connection, as the transport numbers them.
public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String { "c\(rawValue)" }
}
