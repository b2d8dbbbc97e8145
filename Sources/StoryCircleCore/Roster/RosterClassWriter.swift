/// The classes of a roster import (`RosterPlanner`): each class's owner, name and children worked out
/// against what the class is now, and checked by the same rules as a class a teacher sends (`ClassRules`).
struct RosterClassWriter {
    /// A child the roster puts in a class.
    private struct Child {
        /// `<class sourcedId>/<user sourcedId>`: the member link's key.
        var key: String
        var user: String
        var enrollment: String?
        /// Nil: keep the name the member has (a delta that does not resend the user).
        var name: String?
        var familyName: String = ""
        /// Where a problem with this child is shown.
        var file = "users.csv"
        var line = 0
    }

    private let roster: OneRoster
    private let mode: OneRoster.Mode
    private let linked: [RosterKind: [String: String]]
    private let teachers: [String: Owner]
    /// Teachers whose rows were refused (their classes are not reported again).
    private let refusedTeachers: Set<String>
    private let classes: [String: SchoolClass]
    private let users: [String: OneRoster.User]
    private let unicode: any ConfusableSkeleton
    private let makeID: (RosterKind) -> String
    /// Member id → its link's key, and enrolment sourcedId → member id.
    private var memberKeys: [String: String] = [:]
    private var enrollmentMembers: [String: String] = [:]
    /// The member keys of the enrolments this import deletes.
    private var deletedKeys: Set<String> = []
    /// The users this import deletes or disables.
    private let gone: Set<String>
    /// Each owner's class name keys in this import (two of one teacher's classes must not look alike).
    private var nameKeys: [String: Set<String>] = [:]

    var problems: [RosterProblem] = []
    var writes: [RosterPlan.ClassWrite] = []
    var links: [RosterLink] = []
    var unlinks: [RosterLink] = []
    var counts = RosterCounts()

