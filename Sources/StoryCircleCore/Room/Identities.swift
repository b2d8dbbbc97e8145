/// An identity that is a string on the wire and in storage, and a type of its own in the code: a player's
/// id cannot be passed where a class member's or a room's code is meant. Encoded as the string itself
/// (also as a dictionary key), so messages and stored records read exactly as before.
public protocol StringIdentity: RawRepresentable, Hashable, Comparable, Sendable, Codable, CodingKeyRepresentable,
    CustomStringConvertible, ExpressibleByStringInterpolation where RawValue == String {
    init(rawValue: String)
}

extension StringIdentity {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var codingKey: any CodingKey { rawValue.codingKey }
    public init?<Key: CodingKey>(codingKey: Key) { self.init(rawValue: codingKey.stringValue) }
}

/// A player of a room, as the room numbers them when they join (`p1`, `p2`, …).
public struct PlayerID: StringIdentity {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A child of a class (`ClassMember.id`): the name a child of a class room picks.
public struct MemberID: StringIdentity {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A room's code: the digits children type to join.
public struct RoomCode: StringIdentity {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}
