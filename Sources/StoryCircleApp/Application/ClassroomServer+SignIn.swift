import Foundation
import StoryCircleCore
import StoryCircleServer

extension ClassroomServer {
    /// A one-time sign-in link (`/sign-in#code=…`) for the teacher at this computer: the sign-in page trades
    /// it for the room's teacher and dashboard tokens and the school's key, keeps them in the tab's session
    /// and opens the room's teacher page (the library without a room). Where the store keeps accounts, the
    /// same link also signs the browser into the laptop's teacher's account (`prepareLaptopTeacher`) with a
    /// session cookie. It works once, for `signInLifetimeMinutes`, on this node only: the code is kept in this
    /// process's memory.
    public func signInLink(room: CreatedRoomResponse?) throws -> String {
        let admin = try Self.adminToken(configuration).token
        let grant = SignInGrant(
            room: room?.code, teacherToken: room?.teacherToken, dashboardToken: room?.dashboardToken, adminToken: admin, accountID: laptopTeacher.withLock { $0 }
        )
        return "\(publicURL)/sign-in#code=\(signIns.issue(grant))"
    }

    public static var signInLifetimeMinutes: Int { SignInCodes.Limits().lifetimeMilliseconds / 60_000 }

    /// The school and login the laptop's first start makes.
    public static let laptopSchoolName = "This computer"
    public static let laptopTeacherLogin = "teacher"

    /// The account the terminal's sign-in link signs the browser into: the store's first enabled district
    /// administrator; on a store with no account at all (a fresh data folder), one is made without asking
    /// anything: login `teacher`, display name "Teacher", district administrator of a school "This computer",
    /// with no password (it signs in through the link, or sets a password after `storycircle account reset`).
    /// Whoever reads the terminal holds the admin token already, which is a district administrator's
    /// authority: the link gives them nothing more. Nil where the store keeps no accounts, or cannot now.
    @discardableResult
    public func prepareLaptopTeacher() async -> Account? {
        guard let book = storage.accounts else { return nil }
        do {
            let accounts = try await book.listAccounts(schoolID: nil)
            let chosen: Account
            if let first = accounts.filter({ $0.role == .districtAdmin && !$0.disabled }).min(by: { $0.createdAt < $1.createdAt }) {
                chosen = first
            } else if accounts.isEmpty {
                let existing = try await book.listSchools().first { $0.name == Self.laptopSchoolName }
                let school = if let existing { existing } else { try await book.createSchool(name: Self.laptopSchoolName) }
                chosen = try await book.createAccount(AccountDraft(login: Self.laptopTeacherLogin, displayName: "Teacher", role: .districtAdmin, schoolID: school.id))
                logger.notice("The laptop's teacher account was made", ["login": chosen.login, "school": school.name])
            } else {
                return nil
            }
            laptopTeacher.withLock { $0 = chosen.id }
            return chosen
        } catch {
            logger.warning("The laptop's teacher account cannot be read or made just now; the sign-in link carries the tokens only", ["reason": String(describing: error)])
            return nil
        }
    }
}
