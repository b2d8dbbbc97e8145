/// What a retention rule applies to. The raw values are the stable names the API, the CLI, the audit rows
/// and the stores use.
public enum RetentionKind: String, Sendable, Codable, CaseIterable {
    /// Rooms, by when they were made, with their players, answers and events.
    case rooms
    /// Children taken out of a class, by when they were taken out, with everything of theirs.
    case removedMembers = "removed_members"
    /// Classes neither changed nor used by a room for so long, with their rooms.
    case classes
    /// Library stories neither changed nor started for so long.
    case stories
    /// Pictures no story and no room names, by when they were stored.
    case pictures
    /// Audit rows, by when they were written.
    case audit

    /// The days a school may choose (`0` only where `keepsForever` allows it). The audit trail's lower bound
    /// is a year, so an administrator cannot make the record of their own actions disappear quickly;
    /// a room's is a day, as the server's own setting.
    public var bounds: ClosedRange<Int> {
        switch self {
        case .audit: 365...3_650
        default: 1...3_650
        }
    }

    /// Whether `0` ("kept until someone deletes it") is a choice: for a teacher's work and for removed
    /// members, as in the server's configuration; a room and an audit row always end.
    public var keepsForever: Bool {
        switch self {
        case .rooms, .audit: false
        default: true
        }
    }

    /// Whether `days` is a value a school may choose.
    public func allows(_ days: Int) -> Bool {
        (keepsForever && days == 0) || bounds.contains(days)
    }

    /// The words of the error for a value out of bounds.
    public var boundsDescription: String {
        "\(rawValue) must be \(keepsForever ? "0 (kept until deleted) or " : "")from \(bounds.lowerBound) to \(bounds.upperBound) days"
    }
}

/// One school's retention rules: for each kind, the days it chose, or nothing where the server's
/// configuration applies (`RetentionDefaults`).
public struct SchoolRetention: Sendable, Equatable, Codable {
    public var days: [RetentionKind: Int]

    public init(_ days: [RetentionKind: Int] = [:]) {
        self.days = days
    }

    public subscript(kind: RetentionKind) -> Int? {
        get { days[kind] }
        set { days[kind] = newValue }
    }

    /// The first value out of its kind's bounds, if any (in `RetentionKind.allCases` order).
    public var problem: RetentionKind? {
        RetentionKind.allCases.first { kind in days[kind].map { !kind.allows($0) } ?? false }
    }

    /// `rooms=30 audit=400`, for an audit row's detail (the kinds a school chose, in a fixed order), or
    /// `defaults`.
    public var summary: String {
        let chosen = RetentionKind.allCases.compactMap { kind in days[kind].map { "\(kind.rawValue)=\($0)" } }
        return chosen.isEmpty ? "defaults" : chosen.joined(separator: " ")
    }
}

/// The server's configured retention (what applies where a school chose nothing, and to things of no
/// school), in days; `0` keeps (where the kind allows it).
public struct RetentionDefaults: Sendable, Equatable {
    public var days: [RetentionKind: Int]

    public init(_ days: [RetentionKind: Int]) {
        self.days = days
    }

    /// The cutoffs at `now` for `kind`: each school's own rule, the defaults for every other school and
    /// for things of no school.
    public func cutoffs(_ kind: RetentionKind, at now: ServerTime, schools: [String: SchoolRetention]) -> RetentionCutoffs {
        let cutoff = { (days: Int) in days > 0 ? now + -(days * 86_400_000) : RetentionCutoffs.never }
        var own: [String: ServerTime] = [:]
        for (school, rules) in schools { if let days = rules[kind] { own[school] = cutoff(days) } }
        return RetentionCutoffs(fallback: cutoff(days[kind] ?? 0), schools: own)
    }
}

/// Where a purge cuts, per school: what is older than a school's cutoff goes. `never` (the epoch: nothing
/// is older) keeps everything.
public struct RetentionCutoffs: Sendable, Equatable {
    public static let never = ServerTime(milliseconds: 0)

    /// For every school not in `schools`, and for things of no school.
    public var fallback: ServerTime
    public var schools: [String: ServerTime]

    public init(fallback: ServerTime, schools: [String: ServerTime] = [:]) {
        self.fallback = fallback
        self.schools = schools
    }

    public func cutoff(for school: String?) -> ServerTime {
        school.flatMap { schools[$0] } ?? fallback
    }

    /// Whether nothing at all can go.
    public var keepsEverything: Bool {
        fallback == Self.never && schools.values.allSatisfy { $0 == Self.never }
    }

    /// The latest cutoff: nothing newer goes anywhere.
    public var latest: ServerTime {
        schools.values.reduce(fallback) { max($0, $1) }
    }

    /// The schools with their own cutoff, in a fixed order (for a query's parameters).
    public var ordered: [(school: String, cutoff: ServerTime)] {
        schools.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

/// How many things a purge deleted, per school (`nil`: things of no school).
public typealias RetentionCounts = [String?: Int]

extension Dictionary where Key == String?, Value == Int {
    public var total: Int { values.reduce(0, +) }
}

/// The schools' retention rules and the purges that apply them, in the room store (SQLite and
/// PostgreSQL: `SQLiteRoomStore+Retention`, `PostgresRoomStore+Retention`). A purge deletes what is older
/// than its school's cutoff, as `ChildDataBook`'s purges do, and answers the counts per school.
public protocol RetentionBook: AnyObject, Sendable {
    /// Every school's own rules (schools that chose nothing are absent).
    func schoolRetentions() async throws -> [String: SchoolRetention]
    /// Replaces school `id`'s rules (an empty value: the defaults again) and answers the rules it had.
    @discardableResult func setRetention(_ rules: SchoolRetention, ofSchool id: String) async throws -> SchoolRetention
    func purgeRooms(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts
    func purgeRemovedMembers(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts
    func purgeClasses(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts
    func purgeStories(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts
    func purgePictures(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts
    func pruneAudit(_ cutoffs: RetentionCutoffs) async throws -> RetentionCounts
}

extension RetentionBook {
    /// School `id`'s own rules (nothing chosen: empty).
    public func retention(ofSchool id: String) async throws -> SchoolRetention {
        try await schoolRetentions()[id] ?? SchoolRetention()
    }

    /// The purge of `kind`.
    public func purge(_ kind: RetentionKind, _ cutoffs: RetentionCutoffs) async throws -> RetentionCounts {
        switch kind {
        case .rooms: try await purgeRooms(cutoffs)
        case .removedMembers: try await purgeRemovedMembers(cutoffs)
        case .classes: try await purgeClasses(cutoffs)
        case .stories: try await purgeStories(cutoffs)
        case .pictures: try await purgePictures(cutoffs)
        case .audit: try await pruneAudit(cutoffs)
        }
    }
}

extension AuditLog {
    /// One `retention_deleted` row per school the sweep deleted `kind` in: actor "retention", the kind
    /// and the count, never what was deleted.
    public func recordRetention(_ counts: RetentionCounts, kind: RetentionKind, at now: ServerTime) async throws {
        for (school, count) in counts.sorted(by: { ($0.key ?? "") < ($1.key ?? "") }) where count > 0 {
            try await append(AuditEvent(
                at: now, actor: AuditActor(kind: .retention), action: .retentionDeleted, target: school.map { "school:\($0)" } ?? "server",
                schoolID: school, address: "", detail: "\(kind.rawValue) \(count)"
            ))
        }
    }
}