    init(planner: RosterPlanner) {
        roster = planner.roster
        mode = planner.roster.mode("enrollments")
        linked = planner.linkedIDs
        teachers = planner.teachers
        refusedTeachers = planner.refusedTeachers
        classes = Dictionary(planner.state.classes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        users = Dictionary(planner.roster.users.map { ($0.sourcedID, $0) }, uniquingKeysWith: { first, _ in first })
        gone = Set(planner.roster.users.filter { $0.status == .tobedeleted || !$0.enabled }.map(\.sourcedID))
        unicode = planner.unicode
        makeID = planner.makeID
        for (key, member) in linked[.member] ?? [:] { memberKeys[member] = key }
        enrollmentMembers = linked[.enrollment] ?? [:]
        // A delta deletes an enrolment by its sourcedId alone, so which class it was in comes from its link.
        for enrollment in planner.roster.enrollments where enrollment.status == .tobedeleted {
            if let member = enrollmentMembers[enrollment.sourcedID], let key = memberKeys[member] { deletedKeys.insert(key) }
            if !enrollment.classSourcedID.isEmpty { deletedKeys.insert("\(enrollment.classSourcedID)/\(enrollment.userSourcedID)") }
        }
    }

    /// A class gone from the roster keeps its rooms and results; the children the roster put in leave it.
    mutating func leave(_ sourcedID: String) {
        guard let id = linked[.schoolClass]?[sourcedID], let current = classes[id] else { return }
        let kept = current.members.filter { memberKeys[$0.id] == nil }
        guard kept.count != current.members.count else { return }
        counts.classesLeft += 1
        for member in current.members where memberKeys[member.id] != nil { remove(member.id) }
        let children = kept.map { ClassDraft.Child(id: $0.id, name: $0.name, avatar: $0.avatar) }
        writes.append(RosterPlan.ClassWrite(
            id: id, version: current.version, draft: ClassDraft(name: current.name, nameKeys: Nickname.matchingKeys(current.name, using: unicode), children: children),
            owner: current.owner))
    }

    /// Class `sourcedID` as the roster has it (`title` nil: a delta that only changes its enrolments).
    mutating func write(_ sourcedID: String, title: String?, line: Int, enrollments: [OneRoster.Enrollment]) {
        let existingID = linked[.schoolClass]?[sourcedID]
        let current = existingID.flatMap { classes[$0] }
        let teaching = enrollments.filter { $0.role == "teacher" && $0.status == .active && teachers[$0.userSourcedID] != nil }
            .sorted { ($0.primary ? 0 : 1, $0.line) < ($1.primary ? 0 : 1, $1.line) }
        counts.otherTeachersNotKept += max(0, teaching.count - 1)
        guard let owner = teaching.first.flatMap({ teachers[$0.userSourcedID] }) ?? current?.owner else {
            // A teacher whose own row has a problem: that problem is the one to fix.
            if enrollments.contains(where: { $0.role == "teacher" && refusedTeachers.contains($0.userSourcedID) }) { return }
            problems.append(RosterProblem(file: "classes.csv", line: line, field: "sourcedId", code: "no_teacher"))
            return
        }
        guard let children = children(of: sourcedID, current: current, enrollments: enrollments) else { return }
        let classID = current?.id ?? makeID(.schoolClass)
        var raw: [ClassRules.RawChild] = []
        var places: [Child?] = []
        var ids: [String] = []
        let wanted = Dictionary(children.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        var placed: Set<String> = []
        for member in current?.members ?? [] {
            guard let key = memberKeys[member.id] else {
                raw.append(ClassRules.RawChild(id: member.id, name: member.name, avatar: member.avatar))
                places.append(nil)
                ids.append(member.id)
                continue
            }
            guard let child = wanted[key] else {
                remove(member.id)
                continue
            }
            placed.insert(key)
            raw.append(ClassRules.RawChild(id: member.id, name: child.name ?? member.name, avatar: member.avatar))
            places.append(child)
            ids.append(member.id)
            link(child, member.id)
        }
        for child in children where !placed.contains(child.key) {
            let id = makeID(.member)
            raw.append(ClassRules.RawChild(id: id, name: child.name ?? "", avatar: nil))
            places.append(child)
            ids.append(id)
            link(child, id)
            counts.childrenAdded += 1
        }
        let name = title ?? current?.name ?? ""
        switch ClassRules.check(name: name, children: raw, using: unicode) {
        case .failure(let refusal):
            for problem in refusal.problems { report(problem, name: name, classLine: line, places: places, raw: raw) }
        case .success(var draft):
            for (index, id) in ids.enumerated() { draft.children[index].id = id }
            draft.owner = owner
            let taken = nameKeys[owner.accountID, default: []]
            guard taken.isDisjoint(with: draft.nameKeys) else {
                problems.append(RosterProblem(file: "classes.csv", line: line, field: "title", code: "class_name_taken", params: ["value": String(name.prefix(64))]))
                return
            }
            nameKeys[owner.accountID, default: []].formUnion(draft.nameKeys)
            if existingID != classID { links.append(RosterLink(kind: .schoolClass, sourcedID: sourcedID, localID: classID)) }
            if let current {
                let same = current.name == draft.name && current.owner == owner
                    && current.members.map { ClassDraft.Child(id: $0.id, name: $0.name, avatar: $0.avatar) } == draft.children
                guard !same else { return }
                counts.classesUpdated += 1
            } else {
                counts.classesCreated += 1
            }
            writes.append(RosterPlan.ClassWrite(id: classID, version: current?.version ?? 0, draft: draft, owner: owner))
        }
    }

    /// The children the roster wants in the class, in its order, or nil after reporting problems.
    private mutating func children(of sourcedID: String, current: SchoolClass?, enrollments: [OneRoster.Enrollment]) -> [Child]? {
        var children: [Child] = []
        var index: [String: Int] = [:]
        if mode == .absent || mode == .delta {
            // Not resent: the children the roster put in stay, with their names.
            for member in current?.members ?? [] {
                guard let key = memberKeys[member.id] else { continue }
                index[key] = children.count
                children.append(Child(key: key, user: String(key.dropFirst(sourcedID.count + 1))))
            }
        }
        var fine = true
        for enrollment in enrollments where enrollment.role == "student" && enrollment.status == .active {
            let key = "\(sourcedID)/\(enrollment.userSourcedID)"
            var child = Child(key: key, user: enrollment.userSourcedID, enrollment: enrollment.sourcedID, file: "enrollments.csv", line: enrollment.line)
            if let user = users[enrollment.userSourcedID] {
                guard user.status == .active, user.enabled else { continue }
                child.name = Self.childName(given: user.givenName, family: user.familyName)
                child.familyName = user.familyName
                child.file = "users.csv"
                child.line = user.line
            } else if linked[.member]?[key] == nil || mode == .bulk && current == nil {
                problems.append(RosterProblem(
                    file: "enrollments.csv", line: enrollment.line, field: "userSourcedId", code: "unknown_reference",
                    params: ["kind": "user", "value": String(enrollment.userSourcedID.prefix(64))]))
                fine = false
                continue
            }
            if let at = index[key] {
                children[at] = child
            } else {
                index[key] = children.count
                children.append(child)
            }
        }
        // Users a delta deleted or disabled leave every class.
        children.removeAll { deletedKeys.contains($0.key) || gone.contains($0.user) }
        disambiguate(&children)
        return fine ? children : nil
    }

    /// Two children whose short names look alike are named with their whole family name, as a teacher
    /// would tell them apart.
    private func disambiguate(_ children: inout [Child]) {
        var holders: [String: [Int]] = [:]
        for (index, child) in children.enumerated() {
            guard let name = child.name, let key = Nickname.matchingKeys(name, using: unicode).first else { continue }
            holders[key, default: []].append(index)
        }
        for indices in holders.values where indices.count > 1 {
            for index in indices where !children[index].familyName.isEmpty {
                let given = children[index].name.map { String($0.split(separator: " ").dropLast().joined(separator: " ")) } ?? ""
                children[index].name = "\(given) \(children[index].familyName)"
            }
        }
    }

    /// What a teacher types: the given name and the family name's initial ("Maya R.").
    static func childName(given: String, family: String) -> String {
        guard let initial = family.first(where: { !$0.isWhitespace }) else { return given }
        return "\(given) \(initial.uppercased())."
    }

    private mutating func link(_ child: Child, _ member: String) {
        if linked[.member]?[child.key] != member { links.append(RosterLink(kind: .member, sourcedID: child.key, localID: member)) }
        if let enrollment = child.enrollment, linked[.enrollment]?[enrollment] != member {
            links.append(RosterLink(kind: .enrollment, sourcedID: enrollment, localID: member))
        }
    }

    private mutating func remove(_ member: String) {
        counts.childrenRemoved += 1
        if let key = memberKeys[member] { unlinks.append(RosterLink(kind: .member, sourcedID: key, localID: member)) }
        for (enrollment, id) in enrollmentMembers where id == member { unlinks.append(RosterLink(kind: .enrollment, sourcedID: enrollment, localID: member)) }
    }

    /// A class rule's problem at the roster's line: the class's at its row, a child's at theirs.
    private mutating func report(_ problem: ClassRules.Problem, name: String, classLine: Int, places: [Child?], raw: [ClassRules.RawChild]) {
        var params = problem.params
        if let name = params["name"] { params["value"] = name }
        if problem.path.hasPrefix("children["), let close = problem.path.firstIndex(of: "]"),
            let index = Int(problem.path.dropFirst("children[".count).prefix(upTo: close)), index < raw.count
        {
            params["value"] = params["value"] ?? String(raw[index].name.prefix(40))
            let child = places[index]
            problems.append(RosterProblem(
                file: child?.file ?? "classes.csv", line: child?.line ?? classLine, field: child?.file == "enrollments.csv" ? "userSourcedId" : "givenName",
                code: problem.code, params: params))
        } else {
            params["value"] = params["value"] ?? String(name.prefix(64))
            problems.append(RosterProblem(file: "classes.csv", line: classLine, field: problem.path == "name" ? "title" : "sourcedId", code: problem.code, params: params))
        }
    }
}
