/// The rostering links in the room store (SQLite and PostgreSQL implement it: `SQLiteRoomStore+Roster`,
/// `PostgresRoomStore+Roster`): what an import is planned against, and the one transaction that carries a
/// plan out.
public protocol RosterBook: AnyObject, Sendable {
    /// The links, every school and account, and the classes the links name.
    func rosterState() async throws -> RosterState
    /// Carries `plan` out in one transaction: schools made and renamed, accounts made and changed, classes
    /// made and replaced (each still at the plan's version), links written and removed. On any error
    /// nothing of it is stored. Throws `RosterBookError.changed` when something the plan was based on
    /// changed meanwhile (plan again), `.classNameTaken` when a class's name meets one its teacher made by
    /// hand, `.loginTaken`.
    func applyRoster(_ plan: RosterPlan) async throws
}

public enum RosterBookError: Error, Sendable, Equatable {
    /// An account or class changed between the plan and its transaction.
    case changed(id: String)
    case classNameTaken(name: String)
    case loginTaken(login: String)
    case schoolNameTaken(name: String)
}

extension RosterBookError {
    /// A refusal of the account or class rules met while a plan is carried out, in the roster's words;
    /// anything else as it is.
    public static func from(_ error: any Error) -> any Error {
        switch error {
        case AccountBookError.loginTaken(let login): RosterBookError.loginTaken(login: login)
        case AccountBookError.nameTaken(let name): RosterBookError.schoolNameTaken(name: name)
        case AccountBookError.conflict(let current): RosterBookError.changed(id: current.id)
        case AccountBookError.notFound(let id), AccountBookError.schoolNotFound(let id): RosterBookError.changed(id: id)
        case ClassBookError.conflict(let current): RosterBookError.changed(id: current.id)
        case ClassBookError.notFound(let id), ClassBookError.memberNotFound(let id): RosterBookError.changed(id: id)
        case ClassBookError.nameTaken(let name): RosterBookError.classNameTaken(name: name)
        default: error
        }
    }
}
