import Foundation
import Locking
import Testing
@testable import StoryCircleApp
@testable import StoryCircleServer

@Suite("The server's log")
struct LogTests {
    /// 2026-11-30T11:31:43.287Z.
    static let instant = timespec(tv_sec: 1_796_038_303, tv_nsec: 287_654_321)

    private final class Lines: Sendable {
        let lines = Locked<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    private static func log(_ format: StoryCircleLog.Format, level: StoryCircleLog.Level = .info, into lines: Lines) -> StoryCircleLog {
        StoryCircleLog(label: "storycircle", minimumLevel: level, format: format, sink: lines.append, now: { instant })
    }

    @Test func textLinesKeepTheirShapeWithMetadataSortedByKey() {
        let lines = Lines()
        let log = Self.log(.text, into: lines)
        log.warning("Room created", ["room.code": "123456", "error": "disk full"])
        log.info("Room finished")
        #expect(lines.all == [
            "2026-11-30T11:31:43.287Z warning storycircle: Room created error=disk full room.code=123456",
            "2026-11-30T11:31:43.287Z info storycircle: Room finished",
        ])
    }

    @Test func jsonLinesAreOneObjectEachWithTheMetadataApart() async throws {
        let lines = Lines()
        let log = Self.log(.json, into: lines)
        log.error("Could not store a new room", ["error": "quote \" backslash \\ newline \n bell \u{07} é", "room.code": "123456"])
        log.notice("Room finished")
        #expect(lines.all.count == 2)
        #expect(!lines.all[0].contains("\n"), "one line per event, whatever the metadata holds")
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines.all[0].utf8)) as? [String: Any])
        #expect(first["time"] as? String == "2026-11-30T11:31:43.287Z")
        #expect(first["level"] as? String == "error")
        #expect(first["label"] as? String == "storycircle")
        #expect(first["message"] as? String == "Could not store a new room")
        #expect(first["metadata"] as? [String: String] == ["error": "quote \" backslash \\ newline \n bell \u{07} é", "room.code": "123456"])
        #expect(lines.all[1] == #"{"time":"2026-11-30T11:31:43.287Z","level":"notice","label":"storycircle","message":"Room finished"}"#)
    }

    @Test func linesBelowTheMinimumLevelAreNotWritten() {
        let lines = Lines()
        let log = Self.log(.text, level: .warning, into: lines)
        log.debug("Room created")
        log.info("Room created")
        log.notice("Room created")
        log.warning("Room created")
        #expect(lines.all.count == 1)
    }

    /// The hand-made timestamp says what ISO8601DateFormatter said for the same instant.
    @Test func timestampsAreWhatTheFormatterGave() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (seconds, milliseconds) in [(0, 0), (951_782_400, 5), (1_796_038_303, 287), (4_102_444_799, 999)] {
            let time = timespec(tv_sec: seconds, tv_nsec: milliseconds * 1_000_000 + 999)
            let date = Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1_000)
            #expect(StoryCircleLog.timestamp(time) == formatter.string(from: date))
        }
    }

    @Test func theFormatComesFromTheFileOrTheEnvironmentAndIsChecked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("config.json")
        try Data(#"{"logFormat": "json", "logLevel": "warning"}"#.utf8).write(to: file)
        let configured = try ServerConfiguration.load(file: file.path, environment: [:])
        #expect(configured.log().format == .json)
        #expect(configured.log().minimumLevel == .warning)
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).log().format == .text)
        #expect(try ServerConfiguration.load(file: file.path, environment: ["STORYCIRCLE_LOG_FORMAT": "text"]).log().format == .text)
        #expect(performing: { _ = try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_LOG_FORMAT": "xml"]) }, throws: { error in
            String(describing: error) == "logFormat must be text or json"
        })
    }
}
