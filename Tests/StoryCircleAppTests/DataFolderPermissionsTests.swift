import Foundation
import Testing
@testable import StoryCircleApp
import StoryCircleServer
import StoryCircleServerTesting
import StoryCircleTesting

/// The data folder is the server user's alone: created private, refused when others may write it, made
/// private when they may only read it. Real files in a temporary folder.
@Suite("Data folder permissions")
struct DataFolderPermissionsTests {
    struct Folder {
        let root: URL
        var data: String { root.appendingPathComponent("data").path }
        var configuration: ServerConfiguration {
            var configuration = ServerConfiguration()
            configuration.network.port = 0
            configuration.network.bindAddress = "127.0.0.1"
            configuration.files.webRoot = root.appendingPathComponent("web").path
            configuration.files.dataDirectory = data
            configuration.files.audioCacheDirectory = data + "/audio-cache"
            configuration.storage.database = data + "/storycircle.sqlite"
            return configuration
        }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-modes-\(UUID().uuidString)")
            let web = root.appendingPathComponent("web")
            try FileManager.default.createDirectory(at: web, withIntermediateDirectories: true)
            try "<!doctype html>".write(to: web.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        }

        func start() async throws -> ClassroomServer {
            try await ClassroomServer.start(configuration: configuration, clock: ManualClock(), narrator: ScriptedNarrator(), logger: StoryCircleLog(label: "test", minimumLevel: .error))
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        #expect(lstat(path, &info) == 0, "\(path)")
        return info.st_mode & 0o7777
    }

    /// Every folder and file under `path`, with it.
    static func everything(under path: String) -> [String] {
        [path] + (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String }.map { path + "/" + $0 } ?? [])
    }

    @Test func aNewDataFolderAndEverythingTheServerWritesInItAreTheUsersAlone() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let server = try await folder.start()
        _ = try await server.registry.directory.createRoom(story: ServerFixtures.story)
        let paths = Self.everything(under: folder.data)
        #expect(Set(paths.map { ($0 as NSString).lastPathComponent }).isSuperset(of: ["storycircle.sqlite", "storycircle.sqlite-wal", "admin-token", "lock"]))
        for path in paths {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            #expect(Self.mode(path) == (isFolder.boolValue ? 0o700 : 0o600), "\(path): \(String(Self.mode(path), radix: 8))")
        }
        await server.stop()
    }

    @Test func aDataFolderOthersMayWriteIsRefusedWithTheCommandThatFixesIt() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        #expect(chmod(folder.data, 0o777) == 0)
        await #expect(performing: { _ = try await folder.start() }, throws: { error in
            let text = String(describing: error)
            return text.hasPrefix("the data folder \(folder.data) can be changed by other users of this computer (mode 777)") && text.hasSuffix("run: chmod 700 \(folder.data)")
        })
        // Nothing was written in it.
        #expect(Self.everything(under: folder.data) == [folder.data])
    }

    @Test func aFileInItOthersMayWriteIsRefusedByName() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        #expect(chmod(folder.data, 0o700) == 0)
        let token = folder.data + "/admin-token"
        try "secret\n".write(toFile: token, atomically: false, encoding: .utf8)
        #expect(chmod(token, 0o620) == 0)
        await #expect(performing: { _ = try await folder.start() }, throws: { error in
            String(describing: error).hasPrefix("\(token) in the data folder can be changed by other users of this computer (mode 620)")
                && String(describing: error).hasSuffix("run: chmod 600 \(token)")
        })
    }

    @Test func whatOthersMayOnlyReadIsMadePrivateAndTheServerStarts() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let cache = folder.data + "/audio-cache/ab"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        try "clip".write(toFile: cache + "/clip.mp3", atomically: false, encoding: .utf8)
        try "secret\n".write(toFile: folder.data + "/admin-token", atomically: false, encoding: .utf8)
        for (path, mode) in [(folder.data, 0o755), (folder.data + "/audio-cache", 0o750), (cache, 0o755), (cache + "/clip.mp3", 0o644), (folder.data + "/admin-token", 0o640)] {
            #expect(chmod(path, mode_t(mode)) == 0)
        }
        let report = DataFolderPermissions.check([folder.data])
        #expect(report.writable.isEmpty)
        #expect(report.tightened.count == 5)
        #expect(DataFolderPermissions.check([folder.data]).tightened.isEmpty, "made private once, nothing is left to do")
        let server = try await folder.start()
        #expect(Self.mode(folder.data) == 0o700 && Self.mode(cache) == 0o700 && Self.mode(cache + "/clip.mp3") == 0o600)
        await server.stop()
    }

    @Test func linksAreNotFollowedNorChanged() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let outside = folder.root.appendingPathComponent("outside").path
        try "shared".write(toFile: outside, atomically: false, encoding: .utf8)
        #expect(chmod(outside, 0o644) == 0)
        try FileManager.default.createDirectory(atPath: folder.data, withIntermediateDirectories: true)
        #expect(chmod(folder.data, 0o700) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder.data + "/link", withDestinationPath: outside)
        #expect(DataFolderPermissions.check([folder.data]).tightened.isEmpty)
        #expect(Self.mode(outside) == 0o644)
    }
}
