import Foundation
import Sodium
import StoryCircleServer

/// The key rooms' tokens are authenticated with (`RoomTokens`): the configured file (`tokenKeyFile`) or text
/// (`tokenKey`), which every node of a cluster is given as it is given the admin token, or else
/// `<data>/token-key`, 32 random bytes made on first start. Either must be readable by its owner alone: whoever reads it can make a
/// teacher token for any room.
///
/// Changing the key ends every room token issued before (the admin token still reaches every room).
enum RoomTokenKey {
    static let minimumBytes = 32

    static func tokens(_ configuration: ServerConfiguration) throws -> RoomTokens {
        if let file = configuration.network.tokenKeyFile, !file.isEmpty {
            return RoomTokens(key: try read(file, configured: true))
        }
        if let text = configuration.network.tokenKey, !text.isEmpty {
            guard text.utf8.count >= minimumBytes else {
                throw ClassroomServer.StartError(description: "tokenKey (STORYCIRCLE_TOKEN_KEY) has \(text.utf8.count) characters; it needs at least \(minimumBytes)")
            }
            return RoomTokens(key: Array(text.utf8))
        }
        let file = configuration.files.dataDirectory + "/token-key"
        if FileManager.default.fileExists(atPath: file) {
            return RoomTokens(key: try read(file, configured: false))
        }
        let text = Sodium.randomBytes(minimumBytes).map { String(format: "%02x", $0) }.joined()
        guard FileManager.default.createFile(atPath: file, contents: Data((text + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ClassroomServer.StartError(description: "cannot write the room-token key to \(file)")
        }
        return RoomTokens(key: Array(text.utf8))
    }

    /// The key in `file`: its bytes without a final line break, at least `minimumBytes`, the file kept from
    /// everyone but its owner.
    static func read(_ file: String, configured: Bool) throws -> [UInt8] {
        let setting = configured ? "tokenKeyFile (STORYCIRCLE_TOKEN_KEY_FILE)" : "the room-token key"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file), let data = FileManager.default.contents(atPath: file) else {
            throw ClassroomServer.StartError(description: "cannot read \(setting) \(file)")
        }
        if let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
            throw ClassroomServer.StartError(description: "\(setting) \(file) may be read by others (mode \(String(mode, radix: 8))): run chmod 600 \(file)")
        }
        var key = Array(data)
        while let last = key.last, last == 0x0A || last == 0x0D { key.removeLast() }
        guard key.count >= minimumBytes else {
            throw ClassroomServer.StartError(description: "\(setting) \(file) holds \(key.count) bytes; it needs at least \(minimumBytes) (for example: head -c 32 /dev/urandom | base64 > \(file))")
        }
        return key
    }
}
