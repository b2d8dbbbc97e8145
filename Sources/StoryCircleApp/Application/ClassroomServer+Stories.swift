import Foundation
import StoryCircleCore

extension ClassroomServer {
    /// The story library, when the store keeps one (SQLite and PostgreSQL do; memory does not).
    public var library: (any StoryLibrary)? { store as? any StoryLibrary }

    /// The library page's link, with the admin token in the fragment (never sent to a server or a log),
    /// as the dashboard and teacher links carry theirs; nil without a library.
    public func libraryURL() throws -> String? {
        guard library != nil else { return nil }
        let token = try Self.adminToken(configuration).token
        return "\(publicURL)/stories#token=\(token)"
    }
}
