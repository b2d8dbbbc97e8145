/// The class a room was started for, as the room knows it: read from the class book when the room is
/// created, and again whenever it is loaded (a restart, a load from storage), as the class is then.
/// Children pick their name from it; a teacher's edits of the class reach a live room on this node when
/// they are saved (`RoomEvent.classChanged`).
public struct ClassRoster: Sendable, Equatable {
    public var id: String
    public var name: String
    public var members: [ClassMember]

    public init(id: String, name: String, members: [ClassMember]) {
        self.id = id
        self.name = name
        self.members = members
    }

    public init(_ schoolClass: SchoolClass) {
        self.init(id: schoolClass.id, name: schoolClass.name, members: schoolClass.members)
    }

    public func member(_ id: String) -> ClassMember? { members.first { $0.id == id } }
}
