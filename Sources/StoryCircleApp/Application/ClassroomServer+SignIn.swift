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

    /// The account the terminal's sign-in link signs the browser into, on a laptop (`storycircle start`).
    ///
    /// On a store with no account at all (a fresh data folder, or one from before accounts) one is made
    /// without asking anything: login `teacher`, display name "Teacher", **school administrator** of a
    /// school "This computer", with no password (it signs in through the link, or sets a password after
    /// `storycircle account reset`). A school administrator, not a district administrator: the ownership
    /// rules give a district administrator no children's data, and the laptop's teacher must see their
    /// own classes, rooms and reports.
    ///
    /// While that account is the only one, everything stored without an owner (before accounts, or made
    /// with the admin token since: the CLI, this command's own room) is adopted by it at each start, and
    /// sample stories it adopts are shared with its school, so that a second teacher added to "This
    /// computer" finds them too. Once an administrator has added other accounts, nothing is adopted on its
    /// own any more (`storycircle account adopt LOGIN` does it on purpose).
    ///
    /// Whoever reads the terminal holds the admin token already, which sees everything: the link gives them
    /// nothing more. Nil where the store keeps no accounts, where `teacher` is not such an account (an
    /// administrator's server), or where the store cannot answer now.
    @discardableResult
    public func prepareLaptopTeacher() async -> Account? {
        guard let book = storage.accounts else { return nil }
        do {
            let accounts = try await book.listAccounts(schoolID: nil)
            let chosen: Account
            if accounts.isEmpty {
                let existing = try await book.listSchools().first { $0.name == Self.laptopSchoolName }
                let school = if let existing { existing } else { try await book.createSchool(name: Self.laptopSchoolName) }
                chosen = try await book.createAccount(AccountDraft(login: Self.laptopTeacherLogin, displayName: "Teacher", role: .schoolAdmin, schoolID: school.id))
                logger.notice("The laptop's teacher account was made", ["login": chosen.login, "school": school.name])
            } else if let teacher = accounts.first(where: { $0.login == Self.laptopTeacherLogin }), !teacher.disabled, teacher.role != .districtAdmin,
                      teacher.schoolID != nil {
                chosen = teacher
            } else {
                return nil
            }
            if accounts.count <= 1 { await adoptForLaptop(chosen) }
            laptopTeacher.withLock { $0 = chosen.id }
            return chosen
        } catch {
            logger.warning("The laptop's teacher account cannot be read or made just now; the sign-in link carries the tokens only", ["reason": String(describing: error)])
            return nil
        }
    }

    /// What nobody owns becomes the laptop teacher's; the sample stories among it are shared with its school.
    /// A failure is logged: the next start tries again.
    private func adoptForLaptop(_ teacher: Account) async {
        guard let ownership = storage.ownership else { return }
        do {
            var samples: [String] = []
            if let library = storage.library {
                var cursor: StoryCursor?
                repeat {
                    let page = try await library.listStories(matching: nil, after: cursor, limit: 200, scope: .unowned)
                    samples += page.stories.filter { $0.updatedBy == "sample" }.map(\.id)
                    cursor = page.next
                } while cursor != nil
            }
            let adopted = try await ownership.adoptUnowned(by: Owner(teacher))
            for id in samples { _ = try await ownership.setStoryShared(id, true) }
            if adopted.classes + adopted.rooms + adopted.stories + adopted.pictures > 0 {
                logger.notice("The laptop's teacher adopted what had no owner", [
                    "classes": String(adopted.classes), "rooms": String(adopted.rooms), "stories": String(adopted.stories), "pictures": String(adopted.pictures),
                ])
            }
        } catch {
            logger.warning("What had no owner could not be given to the laptop's teacher just now", ["reason": StoreFailure.from(error, record: "owner").reason])
        }
    }

    /// The laptop teacher as an owner, for what this node makes on the terminal's behalf (the `start`
    /// command's room), once `prepareLaptopTeacher` found it.
    public func laptopOwner() async -> Owner? {
        guard let id = laptopTeacher.withLock({ $0 }), let account = try? await storage.accounts?.account(id: id) else { return nil }
        return Owner(account)
    }
}
