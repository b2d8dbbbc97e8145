import Testing
@testable import StoryCircleCore

/// What an import does, worked out without a store: made the first time, changed in place the next,
/// every problem at its row.
@Suite("Roster plan")
struct RosterPlanTests {
    let unicode = LookalikeTable()

    /// Ids drawn in order: `school-1`, `teacher-2`, `member-3` …
    final class Counter: @unchecked Sendable {
        var next = 0
        func id(_ kind: RosterKind) -> String {
            next += 1
            return "\(kind == .schoolClass ? "class" : kind.rawValue)-\(next)"
        }
    }

    func plan(_ roster: OneRoster, _ state: RosterState = RosterState(), as authority: RosterAuthority = .district) -> Result<RosterPlan, RosterRefusal> {
        let counter = Counter()
        return RosterPlanner.plan(roster, state: state, authority: authority, unicode: unicode, makeID: counter.id)
    }

    func problems(_ roster: OneRoster, _ state: RosterState = RosterState(), as authority: RosterAuthority = .district) -> [String] {
        guard case .failure(let refusal) = plan(roster, state, as: authority) else { return [] }
        return refusal.problems.map { "\($0.file):\($0.line):\($0.field):\($0.code)" }
    }

    /// The state after the store carried `plan` out (what `RosterBook.applyRoster` does, in memory).
    func applied(_ plan: RosterPlan, to state: RosterState) -> RosterState {
        var state = state
        let time = ServerTime(milliseconds: 0)
        for school in plan.newSchools { state.schools.append(School(id: school.id, name: school.name, createdAt: time)) }
        for rename in plan.renamedSchools { state.schools = state.schools.map { $0.id == rename.id ? School(id: $0.id, name: rename.name, createdAt: time, version: $0.version + 1) : $0 } }
        for draft in plan.newAccounts {
            state.accounts.append(Account(id: draft.id, login: draft.login, displayName: draft.displayName, role: draft.role, schoolID: draft.schoolID, createdAt: time))
        }
        for update in plan.accountUpdates {
            state.accounts = state.accounts.map {
                guard $0.id == update.id else { return $0 }
                var account = $0
                if let name = update.change.displayName { account.displayName = name }
                if let school = update.change.schoolID { account.schoolID = school }
                if let disabled = update.change.disabled { account.disabled = disabled }
                account.version += 1
                return account
            }
        }
        for write in plan.classWrites {
            let members = write.draft.children.map { ClassMember(id: $0.id ?? "?", name: $0.name, avatar: $0.avatar) }
            let schoolClass = SchoolClass(id: write.id, name: write.draft.name, version: write.version + 1, changedAt: time, members: members, owner: write.owner)
            state.classes.removeAll { $0.id == write.id }
            state.classes.append(schoolClass)
        }
        state.links.removeAll { link in plan.unlinks.contains(link) || plan.links.contains { $0.kind == link.kind && $0.sourcedID == link.sourcedID } }
        state.links += plan.links
        return state
    }

    @Test func aFirstImportMakesTheSchoolTheTeacherAndTheClassWithShortNames() throws {
        let plan = try plan(SampleRoster.read()).get()
        #expect(plan.newSchools == [RosterPlan.SchoolName(id: "school-1", name: "Hillside Primary")])
        #expect(plan.newAccounts == [AccountDraft(id: "teacher-2", login: "ana.lima", displayName: "Ana Lima", role: .teacher, schoolID: "school-1")])
        let write = try #require(plan.classWrites.first)
        #expect(write.id == "class-3" && write.version == 0 && write.owner == Owner(accountID: "teacher-2", schoolID: "school-1"))
        #expect(write.draft.name == "Class 1B Reading")
        #expect(write.draft.children.map(\.name) == ["Maya R.", "Leo B.", "Zoë K."])
        #expect(write.draft.children.map(\.id) == ["member-4", "member-5", "member-6"])
        #expect(write.draft.children.map(\.avatar) == ["owl", "fox", "bear"])
        var expected = RosterCounts()
        expected.schoolsCreated = 1
        expected.teachersCreated = 1
        expected.classesCreated = 1
        expected.childrenAdded = 3
        expected.usersSkipped = 1
        #expect(plan.counts == expected, "the district administrator becomes nothing here")
        #expect(Set(plan.links.filter { $0.kind == .member }.map(\.sourcedID)) == ["c1/u1", "c1/u2", "c1/u3"])
        #expect(Set(plan.links.filter { $0.kind == .enrollment }.map(\.sourcedID)) == ["e1", "e2", "e3"])
    }

