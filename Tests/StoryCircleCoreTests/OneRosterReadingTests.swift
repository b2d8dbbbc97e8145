import Testing
@testable import StoryCircleCore

/// A small OneRoster 1.2 bundle in the specification's layout, and ways to damage it.
enum SampleRoster {
    static let manifest = """
        propertyName,value
        manifest.version,1.0
        oneroster.version,1.2
        file.academicSessions,bulk
        file.classes,bulk
        file.enrollments,bulk
        file.orgs,bulk
        file.roles,absent
        file.users,bulk
        file.courses,absent
        source.systemName,Example SIS

        """
    static let orgs = """
        sourcedId,status,dateLastModified,name,type,identifier,parentSourcedId
        d1,,,Riverside District,district,,
        s1,,,Hillside Primary,school,,d1

        """
    static let users = """
        sourcedId,status,dateLastModified,enabledUser,orgSourcedIds,role,username,userIds,givenName,familyName,middleName,identifier,email,sms,phone,agentSourcedIds,grades,password
        t1,,,true,s1,teacher,ana.lima,,Ana,Lima,,,ana.lima@hillside.example,,,,,
        u1,,,true,s1,student,maya.r,,Maya,Rossi,,,,,,,01,
        u2,,,true,s1,student,leo.b,,Leo,Brandt,,,,,,,01,
        u3,,,true,s1,student,zoe.k,,Zoë,Kovač,,,,,,,01,
        a1,,,true,d1,administrator,it.admin,,Ines,Admin,,,,,,,,

        """
    static let classes = """
        sourcedId,status,dateLastModified,title,grades,courseSourcedId,classCode,classType,location,schoolSourcedId,termSourcedIds,subjects,subjectCodes,periods
        c1,,,Class 1B Reading,01,k1,1B,homeroom,,s1,y1,,,

        """
    static let enrollments = """
        sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role,primary,beginDate,endDate
        e0,,,c1,s1,t1,teacher,true,,
        e1,,,c1,s1,u1,student,false,,
        e2,,,c1,s1,u2,student,false,,
        e3,,,c1,s1,u3,student,false,,

        """
    static let sessions = """
        sourcedId,status,dateLastModified,title,type,startDate,endDate,parentSourcedId,schoolYear
        y1,,,2026-2027,schoolYear,2026-09-01,2027-06-30,,2027

        """

    static func files(_ changes: [String: String] = [:]) -> OneRoster.Files {
        var texts = [
            "manifest.csv": manifest, "orgs.csv": orgs, "users.csv": users, "classes.csv": classes, "enrollments.csv": enrollments,
            "academicSessions.csv": sessions,
        ]
        for (name, text) in changes { texts[name] = text }
        return texts.mapValues { Array($0.utf8) }
    }

    static func read(_ changes: [String: String] = [:]) throws -> OneRoster { try OneRoster.read(files(changes)).get() }

    static func problems(_ files: OneRoster.Files) -> [RosterProblem] {
        if case .failure(let refusal) = OneRoster.read(files) { return refusal.problems }
        return []
    }

    static func problems(_ changes: [String: String]) -> [RosterProblem] { problems(files(changes)) }
}

@Suite("OneRoster reading")
struct OneRosterReadingTests {
    func place(_ problem: RosterProblem) -> String { "\(problem.file):\(problem.line):\(problem.field):\(problem.code)" }

    @Test func theSampleIsReadWithEveryFileTheManifestSends() throws {
        let roster = try SampleRoster.read()
        #expect(roster.mode("users") == .bulk && roster.mode("roles") == .absent && roster.mode("courses") == .absent)
        #expect(roster.orgs.map(\.sourcedID) == ["d1", "s1"])
        #expect(roster.users.map(\.sourcedID) == ["t1", "u1", "u2", "u3", "a1"])
        #expect(roster.users[3].givenName == "Zoë" && roster.users[3].familyName == "Kovač")
        #expect(roster.users[0].roles == ["teacher"] && roster.users[0].orgSourcedIDs == ["s1"] && roster.users[0].line == 2)
        #expect(roster.classes.first?.termSourcedIDs == ["y1"])
        #expect(roster.enrollments.map(\.primary) == [true, false, false, false])
        #expect(roster.academicSessions.map(\.title) == ["2026-2027"])
    }

    @Test func rolesComeFromRolesCsvInOneRoster12() throws {
        let users = """
            sourcedId,status,dateLastModified,enabledUser,username,givenName,familyName
            t1,,,true,ana.lima,Ana,Lima

            """
        let roles = """
            sourcedId,status,dateLastModified,userSourcedId,roleType,role,beginDate,endDate,orgSourcedId,userProfileSourcedId
            r1,,,t1,primary,teacher,,,s1,

            """
        let manifest = SampleRoster.manifest.replacing("file.roles,absent", with: "file.roles,bulk")
        let roster = try SampleRoster.read(["manifest.csv": manifest, "users.csv": users, "roles.csv": roles, "enrollments.csv": "sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role\n"])
        #expect(roster.users.first?.roles == ["teacher"] && roster.users.first?.orgSourcedIDs == ["s1"])
    }

