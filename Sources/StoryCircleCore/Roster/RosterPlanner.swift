/// Works out what importing a roster does to the server's state (`RosterPlan`), or every problem that stops
/// it: a pure function of the roster, the state and who imports, so every rule is tested without a store.
///
/// - Schools: an org of type school is its linked school, else the school of the same name, else a new one
///   (a district administrator's import only); schools are renamed, never deleted.
/// - Teachers (a user with the teacher role or a teacher enrolment): an account without a password, of
///   the school of their first school org (or of their first class); they sign in by a setup link or a
///   passkey. An existing account with the same login in the same school is linked, not made again. A
///   teacher gone from a bulk file, deleted in a delta or disabled is disabled here.
/// - Classes: owned by their primary teacher (else the first one enrolled). Children are the student
///   enrolments, named as a teacher would type them (given name and the family name's initial); nothing
///   else about a child is kept. Children a teacher added by hand are left alone.
public struct RosterPlanner {
    public var roster: OneRoster
    public var state: RosterState
    public var authority: RosterAuthority
    public var unicode: any ConfusableSkeleton
    /// Draws ids for what the plan makes (a test gives a counter).
    public var makeID: (RosterKind) -> String

    public init(
        roster: OneRoster, state: RosterState, authority: RosterAuthority, unicode: any ConfusableSkeleton,
        makeID: @escaping (RosterKind) -> String = RosterPlanner.randomID
    ) {
        self.roster = roster
        self.state = state
        self.authority = authority
        self.unicode = unicode
        self.makeID = makeID
    }

    public static func randomID(_ kind: RosterKind) -> String {
        switch kind {
        case .school: AccountLogins.makeSchool()
        case .teacher: AccountLogins.makeAccount()
        case .schoolClass: ClassIDs.makeClass()
        case .member, .enrollment: ClassIDs.makeMember()
        }
    }

    private var plan = RosterPlan()
    private var problems: [RosterProblem] = []
    private var linked: [RosterKind: [String: String]] = [:]
    /// School org sourcedId → school id (linked earlier or planned now).
    private var schoolOf: [String: String] = [:]
    /// Teacher user sourcedId → account (id and school).
    private var teacherOf: [String: Owner] = [:]
    /// Teachers whose rows have a problem.
    private var refused: Set<String> = []

    public static func plan(
        _ roster: OneRoster, state: RosterState, authority: RosterAuthority, unicode: any ConfusableSkeleton,
        makeID: @escaping (RosterKind) -> String = RosterPlanner.randomID
    ) -> Result<RosterPlan, RosterRefusal> {
        var planner = RosterPlanner(roster: roster, state: state, authority: authority, unicode: unicode, makeID: makeID)
        return planner.run()
    }

    public mutating func run() -> Result<RosterPlan, RosterRefusal> {
        for link in state.links { linked[link.kind, default: [:]][link.sourcedID] = link.localID }
        planSchools()
        planTeachers()
        planClasses()
        guard problems.isEmpty else {
            let capped = problems.count > OneRoster.maximumProblems
                ? Array(problems.prefix(OneRoster.maximumProblems)) + [RosterProblem(file: "", line: 0, field: "", code: "too_many_problems")] : problems
            return .failure(RosterRefusal(problems: capped))
        }
        return .success(plan)
    }

    private mutating func problem(_ file: String, _ line: Int, _ field: String, _ code: String, _ params: [String: String] = [:]) {
        problems.append(RosterProblem(file: file, line: line, field: field, code: code, params: params))
    }

    private mutating func link(_ kind: RosterKind, _ sourcedID: String, _ localID: String) {
        guard linked[kind]?[sourcedID] != localID else { return }
        linked[kind, default: [:]][sourcedID] = localID
        plan.links.append(RosterLink(kind: kind, sourcedID: sourcedID, localID: localID))
    }

    // MARK: Schools

    private mutating func planSchools() {
        for (sourcedID, id) in linked[.school] ?? [:] { schoolOf[sourcedID] = id }
        var byName: [String: School] = [:]
        for school in state.schools { byName[school.name.lowercased()] = school }
        for org in roster.orgs where org.type.lowercased() == "school" && org.status == .active {
            let name: String
            switch AccountRules.schoolName(org.name) {
            case .success(let checked): name = checked
            case .failure(let refusal):
                problem("orgs.csv", org.line, "name", refusal.code, ["value": String(org.name.prefix(32)), "max": String(AccountRules.schoolNameLength.upperBound)])
                continue
            }
            var id = schoolOf[org.sourcedID] ?? byName[name.lowercased()]?.id
            if let current = id, case .school(let own) = authority, current != own { id = nil }
            if id == nil, case .school = authority {
                problem("orgs.csv", org.line, "sourcedId", "not_your_school", ["value": String(org.sourcedID.prefix(64))])
                continue
            }
            if let id {
                // Schools are named by the district: a school administrator's roster matches theirs, renames nothing.
                if authority == .district, let school = state.schools.first(where: { $0.id == id }), school.name != name {
                    plan.renamedSchools.append(RosterPlan.SchoolName(id: id, name: name))
                    plan.counts.schoolsRenamed += 1
                }
                schoolOf[org.sourcedID] = id
                link(.school, org.sourcedID, id)
            } else {
                let school = RosterPlan.SchoolName(id: makeID(.school), name: name)
                plan.newSchools.append(school)
                plan.counts.schoolsCreated += 1
                byName[name.lowercased()] = School(id: school.id, name: name, createdAt: ServerTime(milliseconds: 0))
                schoolOf[org.sourcedID] = school.id
                link(.school, org.sourcedID, school.id)
            }
        }
    }