    @Test func theSameRosterAgainChangesNothing() throws {
        let roster = try SampleRoster.read()
        let state = applied(try plan(roster).get(), to: RosterState())
        let again = try plan(roster, state).get()
        #expect(again.classWrites == [] && again.newAccounts == [] && again.accountUpdates == [] && again.newSchools == [] && again.links == [])
    }

    @Test func aChangedBulkRosterRenamesMovesAndWithdrawsInPlace() throws {
        let first = applied(try plan(SampleRoster.read()).get(), to: RosterState())
        // The class is renamed, Leo leaves, Ida joins, the school is renamed, the teacher's name is corrected.
        let changed = try SampleRoster.read([
            "orgs.csv": SampleRoster.orgs.replacing("Hillside Primary", with: "Hillside Primary School"),
            "users.csv": SampleRoster.users.replacing("Ana,Lima", with: "Ana,Lima-Souza") + "u4,,,true,s1,student,ida.n,,Ida,Nowak,,,,,,,01,\n",
            "classes.csv": SampleRoster.classes.replacing("Class 1B Reading", with: "Class 2B Reading"),
            "enrollments.csv": SampleRoster.enrollments.replacing("e2,,,c1,s1,u2,student,false,,\n", with: "") + "e4,,,c1,s1,u4,student,false,,\n",
        ])
        let plan = try plan(changed, first).get()
        #expect(plan.renamedSchools == [RosterPlan.SchoolName(id: "school-1", name: "Hillside Primary School")])
        #expect(plan.accountUpdates == [RosterPlan.AccountUpdate(id: "teacher-2", change: AccountChange(displayName: "Ana Lima-Souza"), version: 1)])
        let write = try #require(plan.classWrites.first)
        #expect(write.id == "class-3" && write.version == 1 && write.draft.name == "Class 2B Reading")
        #expect(write.draft.children.map(\.name) == ["Maya R.", "Zoë K.", "Ida N."])
        #expect(write.draft.children.map(\.id) == ["member-4", "member-6", "member-1"], "members keep their ids; a new one is drawn")
        #expect(plan.unlinks == [RosterLink(kind: .member, sourcedID: "c1/u2", localID: "member-5"), RosterLink(kind: .enrollment, sourcedID: "e2", localID: "member-5")])
        #expect(plan.counts.childrenAdded == 1 && plan.counts.childrenRemoved == 1 && plan.counts.classesUpdated == 1)
    }

    @Test func childrenATeacherAddedByHandStay() throws {
        var state = applied(try plan(SampleRoster.read()).get(), to: RosterState())
        state.classes[0].members.insert(ClassMember(id: "mem_byhand", name: "Sam", avatar: "cat"), at: 1)
        let again = try plan(SampleRoster.read(["enrollments.csv": SampleRoster.enrollments.replacing("e3,,,c1,s1,u3,student,false,,\n", with: "")]), state).get()
        #expect(again.classWrites.first?.draft.children.map(\.name) == ["Maya R.", "Sam", "Leo B."])
    }

    @Test func aDeltaAddsAndDeletesOnlyWhatItNames() throws {
        let state = applied(try plan(SampleRoster.read()).get(), to: RosterState())
        let manifest = SampleRoster.manifest.replacing("file.enrollments,bulk", with: "file.enrollments,delta")
            .replacing("file.users,bulk", with: "file.users,delta").replacing("file.classes,bulk", with: "file.classes,absent")
            .replacing("file.orgs,bulk", with: "file.orgs,absent").replacing("file.academicSessions,bulk", with: "file.academicSessions,absent")
        let users = """
            sourcedId,status,dateLastModified,enabledUser,orgSourcedIds,role,username,givenName,familyName
            u4,active,2026-12-01,true,s1,student,ida.n,Ida,Nowak

            """
        let enrollments = """
            sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role,primary
            e1,tobedeleted,2026-12-01,,,,,
            e4,active,2026-12-01,c1,s1,u4,student,false

            """
        let delta = try SampleRoster.read(["manifest.csv": manifest, "users.csv": users, "enrollments.csv": enrollments])
        let plan = try plan(delta, state).get()
        #expect(plan.classWrites.first?.draft.children.map(\.name) == ["Leo B.", "Zoë K.", "Ida N."])
        #expect(plan.accountUpdates == [], "a delta without the teacher leaves the teacher alone")
    }

