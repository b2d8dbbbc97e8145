import Foundation
import StoryCircleCore
import Zip

/// `roster import FOLDER|ZIP [--check]`: sends a OneRoster 1.2 CSV bundle (the folder or the ZIP file a
/// student information system, ClassLink or Clever exports) to `POST /api/roster/import`. Every bad row is printed with its
/// file, line and column, and then nothing is imported; a good roster is imported whole.
struct RosterImportCommand: ParsableCommand {
    static let check = CommandSpec.Option(long: "check", valueName: nil, help: "Only check the roster and say what importing it would do.")
    /// What the CLI reads of a folder: more is not a roster.
    static let maximumBytes = 16 * 1024 * 1024

    var folder: String
    var client: ClientOptions
    var checkOnly: Bool
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        folder = arguments.positional[0]
        client = ClientOptions(arguments)
        checkOnly = arguments.isSet(Self.check)
        json = arguments.isSet(OutputOptions.json)
    }

    func run() async throws -> Int32 {
        let files = folder.lowercased().hasSuffix(".zip") ? try Self.unzip(folder) : try Self.read(folder)
        let body = try JSONSerialization.data(withJSONObject: ["files": files, "check": checkOnly] as [String: Any])
        let response = try await client.api.exchange("POST", "/api/roster/import", token: try client.adminToken(), json: body)
        if json {
            Output.write(String(decoding: response.body, as: UTF8.self))
            return (200..<300).contains(response.status) ? ExitCode.success : ExitCode.failure
        }
        guard (200..<300).contains(response.status) else { try Self.refuse(response) }
        struct Answer: Decodable { var imported: Bool; var counts: RosterCounts }
        let answer = try JSONDecoder().decode(Answer.self, from: response.body)
        Output.line((answer.imported ? "Imported the roster: " : "The roster is fine; importing it would do this: ") + Self.summary(answer.counts) + ".")
        if answer.imported, answer.counts.teachersCreated > 0 {
            Output.line("New teachers have no password yet: 'storycircle account reset LOGIN' prints each a link to set one.")
        }
        return ExitCode.success
    }

    /// The bundle's CSV files by name, as text.
    static func read(_ folder: String) throws -> [String: String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw CommandFailure("\(folder) is not a folder (give the folder the roster was exported to).")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.lowercased().hasSuffix(".csv") }.sorted()
        guard names.contains("manifest.csv") else { throw CommandFailure("\(folder) has no manifest.csv: is it a OneRoster export?") }
        var files: [String: String] = [:]
        var total = 0
        for name in names {
            let path = (folder as NSString).appendingPathComponent(name)
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            total += size
            guard total <= maximumBytes else { throw CommandFailure("the roster is larger than \(maximumBytes / 1_048_576) MB.") }
            guard let text = String(validating: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) else {
                throw CommandFailure("\(name) is not UTF-8 text: export the roster as UTF-8 CSV.")
            }
            files[name] = text
        }
        return files
    }

    /// The bundle's CSV files in a ZIP export, by their names (an export may put them in one folder inside);
    /// anything else in it (a readme, macOS's `__MACOSX` copies) is left out.
    static func unzip(_ path: String) throws -> [String: String] {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard let size else { throw CommandFailure("\(path) is not a file (give the ZIP file the roster was exported as).") }
        guard size <= maximumBytes else { throw CommandFailure("the roster is larger than \(maximumBytes / 1_048_576) MB.") }
        let entries: [(name: String, bytes: [UInt8])]
        do {
            entries = try ZipArchive.entries(at: path, limits: ZipArchive.Limits(maximumTotalBytes: maximumBytes))
        } catch {
            throw CommandFailure("\(path) cannot be read: \(error).")
        }
        var files: [String: String] = [:]
        for entry in entries {
            let name = String(entry.name.split(separator: "/").last ?? "")
            guard name.lowercased().hasSuffix(".csv"), !name.hasPrefix("."), !entry.name.hasPrefix("__MACOSX/") else { continue }
            guard files[name] == nil else { throw CommandFailure("\(path) has two files called \(name): give one export at a time.") }
            guard let text = String(validating: entry.bytes, as: UTF8.self) else {
                throw CommandFailure("\(name) is not UTF-8 text: export the roster as UTF-8 CSV.")
            }
            files[name] = text
        }
        guard files["manifest.csv"] != nil else { throw CommandFailure("\(path) has no manifest.csv: is it a OneRoster export?") }
        return files
    }

    /// Every problem on its own line (`users.csv line 4, givenName: …`), then the refusal.
    static func refuse(_ response: APIClient.Response) throws -> Never {
        struct Refusal: Decodable {
            struct Problem: Decodable { var file: String; var line: Int; var field: String; var message: String }
            struct Body: Decodable { var problems: [Problem]? }
            var error: Body
        }
        for problem in (try? JSONDecoder().decode(Refusal.self, from: response.body))?.error.problems ?? [] {
            let place = problem.line > 0 ? "\(problem.file) line \(problem.line)" : problem.file
            let line = place.isEmpty ? problem.message : problem.field.isEmpty ? "\(place): \(problem.message)" : "\(place), \(problem.field): \(problem.message)"
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        throw CommandFailure(APIClient.refusal(response))
    }

    static func summary(_ counts: RosterCounts) -> String {
        let parts: [(Int, String)] = [
            (counts.schoolsCreated, "schools made"), (counts.schoolsRenamed, "schools renamed"), (counts.teachersCreated, "teachers made"),
            (counts.teachersUpdated, "teachers changed"), (counts.teachersDisabled, "teachers disabled"), (counts.classesCreated, "classes made"),
            (counts.classesUpdated, "classes changed"), (counts.classesLeft, "classes no longer in the roster (kept, with their results)"),
            (counts.childrenAdded, "children added"), (counts.childrenRemoved, "children taken out of their classes"),
        ]
        var said = parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        if said.isEmpty { said = ["nothing to change"] }
        // Not a change: what the roster has that a class here cannot (it has one owner).
        if counts.otherTeachersNotKept > 0 { said.append("\(counts.otherTeachersNotKept) other teachers of a class not kept (a class has one owner)") }
        return said.joined(separator: ", ")
    }
}
