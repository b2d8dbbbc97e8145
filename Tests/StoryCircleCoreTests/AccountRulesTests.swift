import Foundation
import Testing
@testable import StoryCircleCore

/// What an account and a school may be, before anything is stored or hashed.
@Suite("Account rules")
struct AccountRulesTests {
    func code(_ problem: AccountRules.Problem?) -> String? { problem?.code }

    func code<T>(_ result: Result<T, AccountRules.Problem>) -> String? {
        if case .failure(let problem) = result { return problem.code }
        return nil
    }

    @Test func aLoginIsTrimmedCaseFoldedAndMadeOfFewCharacters() throws {
        #expect(try AccountRules.login("  Ana.Lopez+1@School.ORG ").get() == "ana.lopez+1@school.org")
        #expect(try AccountRules.login("josé_ñ").get() == "josé_ñ")
        for bad in ["", "   ", "ana lopez", "ana/lopez", "ana;drop", "<script>", String(repeating: "a", count: 129), "tab\there"] {
            #expect(code(AccountRules.login(bad)) == "login_invalid", "\(bad)")
        }
        #expect(try AccountRules.login(String(repeating: "a", count: 128)).get().count == 128)
    }

    @Test func aNameIsTrimmedAndHasOneToEightyShowableCharacters() throws {
        #expect(try AccountRules.displayName("  Ana   López ").get() == "Ana López")
        #expect(try AccountRules.displayName("👩‍🏫 Ms Ana").get() == "👩‍🏫 Ms Ana", "an emoji joined by ZWJ is fine")
        #expect(code(AccountRules.displayName(" \n ")) == "name_empty")
        #expect(code(AccountRules.displayName(String(repeating: "x", count: 81))) == "name_too_long")
        #expect(try AccountRules.displayName(String(repeating: "x", count: 80)).get().count == 80)
        #expect(code(AccountRules.displayName("Ana\u{0007}")) == "name_invalid")
        #expect(code(AccountRules.displayName("Ana\u{202E}evil")) == "name_invalid", "no bidi overrides")
        #expect(code(AccountRules.schoolName(String(repeating: "s", count: 81))) == "name_too_long")
        let problem = try #require(AccountRules.schoolName("").failureValue)
        #expect(problem.path == "name" && problem.message == "name is empty.")
    }

    @Test func aRoleIsOneOfThreeAndOnlyADistrictAdministratorMayBeWithoutASchool() {
        #expect(code(AccountRules.role("teacher")) == nil)
        #expect(code(AccountRules.role("school_admin")) == nil)
        #expect(code(AccountRules.role("admin")) == "role_unknown")
        #expect(code(AccountRules.role("Teacher")) == "role_unknown")
        #expect(code(AccountRules.placement(role: .teacher, schoolID: nil)) == "school_required")
        #expect(code(AccountRules.placement(role: .schoolAdmin, schoolID: "")) == "school_required")
        #expect(AccountRules.placement(role: .teacher, schoolID: "sch_1") == nil)
        #expect(AccountRules.placement(role: .districtAdmin, schoolID: nil) == nil)
    }

    @Test func aPasswordHasTwelveToOneHundredTwentyEightCharactersAndIsNeverTrimmed() {
        #expect(AccountRules.password("twelve chars") == nil)
        #expect(AccountRules.password("  spaces count  ") == nil)
        #expect(code(AccountRules.password("eleven char")) == "password_too_short")
        #expect(code(AccountRules.password("")) == "password_too_short")
        #expect(AccountRules.password(String(repeating: "é", count: 128)) == nil)
        #expect(code(AccountRules.password(String(repeating: "p", count: 129))) == "password_too_long")
        // One "character" of a thousand combining marks is long however it is counted.
        #expect(code(AccountRules.password("twelve chars" + "e" + String(repeating: "\u{301}", count: 600))) == "password_too_long")
        #expect(code(AccountRules.password("twelve chars\u{0}")) == "password_invalid")
        #expect(AccountRules.password("twelve chars").map(\.message) == nil)
        #expect(AccountRules.password("short")?.message == "password needs at least 12 characters; a sentence is easy to remember.")
    }

    @Test func anAccountsAndAClasssProblemsAreOneShapeOnTheWire() {
        let account: AccountRules.Problem = AccountRules.password("short")!
        let schoolClass: ClassRules.Problem = FieldProblem(path: "children[1].name", code: "duplicate_name", params: ["other": "children[0].name"])
        #expect(account.jsonValue == .object([
            "path": .string("password"), "code": .string("password_too_short"), "params": .object(["min": .string("12")]), "message": .string(account.message),
        ]))
        #expect(schoolClass.message == "children[1].name looks the same as children[0].name.")
        #expect(FieldProblem(path: "x", code: "something_new").message == "x is not valid (something_new).")
    }

    @Test func theAPIsAccountShapeIsWrittenAndReadBackTheSameWithNeverAHash() throws {
        let district = Account(
            id: "acc_1", login: "dee", displayName: "Dee", role: .districtAdmin, schoolID: nil, version: 3,
            createdAt: ServerTime(milliseconds: 1_764_680_400_000), passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$secret")
        let shape = APIAccount(district)
        let written = String(decoding: try JSONEncoder().encode(shape), as: UTF8.self)
        #expect(written.contains("\"schoolID\":null") && !written.contains("setupLink") && !written.contains("argon2"))
        #expect(shape.hasPassword && shape.createdAt == "2025-12-02T13:00:00Z" && shape.role == "district_admin")
        #expect(try JSONDecoder().decode(APIAccount.self, from: Data(written.utf8)) == shape)
        let linked = APIAccount(Account(id: "acc_2", login: "ana", displayName: "Ana", role: .teacher, schoolID: "sch_1", createdAt: ServerTime(milliseconds: 0)), setupLink: "https://x/account-setup#code=c")
        #expect(try JSONDecoder().decode(APIAccount.self, from: JSONEncoder().encode(linked)) == linked)
        #expect(!linked.hasPassword)
    }
}

private extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