    @Test func aTeacherGoneFromABulkFileIsDisabledAndAGoneClassIsEmptiedButKept() throws {
        let state = applied(try plan(SampleRoster.read()).get(), to: RosterState())
        let roster = try SampleRoster.read([
            "users.csv": SampleRoster.users.split(separator: "\n").filter { !$0.hasPrefix("t1,") }.joined(separator: "\n") + "\n",
            "classes.csv": SampleRoster.classes.split(separator: "\n")[0] + "\n", "enrollments.csv": "sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role\n",
        ])
        let plan = try plan(roster, state).get()
        #expect(plan.accountUpdates == [RosterPlan.AccountUpdate(id: "teacher-2", change: AccountChange(disabled: true), version: 1)])
        #expect(plan.classWrites.map(\.id) == ["class-3"] && plan.classWrites.first?.draft.children == [])
        #expect(plan.counts.classesLeft == 1 && plan.counts.childrenRemoved == 3 && plan.counts.teachersDisabled == 1)
    }

    @Test func theClassBelongsToItsPrimaryTeacherAndOthersAreCounted() throws {
        let users = SampleRoster.users + "t2,,,true,s1,teacher,bo.chen,,Bo,Chen,,,,,,,,\n"
        let enrollments = SampleRoster.enrollments.replacing("e0,,,c1,s1,t1,teacher,true", with: "e0,,,c1,s1,t1,teacher,false") + "e9,,,c1,s1,t2,teacher,true,,\n"
        let plan = try plan(SampleRoster.read(["users.csv": users, "enrollments.csv": enrollments])).get()
        let bo = try #require(plan.newAccounts.first { $0.login == "bo.chen" })
        #expect(plan.classWrites.first?.owner?.accountID == bo.id)
        #expect(plan.counts.otherTeachersNotKept == 1)
    }

    @Test func anExistingAccountWithTheLoginInTheSchoolIsLinkedNotMadeAgain() throws {
        let school = School(id: "sch_hill", name: "hillside primary", createdAt: ServerTime(milliseconds: 0))
        let ana = Account(id: "acc_ana", login: "ana.lima", displayName: "Ana", role: .teacher, schoolID: "sch_hill", createdAt: ServerTime(milliseconds: 0))
        let plan = try plan(SampleRoster.read(), RosterState(schools: [school], accounts: [ana])).get()
        #expect(plan.newSchools == [] && plan.newAccounts == [])
        #expect(plan.links.contains(RosterLink(kind: .school, sourcedID: "s1", localID: "sch_hill")))
        #expect(plan.links.contains(RosterLink(kind: .teacher, sourcedID: "t1", localID: "acc_ana")))
        let elsewhere = Account(id: "acc_x", login: "ana.lima", displayName: "Ana", role: .teacher, schoolID: "sch_other", createdAt: ServerTime(milliseconds: 0))
        #expect(problems(try SampleRoster.read(), RosterState(schools: [school], accounts: [elsewhere])) == ["users.csv:2:username:login_taken"])
    }

