import StoryCircleCore

/// Which accounts an administrator manages: every one (the admin token, a district administrator), or the
/// teachers of one school (a school administrator: they see their school's accounts and change its teachers,
/// never another school's, never a role above teacher, never a move to another school).
enum AccountReach: Equatable {
    case everything
    case school(String)

    init(_ principal: Principal?) {
        if case .account(let account)? = principal, account.role == .schoolAdmin {
            self = .school(account.schoolID ?? "")
        } else {
            self = .everything
        }
    }

    func sees(_ account: Account) -> Bool {
        switch self {
        case .everything: true
        case .school(let id): !id.isEmpty && account.schoolID == id
        }
    }

    func changes(_ account: Account) -> Bool {
        switch self {
        case .everything: true
        case .school: sees(account) && account.role == .teacher
        }
    }
}
