import Foundation
import StoryCircleCore

extension ClassroomServer {
    /// The story library, when the store keeps one (SQLite and PostgreSQL do; memory does not).
    public var library: (any StoryLibrary)? { store as? any StoryLibrary }

    /// The library page's link, with the admin token in the fragment (never sent to a server or a log),
    /// as the dashboard and teacher links carry theirs; nil without a library.
    public func libraryURL() throws -> String? {
        guard let page = libraryPageURL else { return nil }
        let token = try Self.adminToken(configuration).token
        return "\(page)#token=\(token)"
    }

    /// The library page's link without the token, for output that may be kept (a service's log); nil
    /// without a library.
    public var libraryPageURL: String? {
        library == nil ? nil : "\(publicURL)/stories"
    }
}