    @Test func aMissingManifestOrFileIsNamed() {
        var files = SampleRoster.files()
        files["manifest.csv"] = nil
        #expect(SampleRoster.problems(files).map(place) == ["manifest.csv:0::manifest_missing"])
        files = SampleRoster.files()
        files["users.csv"] = nil
        #expect(SampleRoster.problems(files).map(place) == ["users.csv:0::file_missing"])
    }

    @Test func aFileTheManifestSaysIsAbsentIsNotRead() throws {
        var files = SampleRoster.files(["manifest.csv": SampleRoster.manifest.replacing("file.academicSessions,bulk", with: "file.academicSessions,absent")])
        files["academicSessions.csv"] = Array("garbage\"".utf8)
        #expect(try OneRoster.read(files).get().academicSessions == [])
    }

    @Test func badManifestValuesAreReportedAtTheirLines() {
        let manifest = SampleRoster.manifest.replacing("oneroster.version,1.2", with: "oneroster.version,2.0")
            .replacing("file.courses,absent", with: "file.courses,sometimes")
        #expect(SampleRoster.problems(["manifest.csv": manifest]).map(place) == ["manifest.csv:3:value:version_unsupported", "manifest.csv:10:value:mode_invalid"])
    }

    @Test func aMissingColumnIsReportedOnTheHeader() {
        let users = SampleRoster.users.replacing(",givenName,", with: ",firstName,")
        #expect(SampleRoster.problems(["users.csv": users]).map(place) == ["users.csv:1:givenName:column_missing"])
    }

    @Test func everyBadRowIsReportedWithFileLineAndField() {
        let users = SampleRoster.users
            .replacing("u1,,,true,s1,student,maya.r,,Maya,", with: "u1,,,maybe,s1,student,maya.r,,,")
            .replacing("u2,,,true,s1,student", with: "u1,,,true,s1,pupil")
        let enrollments = SampleRoster.enrollments.replacing("e3,,,c1,s1,u3,student", with: "e3,,,c1,s1,u3,learner")
        let classes = SampleRoster.classes.replacing("c1,,,Class 1B Reading", with: "c1,tobedeleted,,Class 1B Reading")
        #expect(SampleRoster.problems(["users.csv": users, "enrollments.csv": enrollments, "classes.csv": classes]).map(place) == [
            "users.csv:3:enabledUser:value_invalid", "users.csv:3:givenName:value_missing",
            "users.csv:4:role:value_invalid", "users.csv:4:sourcedId:duplicate_id",
            "classes.csv:2:status:value_invalid",
            "enrollments.csv:5:role:value_invalid",
        ])
    }

    @Test func aDeltaNeedsStatusAndDateButADeletionOnlyItsId() throws {
        let manifest = SampleRoster.manifest.replacing("file.enrollments,bulk", with: "file.enrollments,delta")
        let enrollments = """
            sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role,primary
            e1,tobedeleted,2026-12-01T10:00:00Z,,,,,
            e4,active,2026-12-01T10:00:00Z,c1,s1,u3,student,false
            e5,,,c1,s1,u3,student,false
            e6,gone,2026-12-01T10:00:00Z,c1,s1,u3,student,false

            """
        #expect(SampleRoster.problems(["manifest.csv": manifest, "enrollments.csv": enrollments]).map(place) == [
            "enrollments.csv:4:status:value_missing", "enrollments.csv:4:dateLastModified:value_missing", "enrollments.csv:5:status:value_invalid",
        ])
        let fine = enrollments.split(separator: "\n").prefix(3).joined(separator: "\n")
        let roster = try SampleRoster.read(["manifest.csv": manifest, "enrollments.csv": fine])
        #expect(roster.enrollments.map(\.status) == [.tobedeleted, .active])
    }

    @Test func damagedCsvIsReportedAtItsLineAndOtherFilesStillChecked() {
        let orgs = SampleRoster.orgs + "s2,,,\"Open quote,school,,\n"
        let classes = SampleRoster.classes.replacing("Class 1B Reading", with: String(repeating: "x", count: 300))
        #expect(SampleRoster.problems(["orgs.csv": orgs, "classes.csv": classes]).map(place) == ["orgs.csv:4::csv_unterminated_quote", "classes.csv:2:title:value_too_long"])
    }

    @Test func thousandsOfBadRowsAreCapped() {
        let rows = (1...500).map { "x\($0),,,true,s1,student,kid\($0),,,Doe,,,,,,,," }.joined(separator: "\n")
        let users = SampleRoster.users.split(separator: "\n")[0] + "\n" + rows + "\n"
        let problems = SampleRoster.problems(["users.csv": String(users)])
        #expect(problems.count == OneRoster.maximumProblems + 1)
        #expect(problems.last?.code == "too_many_problems")
    }

    @Test func problemsReadAsSentences() {
        let problem = RosterProblem(file: "users.csv", line: 4, field: "givenName", code: "value_missing")
        #expect(problem.description == "users.csv line 4, givenName: givenName is empty.")
    }
}
