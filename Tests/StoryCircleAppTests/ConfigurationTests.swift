import Foundation
import Testing

@testable import StoryCircleApp

/// Settings a container can only give through its environment, as docker-compose.yml and
/// scripts/cluster.sh give them to every node.
@Suite("Configuration")
struct ConfigurationTests {
    /// Behind nginx, whose read timeout cuts an upgraded socket silent for 6 s, the nodes ping sooner.
    @Test func theKeepalivePingComesFromTheEnvironmentAndIsChecked() throws {
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).connections.pingAfterIdleSeconds == 20)
        #expect(try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_PING_AFTER_IDLE_SECONDS": "3"]).connections.pingAfterIdleSeconds == 3)
        #expect(performing: { _ = try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_PING_AFTER_IDLE_SECONDS": "0"]) }, throws: { error in
            String(describing: error).hasPrefix("keepalive: pingAfterIdleSeconds must be 1 to 3600")
        })
    }

    /// The benchmarks' "coalescing off" row: a file key, on unless the file says false, handed to the
    /// transport.
    @Test func coalescingWritesIsOnUnlessTheFileTurnsItOff() throws {
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).connections.coalesceWrites)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("coalesce-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"coalesceWrites": false}"#.utf8)))
        let configuration = try ServerConfiguration.load(file: file, environment: [:])
        #expect(!configuration.connections.coalesceWrites)
        #expect(!ClassroomServer.transportConfiguration(configuration).coalesceWrites)
    }

    @Test func piperThreadsIsTwoWhereThereAreTwoCoresUnlessTheFileSaysAndIsChecked() throws {
        #expect(ServerConfiguration.automaticPiperThreads(cores: 1) == 1)
        #expect(ServerConfiguration.automaticPiperThreads(cores: 2) == 2)
        #expect(ServerConfiguration.automaticPiperThreads(cores: 64) == 2)
        let unset = try ServerConfiguration.load(file: nil, environment: [:])
        #expect(unset.voices.piperThreads == nil)
        #expect(unset.voices.resolvedPiperThreads == ServerConfiguration.automaticPiperThreads(cores: CPUBudget.cores()))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("piper-threads-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        for threads in [1, 2] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"piperThreads": \#(threads)}"#.utf8)))
            #expect(try ServerConfiguration.load(file: file, environment: [:]).voices.resolvedPiperThreads == threads)
        }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"piperThreads": null}"#.utf8)))
        #expect(try ServerConfiguration.load(file: file, environment: [:]).voices.piperThreads == nil)
        for wrong in ["0", "9", "-1"] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"piperThreads": \#(wrong)}"#.utf8)))
            #expect(throws: ServerConfiguration.Problem.self) { try ServerConfiguration.load(file: file, environment: [:]) }
        }
    }

    private func load(_ json: String, environment: [String: String] = [:]) throws -> ServerConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(json.utf8)))
        return try ServerConfiguration.load(file: file, environment: environment)
    }

    private func problem(_ json: String, environment: [String: String] = [:]) -> String? {
        do {
            _ = try load(json, environment: environment)
            return nil
        } catch {
            return String(describing: error)
        }
    }

    /// Each key is declared once; the table has every one, each variable once.
    @Test func everySettingIsDeclaredOnceWithItsVariable() {
        let keys = ServerConfiguration.settings.map(\.key)
        #expect(keys.count == 59 && Set(keys).count == keys.count)
        let variables = ServerConfiguration.settings.compactMap(\.environment)
        #expect(Set(variables).count == variables.count && variables.allSatisfy { $0.hasPrefix("STORYCIRCLE_") })
    }

    @Test func theShippedFileLoadsAsTheDefaults() throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/storycircle.json").path
        #expect(try ServerConfiguration.load(file: shipped, environment: [:]) == ServerConfiguration())
    }

    @Test func anUnknownKeyIsRefusedWithItsPath() {
        #expect(problem(#"{"prot": 8080}"#)?.contains(#"unknown setting "prot""#) == true)
        #expect(problem(#"{"roomDefaults": {"timerr": false}}"#)?.contains(#"unknown setting "roomDefaults.timerr""#) == true)
        #expect(problem(#"{"port": "8080"}"#)?.contains(#""port" has the wrong type (a whole number)"#) == true)
        #expect(problem(#"{"roomDefaults": {"questionSeconds": 1}}"#) != nil, "the rooms' own rules")
    }

    /// One boolean parser: the file's true and false, and the same words for both variables that take one.
    @Test func aBooleanMeansTheSameWhereverItIsSet() throws {
        #expect(try load(#"{"trustForwardedFor": true, "naturalVoice": false}"#).network.trustForwardedFor)
        for (text, value) in [("1", true), ("yes", true), ("ON", true), ("0", false), ("no", false), ("off", false)] {
            let environment = ["STORYCIRCLE_TRUST_FORWARDED_FOR": text, "STORYCIRCLE_NATURAL_VOICE": text]
            let configuration = try ServerConfiguration.load(file: nil, environment: environment)
            #expect(configuration.network.trustForwardedFor == value && configuration.voices.naturalVoice == value, "\(text)")
        }
        #expect(problem("{}", environment: ["STORYCIRCLE_NATURAL_VOICE": "maybe"])?.hasPrefix("STORYCIRCLE_NATURAL_VOICE=maybe is not true or false") == true)
        #expect(try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_ALLOWED_ORIGINS": "http://a.example, http://b.example"]).network.allowedOrigins == ["http://a.example", "http://b.example"])
    }
}
