import Foundation
import StoryCircleCore

extension ClassroomServer {
    /// The story library, when the store keeps one (SQLite and PostgreSQL do; memory does not).
    public var library: (any StoryLibrary)? { storage.library }

    /// The classes, when the store keeps them (SQLite and PostgreSQL do; memory does not).
    public var classes: (any ClassBook)? { storage.classes }

    /// The class with this id, or else the one with this name (ignoring case and spacing); nil if none.
    public func findClass(_ nameOrID: String) async throws -> SchoolClass? {
        guard let classes else { return nil }
        if ClassIDs.isWellFormed(nameOrID), let found = try await classes.schoolClass(nameOrID) { return found }
        let wanted = nameOrID.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        guard let entry = try await classes.listClasses().first(where: { $0.name.lowercased() == wanted }) else { return nil }
        return try await classes.schoolClass(entry.id)
    }

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
