import Foundation

/// Where the CLI keeps the tokens of the rooms it created (`ClientOptions` reads them back).
enum Credentials {
    /// `$STORYCIRCLE_HOME`, or `~/.storycircle`.
    static var home: URL {
        if let home = ProcessInfo.processInfo.environment["STORYCIRCLE_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".storycircle")
    }

    struct SavedRoom: Codable {
        var code: String
        var server: String
        var teacherToken: String
        var dashboardToken: String
    }

    static func roomFile(_ code: String) -> URL {
        home.appendingPathComponent("rooms").appendingPathComponent("\(code).json")
    }

    /// Saves a new room's tokens where only this user can read them.
    static func save(_ room: SavedRoom) throws -> URL {
        let file = roomFile(room.code)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let data = try JSONEncoder().encode(room)
        guard FileManager.default.createFile(atPath: file.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CommandFailure("cannot write \(file.path)")
        }
        return file
    }

    /// The tokens `room create` saved for room `code` on this computer, if any.
    static func savedRoom(_ code: String) -> SavedRoom? {
        guard let data = FileManager.default.contents(atPath: roomFile(code).path) else { return nil }
        return try? JSONDecoder().decode(SavedRoom.self, from: data)
    }
}
