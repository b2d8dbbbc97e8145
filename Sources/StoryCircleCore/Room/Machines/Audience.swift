/// Who each identified connection of a room is: one of the machines `RoomState` is composed of. A
/// connection is at most one member; recipients are listed sorted, so that directives are deterministic.
struct Audience: Sendable {
    enum Member: Sendable, Equatable {
        case child(playerID: PlayerID)
        case dashboard
        case teacher

        var role: Role {
            switch self {
            case .child: .child
            case .dashboard: .dashboard
            case .teacher: .teacher
            }
        }
    }

    private var members: [ConnectionID: Member] = [:]

    var count: Int { members.count }

    subscript(connection: ConnectionID) -> Member? { members[connection] }

    mutating func admit(_ connection: ConnectionID, as member: Member) {
        members[connection] = member
    }

    /// Forgets the connection; returns who it was.
    @discardableResult
    mutating func remove(_ connection: ConnectionID) -> Member? {
        members.removeValue(forKey: connection)
    }

    var all: [ConnectionID] { members.keys.sorted() }

    /// Dashboards and teachers.
    var screens: [ConnectionID] {
        members.compactMap { if case .child = $0.value { nil } else { $0.key } }.sorted()
    }

    var teachers: [ConnectionID] {
        members.compactMap { $0.value == .teacher ? $0.key : nil }.sorted()
    }

    /// The connections of each of `roles` that has any, in the order of `roles`.
    func byRole(_ roles: [Role]) -> [(role: Role, connections: [ConnectionID])] {
        var byRole: [Role: [ConnectionID]] = [:]
        for (connection, member) in members where roles.contains(member.role) { byRole[member.role, default: []].append(connection) }
        return roles.compactMap { role in byRole[role].map { (role, $0.sorted()) } }
    }
}
