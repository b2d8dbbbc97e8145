import Foundation
import StoryCircleCore
import StoryCircleServer

extension ClassroomServer {
    /// A one-time sign-in link (`/sign-in#code=…`) for the teacher at this computer: the sign-in page trades
    /// it for the room's teacher and dashboard tokens and the school's key, keeps them in the tab's session
    /// and opens the room's teacher page (the library without a room). It works once, for
    /// `signInLifetimeMinutes`, on this node only: the code is kept in this process's memory.
    public func signInLink(room: CreatedRoomResponse?) throws -> String {
        let admin = try Self.adminToken(configuration).token
        let grant = SignInGrant(room: room?.code, teacherToken: room?.teacherToken, dashboardToken: room?.dashboardToken, adminToken: admin)
        return "\(publicURL)/sign-in#code=\(signIns.issue(grant))"
    }

    public static var signInLifetimeMinutes: Int { SignInCodes.Limits().lifetimeMilliseconds / 60_000 }
}