    @Test func aSchoolAdministratorImportsOnlyTheirSchool() throws {
        let school = School(id: "sch_hill", name: "Hillside Primary", createdAt: ServerTime(milliseconds: 0))
        #expect(try plan(SampleRoster.read(), RosterState(schools: [school]), as: .school("sch_hill")).get().newSchools == [])
        let other = School(id: "sch_other", name: "Other", createdAt: ServerTime(milliseconds: 0))
        #expect(problems(try SampleRoster.read(), RosterState(schools: [school, other]), as: .school("sch_other")) == [
            "orgs.csv:3:sourcedId:not_your_school", "users.csv:2:orgSourcedIds:no_school", "classes.csv:2:schoolSourcedId:unknown_reference",
        ])
    }

    @Test func aSchoolAdministratorsRosterLeavesTheOtherSchoolsAlone() throws {
        let classes = SampleRoster.classes + "c9,,,Brook Class,01,k1,,homeroom,,s2,y1,,,\n"
        let district = try SampleRoster.read([
            "orgs.csv": SampleRoster.orgs + "s2,,,Brookside Primary,school,,d1\n",
            "users.csv": SampleRoster.users + "t9,,,true,s2,teacher,bea.brook,,Bea,Brook,,,,,,,,\n",
            "classes.csv": classes, "enrollments.csv": SampleRoster.enrollments + "e90,,,c9,s2,t9,teacher,true,,\n",
        ])
        let state = applied(try plan(district).get(), to: RosterState())
        let hillside = try #require(state.links.first { $0.kind == .school && $0.sourcedID == "s1" }?.localID)
        // Hillside's administrator sends Hillside alone, bulk: Brookside's teacher is not turned off, its class
        // not emptied, and the district's name for the school stays.
        let own = try plan(SampleRoster.read(["orgs.csv": SampleRoster.orgs.replacing("Hillside Primary", with: "Hillside Renamed")]), state, as: .school(hillside)).get()
        #expect(own.accountUpdates == [] && own.classWrites == [] && own.renamedSchools == [])
        // A Brookside class in their roster is refused at its row, as is an enrolment in one.
        let enrollments = SampleRoster.enrollments + "e91,,,c9,s2,u1,student,false,,\n"
        #expect(problems(try SampleRoster.read(["classes.csv": classes]), state, as: .school(hillside)) == ["classes.csv:3:schoolSourcedId:not_your_school"])
        let manifest = SampleRoster.manifest.replacing("file.classes,bulk", with: "file.classes,absent")
        #expect(problems(try SampleRoster.read(["manifest.csv": manifest, "enrollments.csv": enrollments]), state, as: .school(hillside)) == [
            "enrollments.csv:6:classSourcedId:not_your_school",
        ])
    }

    @Test func referencesToNothingAreReportedAtTheirRows() throws {
        let enrollments = SampleRoster.enrollments + "e7,,,c9,s1,u1,student,false,,\ne8,,,c1,s1,u9,student,false,,\n"
        let classes = SampleRoster.classes.replacing(",s1,y1,", with: ",s1,y9,")
        #expect(problems(try SampleRoster.read(["enrollments.csv": enrollments, "classes.csv": classes])) == [
            "enrollments.csv:6:classSourcedId:unknown_reference", "classes.csv:2:termSourcedIds:unknown_reference", "enrollments.csv:7:userSourcedId:unknown_reference",
        ])
    }

    @Test func aClassWithoutTeacherOrWithTooManyChildrenIsRefused() throws {
        let noTeacher = SampleRoster.enrollments.replacing("e0,,,c1,s1,t1,teacher,true,,\n", with: "")
        #expect(problems(try SampleRoster.read(["enrollments.csv": noTeacher])) == ["classes.csv:2:sourcedId:no_teacher"])
        let users = SampleRoster.users + (1...61).map { "k\($0),,,true,s1,student,k\($0),,Kid\($0),Doe,,,,,,,01,\n" }.joined()
        let enrollments = SampleRoster.enrollments + (1...61).map { "ek\($0),,,c1,s1,k\($0),student,false,,\n" }.joined()
        #expect(problems(try SampleRoster.read(["users.csv": users, "enrollments.csv": enrollments])) == ["classes.csv:2:sourcedId:class_too_large"])
    }

    @Test func lookAlikeShortNamesUseTheWholeFamilyNameAndBadNamesAreShownAtTheUser() throws {
        let users = SampleRoster.users.replacing("Leo,Brandt", with: "Maya,Rivera")
        #expect(try plan(SampleRoster.read(["users.csv": users])).get().classWrites.first?.draft.children.map(\.name) == ["Maya Rossi", "Maya Rivera", "Zoë K."])
        let long = users + "u5,,,true,s1,student,x,,\(String(repeating: "Kim", count: 15)),Doe,,,,,,,01,\n"
        let enrollments = SampleRoster.enrollments + "e5,,,c1,s1,u5,student,false,,\n"
        #expect(problems(try SampleRoster.read(["users.csv": long, "enrollments.csv": enrollments])) == ["users.csv:7:givenName:name_too_long"])
    }

    @Test func twoClassesOfOneTeacherWithLookAlikeNamesAreRefused() throws {
        let classes = SampleRoster.classes + "c2,,,Class lB Reading,01,k1,1B,homeroom,,s1,y1,,,\n"
        let enrollments = SampleRoster.enrollments + "e20,,,c2,s1,t1,teacher,true,,\n"
        #expect(problems(try SampleRoster.read(["classes.csv": classes, "enrollments.csv": enrollments])) == ["classes.csv:3:title:class_name_taken"])
    }
}
