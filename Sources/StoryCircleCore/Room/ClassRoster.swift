/// The class a room was started for, as the room knows it: read from the class book when the room is
/// created, and again whenever it is loaded (a restart, a load from storage), as the class is then.
/// Children pick their name from it; a teacher's edits of the class reach a live room on this node when
/// they are saved (`RoomEvent.classChanged`).
public struct ClassRoster: Sendable, Equatable {
    public var id: String
    public var name: String
    public var members: [ClassMember]
    /// The class's stored version this was read at: a room sees from it that the class changed elsewhere.
    public var version: Int

    public init(id: String, name: String, members: [ClassMember], version: Int = 0) {
        self.id = id
        self.name = name
        self.members = members
        self.version = version
    }

    public init(_ schoolClass: SchoolClass) {
        self.init(id: schoolClass.id, name: schoolClass.name, members: schoolClass.members, version: schoolClass.version)
    }

    public func member(_ id: String) -> ClassMember? { members.first { $0.id == id } }
}
