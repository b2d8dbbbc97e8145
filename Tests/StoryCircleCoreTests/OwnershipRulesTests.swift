import Testing
@testable import StoryCircleCore

/// Who may see and change an owned thing (`OwnershipRules`), and the lists' scopes agreeing with it.
@Suite("Ownership rules")
struct OwnershipRulesTests {
    static func account(_ id: String, _ role: AccountRole, _ school: String?, disabled: Bool = false) -> Principal {
        .account(Account(id: id, login: id, displayName: id, role: role, schoolID: school, disabled: disabled, createdAt: ServerTime(milliseconds: 1)))
    }

    static let teacherA = account("a", .teacher, "north")
    static let teacherB = account("b", .teacher, "north")
    static let teacherC = account("c", .teacher, "south")
    static let adminNorth = account("n", .schoolAdmin, "north")
    static let adminSouth = account("s", .schoolAdmin, "south")
    static let district = account("d", .districtAdmin, nil)
    static let disabledA = account("a", .teacher, "north", disabled: true)
    static let principals: [Principal] = [
        .adminToken, .roomToken(code: "123456", role: .teacher), .roomToken(code: "123456", role: .dashboard),
        teacherA, teacherB, teacherC, adminNorth, adminSouth, district, disabledA,
    ]
    static let ownedByA = Owner(accountID: "a", schoolID: "north")

    @Test func aTeacherChangesTheirOwnAndOnlyReadsWhatTheirSchoolShares() {
        #expect(OwnershipRules.allows(Self.teacherA, .change, owner: Self.ownedByA))
        #expect(!OwnershipRules.allows(Self.teacherB, .read, owner: Self.ownedByA))
        #expect(OwnershipRules.allows(Self.teacherB, .read, owner: Self.ownedByA, shared: true))
        #expect(!OwnershipRules.allows(Self.teacherB, .change, owner: Self.ownedByA, shared: true))
        #expect(!OwnershipRules.allows(Self.teacherC, .read, owner: Self.ownedByA, shared: true), "shared with the school, not the district")
        #expect(!OwnershipRules.allows(Self.disabledA, .read, owner: Self.ownedByA))
    }

    @Test func aTeacherMovedToAnotherSchoolLeavesWhatTheyMadeThere() {
        let movedA = Self.account("a", .teacher, "south")
        for shared in [false, true] {
            #expect(!OwnershipRules.allows(movedA, .read, owner: Self.ownedByA, shared: shared))
            #expect(OwnershipRules.scope(for: movedA)?.admits(Self.ownedByA, shared: shared) == false)
        }
        #expect(OwnershipRules.allows(Self.adminNorth, .change, owner: Self.ownedByA), "the school they left keeps it")
        #expect(OwnershipRules.allows(movedA, .change, owner: Owner(accountID: "a", schoolID: "south")))
    }

    @Test func administratorsSeeTheirSchoolAndTheDistrictSeesNoChildrensData() {
        #expect(OwnershipRules.allows(Self.adminNorth, .change, owner: Self.ownedByA))
        #expect(!OwnershipRules.allows(Self.adminSouth, .read, owner: Self.ownedByA))
        #expect(!OwnershipRules.allows(Self.district, .read, owner: Self.ownedByA))
        #expect(OwnershipRules.allows(.adminToken, .change, owner: Self.ownedByA))
        #expect(OwnershipRules.allows(.adminToken, .change, owner: nil))
        for principal in Self.principals where principal != .adminToken {
            #expect(!OwnershipRules.allows(principal, .read, owner: nil), "nothing unowned but for the admin token: \(principal)")
        }
        #expect(!OwnershipRules.allows(.roomToken(code: "123456", role: .teacher), .read, owner: Self.ownedByA))
    }

    @Test func aListsScopeAdmitsExactlyWhatItsPrincipalMayRead() {
        let owners: [Owner?] = [nil, Self.ownedByA, Owner(accountID: "b", schoolID: "north"), Owner(accountID: "c", schoolID: "south"), Owner(accountID: "d", schoolID: nil)]
        for principal in Self.principals {
            for owner in owners {
                for shared in [false, true] {
                    let listed = OwnershipRules.scope(for: principal)?.admits(owner, shared: shared) ?? false
                    #expect(listed == OwnershipRules.allows(principal, .read, owner: owner, shared: shared), "\(principal) \(String(describing: owner)) shared \(shared)")
                }
            }
        }
    }

    @Test func whatASignedInTeacherMakesIsTheirs() {
        #expect(OwnershipRules.owner(makingAs: Self.teacherA) == Self.ownedByA)
        #expect(OwnershipRules.owner(makingAs: .adminToken) == nil)
        #expect(OwnershipRules.owner(makingAs: nil) == nil)
        #expect(OwnershipRules.owner(makingAs: Self.district) == nil)
    }

    @Test func aScopesConditionNamesItsValuesInOrder() {
        let condition = OwnerScope.account("a", schoolID: "north").condition(alias: "s", sharedColumn: true, first: 3) { "$\($0)" }
        #expect(condition?.sql == "((s.owner_id = $3 OR s.shared) AND s.school_id = $4)")
        #expect(condition?.values == ["a", "north"])
        #expect(OwnerScope.account("a", schoolID: "north").condition(alias: "", sharedColumn: false) { _ in "?" }?.sql == "(owner_id = ? AND school_id = ?)")
        #expect(OwnerScope.everything.condition(alias: "", sharedColumn: true) { _ in "?" } == nil)
        #expect(OwnerScope.unowned.condition(alias: "c", sharedColumn: false) { _ in "?" }?.sql == "c.owner_id IS NULL")
    }
}
