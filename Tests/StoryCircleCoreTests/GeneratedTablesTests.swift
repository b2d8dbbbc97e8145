import Foundation
import Testing
@testable import StoryCircleCore

/// The pages' tables of the wire's names (error codes, close codes, message types) are made from the Swift
/// definitions, never written by hand, and so are the payloads' fast writers (`PayloadWriters`): each test
/// makes its file's text again in memory and compares it with the one checked in. `STORYCIRCLE_WRITE_GENERATED=1 swift test --filter GeneratedTables` rewrites them.
@Suite("Generated tables")
struct GeneratedTablesTests {
    static let command = "STORYCIRCLE_WRITE_GENERATED=1 swift test --filter GeneratedTables"

    @Test func errorCodesJS() throws {
        try check("web-static/js/error-codes.js", block: GeneratedTables.errorCodes)
    }

    @Test func closeCodesJS() throws {
        try check("web-static/js/close-codes.js", block: GeneratedTables.closeCodes)
    }

    @Test func messageTypesJS() throws {
        try check("web-static/js/message-types.js", whole: GeneratedTables.messageTypes)
    }

    @Test func payloadWritersSwift() throws {
        try check(PayloadWriters.path, whole: PayloadWriters.text(root: Fixtures.repositoryRoot))
    }

    @Test func theTablesNameEveryCaseOnce() {
        let errors = GeneratedTables.errorCodes
        for code in ErrorCode.allCases { #expect(errors.contains(": \"\(code.rawValue)\",\n"), "\(code)") }
        #expect(GeneratedTables.closeCodes.contains("  GOING_AWAY: 1001,\n"))
        #expect(GeneratedTables.messageTypes.contains("  NARRATION_PLAN: \"narration.plan\",\n"))
        #expect(GeneratedTables.messageTypes.contains("  NOT_ME: \"notMe\",\n"))
        #expect(GeneratedTables.constantName("invalidJSON") == "INVALID_JSON")
        #expect(GeneratedTables.constantName("tryAgainLater") == "TRY_AGAIN_LATER")
    }

    /// docs/protocol.md lists every code once, and where it gives an HTTP status, it is the code's.
    @Test func theProtocolDocumentListsEveryCodeWithItsStatus() throws {
        let document = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let section = try #require(document.split(separator: "\n## ").first { $0.hasPrefix("Error codes\n") })
        var listed: [String: String] = [:]
        for line in section.split(separator: "\n") {
            guard let row = line.wholeMatch(of: /\| `([a-z_]+)` \|\s*(\d{3})?\s*\|.*/) else { continue }
            #expect(listed[String(row.1)] == nil, "\(row.1) is listed twice")
            listed[String(row.1)] = row.2.map(String.init) ?? ""
        }
        for code in ErrorCode.allCases {
            guard let status = listed[code.rawValue] else {
                Issue.record("docs/protocol.md, \"Error codes\", does not list \(code.rawValue)")
                continue
            }
            if !status.isEmpty { #expect(status == String(code.httpStatus), "\(code.rawValue): the document says \(status), the server answers \(code.httpStatus)") }
        }
        let unknown = Set(listed.keys).subtracting(ErrorCode.allCases.map(\.rawValue))
        #expect(unknown.isEmpty, "docs/protocol.md lists codes the server does not have: \(unknown.sorted())")
    }

    /// A file that is all generated.
    private func check(_ path: String, whole expected: String) throws {
        let url = Fixtures.repositoryRoot.appendingPathComponent(path)
        let current = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        try compare(path, url, current: current, expected: expected)
    }

    /// A file with a generated block between the markers, and the hand-written rest around it.
    private func check(_ path: String, block: String) throws {
        let url = Fixtures.repositoryRoot.appendingPathComponent(path)
        let current = try String(contentsOf: url, encoding: .utf8)
        guard let start = current.range(of: GeneratedTables.begin), let end = current.range(of: GeneratedTables.end, range: start.upperBound..<current.endIndex),
              let lineEnd = current[end.upperBound...].firstIndex(of: "\n") else {
            Issue.record("\(path) has no generated block (a line starting \"\(GeneratedTables.begin)\", then one \"\(GeneratedTables.end)\")")
            return
        }
        let expected = String(current[..<start.lowerBound]) + block + String(current[current.index(after: lineEnd)...])
        try compare(path, url, current: current, expected: expected)
    }

    private func compare(_ path: String, _ url: URL, current: String, expected: String) throws {
        guard current != expected else { return }
        if ProcessInfo.processInfo.environment["STORYCIRCLE_WRITE_GENERATED"] == "1" {
            try expected.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        Issue.record("\(path) is not what the Swift definitions make: \(Self.firstDifference(current, expected)). Run `\(Self.command)` and commit the file.")
    }

    static func firstDifference(_ current: String, _ expected: String) -> String {
        let have = current.split(separator: "\n", omittingEmptySubsequences: false)
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
        for line in 0..<max(have.count, want.count) {
            let a = line < have.count ? "\"\(have[line])\"" : "(end of file)"
            let b = line < want.count ? "\"\(want[line])\"" : "(end of file)"
            if a != b { return "line \(line + 1) is \(a), should be \(b)" }
        }
        return "they differ"
    }
}

/// The text of each generated table.
enum GeneratedTables {
    static let begin = "// <generated"
    static let end = "// </generated>"

    static func header(from source: String) -> String {
        "\(begin) from \(source) by GeneratedTablesTests: edit the Swift, then `\(GeneratedTablesTests.command)`>\n"
    }

    static var errorCodes: String {
        header(from: "Sources/StoryCircleCore/Protocol/ErrorCode.swift")
            + table("ERROR", ErrorCode.allCases.map { ($0.rawValue.uppercased(), "\"\($0.rawValue)\"") })
            + end + "\n"
    }

    static var closeCodes: String {
        header(from: "Sources/StoryCircleCore/Protocol/CloseCode.swift")
            + table("CLOSE", CloseCode.allCases.map { (constantName("\($0)"), "\($0.rawValue)") })
            + end + "\n"
    }

    static var messageTypes: String {
        "// The `type` of every WebSocket message (docs/protocol.md), named once for every page.\n"
            + header(from: "Sources/StoryCircleCore/Protocol/ServerMessage.swift and ClientMessage.swift")
            + "\n/** What the server sends. */\n"
            + table("SERVER", ServerMessageType.allCases.map { (constantName("\($0)"), "\"\($0.rawValue)\"") })
            + "\n/** What a page sends. */\n"
            + table("CLIENT", ClientMessageType.allCases.map { (constantName("\($0)"), "\"\($0.rawValue)\"") })
            + end + "\n"
    }

    static func table(_ name: String, _ entries: [(String, String)]) -> String {
        "export const \(name) = Object.freeze({\n" + entries.map { "  \($0.0): \($0.1),\n" }.joined() + "});\n"
    }

    /// `tryAgainLater` as `TRY_AGAIN_LATER`; a run of capitals is one word (`invalidJSON`, `INVALID_JSON`).
    static func constantName(_ swiftName: String) -> String {
        var name = ""
        var previous: Character?
        for character in swiftName {
            if character.isUppercase, let previous, !previous.isUppercase { name += "_" }
            name.append(character)
            previous = character
        }
        return name.uppercased()
    }
}
