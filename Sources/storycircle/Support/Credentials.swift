import Foundation

/// Where the CLI finds tokens: a flag, then an environment variable, then a file.
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

    static func teacherToken(_ parsed: ParsedArguments, code: String) throws(CommandFailure) -> String {
        if let token = parsed.value("token") { return token }
        if let token = ProcessInfo.processInfo.environment["STORYCIRCLE_TOKEN"], !token.isEmpty { return token }
        if let data = FileManager.default.contents(atPath: roomFile(code).path), let saved = try? JSONDecoder().decode(SavedRoom.self, from: data) {
            return saved.teacherToken
        }
        throw CommandFailure("no teacher token for room \(code): pass --token, set STORYCIRCLE_TOKEN, or create the room with 'storycircle room create' on this computer.")
    }

    static func adminToken(_ parsed: ParsedArguments) throws(CommandFailure) -> String {
        if let token = parsed.value("admin-token") { return token }
        if let token = ProcessInfo.processInfo.environment["STORYCIRCLE_ADMIN_TOKEN"], !token.isEmpty { return token }
        let file = (ProcessInfo.processInfo.environment["STORYCIRCLE_DATA_DIR"] ?? "data") + "/admin-token"
        if let data = FileManager.default.contents(atPath: file) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return token }
        }
        throw CommandFailure("no admin token: pass --admin-token, set STORYCIRCLE_ADMIN_TOKEN, or run this where the server keeps data/admin-token.")
    }

    static func server(_ parsed: ParsedArguments) -> String {
        parsed.value("server") ?? ProcessInfo.processInfo.environment["STORYCIRCLE_SERVER"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:8080"
    }
}
