/// The class a room was started for, and the connections choosing their name from it: one of the machines
/// `RoomState` is composed of. Its rules: a room without a class has no pickers; a picker is a connection
/// that said `names` and has not picked yet; an older read of the class never undoes a newer one.
struct ClassPicking: Sendable {
    /// The class children pick their name from; nil: they type one.
    private(set) var roster: ClassRoster?
    private var pickers: Set<ConnectionID> = []

    init(roster: ClassRoster?) {
        self.roster = roster
    }

    var isEmpty: Bool { pickers.isEmpty }

    /// The pickers, sorted (for deterministic directives).
    var connections: [ConnectionID] { pickers.sorted() }

    func isPicking(_ connection: ConnectionID) -> Bool { pickers.contains(connection) }

    /// The connection picks its name now.
    mutating func add(_ connection: ConnectionID) {
        pickers.insert(connection)
    }

    /// The connection picked, left or is refused: it is no picker any more.
    mutating func remove(_ connection: ConnectionID) {
        pickers.remove(connection)
    }

    /// Every picker is refused: returns them, sorted, and keeps none.
    mutating func removeAll() -> [ConnectionID] {
        defer { pickers = [] }
        return connections
    }

    /// The class as saved now (`newer`); members left out of it whom `joined` says joined the room stay
    /// (their player keeps its name here). Returns whether it was taken: a read of another class, or an
    /// older one, changes nothing.
    mutating func follow(_ newer: ClassRoster, joined: (ClassMember) -> Bool) -> Bool {
        guard let current = roster, current.id == newer.id, newer.version >= current.version else { return false }
        let kept = Set(newer.members.map(\.id))
        let stayed = current.members.filter { !kept.contains($0.id) && joined($0) }
        roster = ClassRoster(id: newer.id, name: newer.name, members: newer.members + stayed, version: newer.version)
        return true
    }
}