    // MARK: Teachers

    /// Users who teach: the teacher role, or a teacher enrolment in this import.
    private var teacherUsers: Set<String> {
        var teachers = Set(roster.users.filter { $0.roles.contains("teacher") }.map(\.sourcedID))
        for enrollment in roster.enrollments where enrollment.role == "teacher" && enrollment.status == .active { teachers.insert(enrollment.userSourcedID) }
        return teachers
    }

    private mutating func planTeachers() {
        let teachers = teacherUsers
        let accounts = Dictionary(state.accounts.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let byLogin = Dictionary(state.accounts.map { ($0.login, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<String> = []
        let students = Set(roster.enrollments.filter { $0.role == "student" }.map(\.userSourcedID))
        for (sourcedID, id) in linked[.teacher] ?? [:] {
            if let account = accounts[id] { teacherOf[sourcedID] = Owner(account) }
        }
        for user in roster.users {
            seen.insert(user.sourcedID)
            let linkedAccount = linked[.teacher]?[user.sourcedID].flatMap { accounts[$0] }
            guard user.status == .active, user.enabled else {
                if let account = linkedAccount { disable(account) }
                continue
            }
            guard teachers.contains(user.sourcedID) else {
                if !students.contains(user.sourcedID) { plan.counts.usersSkipped += 1 }
                continue
            }
            guard let schoolID = school(ofTeacher: user) else {
                refuse(user, "orgSourcedIds", "no_school")
                continue
            }
            if case .school(let own) = authority, schoolID != own {
                refuse(user, "orgSourcedIds", "not_your_school", ["value": String(user.orgSourcedIDs.first?.prefix(64) ?? "")])
                continue
            }
            let displayName = String("\(user.givenName) \(user.familyName)".prefix(AccountRules.displayNameLength.upperBound))
            if let account = linkedAccount {
                var change = AccountChange()
                if account.displayName != displayName { change.displayName = displayName }
                if account.role == .teacher, account.schoolID != schoolID { change.schoolID = .some(schoolID) }
                if account.disabled { change.disabled = false }
                if change != AccountChange() {
                    plan.accountUpdates.append(RosterPlan.AccountUpdate(id: account.id, change: change, version: account.version))
                    plan.counts.teachersUpdated += 1
                }
                teacherOf[user.sourcedID] = Owner(accountID: account.id, schoolID: account.role == .teacher ? schoolID : account.schoolID)
                continue
            }
            guard let login = AccountLogins.normalised(user.username) ?? AccountLogins.normalised(user.email) else {
                refuse(user, "username", "login_invalid", ["value": String(user.username.prefix(32))])
                continue
            }
            if let existing = byLogin[login] {
                // The teacher had an account before the roster: the same person if it is in their school.
                guard existing.schoolID == schoolID else {
                    refuse(user, "username", "login_taken", ["value": String(login.prefix(32))])
                    continue
                }
                teacherOf[user.sourcedID] = Owner(existing)
                link(.teacher, user.sourcedID, existing.id)
                continue
            }
            let draft = AccountDraft(id: makeID(.teacher), login: login, displayName: displayName, role: .teacher, schoolID: schoolID)
            plan.newAccounts.append(draft)
            plan.counts.teachersCreated += 1
            teacherOf[user.sourcedID] = Owner(accountID: draft.id, schoolID: schoolID)
            link(.teacher, user.sourcedID, draft.id)
        }
        // A bulk users file is everyone: a linked teacher missing from it has left.
        if roster.mode("users") == .bulk {
            for (sourcedID, id) in linked[.teacher] ?? [:] where !seen.contains(sourcedID) {
                if let account = accounts[id], mayChange(schoolID: account.schoolID) { disable(account) }
            }
        }
    }


    /// A problem with a teacher's row.
    private mutating func refuse(_ user: OneRoster.User, _ field: String, _ code: String, _ params: [String: String] = [:]) {
        refused.insert(user.sourcedID)
        problem("users.csv", user.line, field, code, params)
    }

    /// Whether this import may change what belongs to school `schoolID` (a school administrator: their own only).
    private func mayChange(schoolID: String?) -> Bool {
        guard case .school(let own) = authority else { return true }
        return schoolID == own
    }

    private mutating func disable(_ account: Account) {
        guard !account.disabled, account.role == .teacher else { return }
        plan.accountUpdates.append(RosterPlan.AccountUpdate(id: account.id, change: AccountChange(disabled: true), version: account.version))
        plan.counts.teachersDisabled += 1
    }

    /// The school of the teacher's first school org, else of the first class they are enrolled in to teach.
    private func school(ofTeacher user: OneRoster.User) -> String? {
        if let school = user.orgSourcedIDs.lazy.compactMap({ schoolOf[$0] }).first { return school }
        let classes = Dictionary(roster.classes.map { ($0.sourcedID, $0) }, uniquingKeysWith: { first, _ in first })
        return roster.enrollments.lazy
            .filter { $0.userSourcedID == user.sourcedID && $0.role == "teacher" }
            .compactMap { classes[$0.classSourcedID].flatMap { schoolOf[$0.schoolSourcedID] } }
            .first
    }

    // MARK: Classes

    private mutating func planClasses() {
        var enrollmentsOf: [String: [OneRoster.Enrollment]] = [:]
        for enrollment in roster.enrollments { enrollmentsOf[enrollment.classSourcedID, default: []].append(enrollment) }
        let known = Set(roster.classes.map(\.sourcedID)).union(linked[.schoolClass]?.keys ?? [:].keys)
        for enrollment in roster.enrollments where enrollment.status == .active && !known.contains(enrollment.classSourcedID) {
            problem("enrollments.csv", enrollment.line, "classSourcedId", "unknown_reference", ["kind": "class", "value": String(enrollment.classSourcedID.prefix(64))])
        }
        let sessions = Set(roster.academicSessions.map(\.sourcedID))
        var writer = RosterClassWriter(planner: self)
        var planned: Set<String> = []
        for schoolClass in roster.classes {
            planned.insert(schoolClass.sourcedID)
            guard schoolClass.status == .active else {
                writer.leave(schoolClass.sourcedID)
                continue
            }
            guard let school = schoolOf[schoolClass.schoolSourcedID] else {
                problem("classes.csv", schoolClass.line, "schoolSourcedId", "unknown_reference", ["kind": "school", "value": String(schoolClass.schoolSourcedID.prefix(64))])
                continue
            }
            guard mayChange(schoolID: school) else {
                problem("classes.csv", schoolClass.line, "schoolSourcedId", "not_your_school", ["value": String(schoolClass.schoolSourcedID.prefix(64))])
                continue
            }
            if roster.mode("academicSessions") == .bulk {
                for term in schoolClass.termSourcedIDs where !sessions.contains(term) {
                    problem("classes.csv", schoolClass.line, "termSourcedIds", "unknown_reference", ["kind": "academic session", "value": String(term.prefix(64))])
                }
            }
            writer.write(schoolClass.sourcedID, title: schoolClass.title, line: schoolClass.line, enrollments: enrollmentsOf[schoolClass.sourcedID] ?? [])
        }
        for (sourcedID, id) in linked[.schoolClass] ?? [:] where !planned.contains(sourcedID) {
            // Another school's class, to a school administrator: not theirs to empty or change.
            guard mayChange(schoolID: state.classes.first { $0.id == id }?.owner?.schoolID) else {
                for enrollment in enrollmentsOf[sourcedID] ?? [] where enrollment.status == .active {
                    problem("enrollments.csv", enrollment.line, "classSourcedId", "not_your_school", ["value": String(sourcedID.prefix(64))])
                }
                continue
            }
            if roster.mode("classes") == .bulk {
                writer.leave(sourcedID)
            } else {
                // Not resent: its enrolments may still change (the writer leaves an unchanged class alone).
                let enrollments = enrollmentsOf[sourcedID] ?? []
                writer.write(sourcedID, title: nil, line: enrollments.first?.line ?? 0, enrollments: enrollments)
            }
        }
        problems += writer.problems
        plan.classWrites += writer.writes
        plan.links += writer.links
        plan.unlinks += writer.unlinks
        plan.counts.classesCreated += writer.counts.classesCreated
        plan.counts.classesUpdated += writer.counts.classesUpdated
        plan.counts.classesLeft += writer.counts.classesLeft
        plan.counts.childrenAdded += writer.counts.childrenAdded
        plan.counts.childrenRemoved += writer.counts.childrenRemoved
        plan.counts.otherTeachersNotKept += writer.counts.otherTeachersNotKept
    }

    // What the class writer reads of the planner.
    var linkedIDs: [RosterKind: [String: String]] { linked }
    var teachers: [String: Owner] { teacherOf }
    var refusedTeachers: Set<String> { refused }
}
