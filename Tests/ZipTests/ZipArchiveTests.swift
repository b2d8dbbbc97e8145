import CZip
import Foundation
import Testing
import Zip

/// ZIP archives made with libzip itself, read back through `ZipArchive`: every file in order, folders left
/// out, and each bound refused before the entry is unpacked.
@Suite("ZIP archives")
struct ZipArchiveTests {
    /// A new archive at a temporary path with these entries (a name ending in `/` is a folder).
    static func archive(_ entries: [(String, [UInt8])], compressed: Bool = true) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("zip-\(UUID().uuidString).zip").path
        var error: Int32 = 0
        let archive = try #require(zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &error))
        for (name, bytes) in entries {
            if name.hasSuffix("/") {
                #expect(zip_dir_add(archive, name, zip_flags_t(ZIP_FL_ENC_UTF_8)) >= 0)
                continue
            }
            let copy = malloc(max(bytes.count, 1))!
            bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            let source = try #require(zip_source_buffer(archive, copy, zip_uint64_t(bytes.count), 1))
            let index = zip_file_add(archive, name, source, zip_flags_t(ZIP_FL_ENC_UTF_8))
            #expect(index >= 0)
            if !compressed { #expect(zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_STORE, 0) == 0) }
        }
        #expect(zip_close(archive) == 0)
        return path
    }

    @Test func everyFileIsReadInOrderAndFoldersAreLeftOut() throws {
        let path = try Self.archive([("export/", []), ("export/manifest.csv", Array("propertyName,value\r\n".utf8)), ("export/users.csv", Array("sourcedId\r\nZoë\r\n".utf8))])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let entries = try ZipArchive.entries(at: path)
        #expect(entries.map(\.name) == ["export/manifest.csv", "export/users.csv"])
        #expect(entries.last?.bytes == Array("sourcedId\r\nZoë\r\n".utf8))
    }

    @Test func anEntryThatInflatesLikeABombIsRefused() throws {
        let path = try Self.archive([("users.csv", [UInt8](repeating: 0x30, count: 4 * 1024 * 1024))])
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ZipArchive.Failure.inflatesTooMuch("users.csv")) { try ZipArchive.entries(at: path) }
        #expect(try ZipArchive.entries(at: path, limits: ZipArchive.Limits(maximumRatio: 100_000)).count == 1, "the bound, not the archive, refused it")
    }

    @Test func tooManyEntriesOrTooManyBytesAreRefused() throws {
        let many = try Self.archive((0..<5).map { ("f\($0).csv", Array("x".utf8)) })
        defer { try? FileManager.default.removeItem(atPath: many) }
        #expect(throws: ZipArchive.Failure.tooManyEntries(5)) { try ZipArchive.entries(at: many, limits: ZipArchive.Limits(maximumEntries: 4)) }
        let large = try Self.archive([("a.csv", [UInt8](repeating: 1, count: 3_000)), ("b.csv", [UInt8](repeating: 2, count: 3_000))], compressed: false)
        defer { try? FileManager.default.removeItem(atPath: large) }
        #expect(throws: ZipArchive.Failure.tooLarge) { try ZipArchive.entries(at: large, limits: ZipArchive.Limits(maximumTotalBytes: 5_000)) }
        #expect(try ZipArchive.entries(at: large, limits: ZipArchive.Limits(maximumTotalBytes: 6_000)).count == 2)
    }

    @Test func somethingThatIsNotAZipIsRefusedInLibzipsWords() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-\(UUID().uuidString).zip").path
        try Data("sourcedId,name\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ZipArchive.Failure.unreadable("Not a zip archive")) { try ZipArchive.entries(at: path) }
    }
}
