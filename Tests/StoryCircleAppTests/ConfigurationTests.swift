import Foundation
import Testing

@testable import StoryCircleApp

/// Settings a container can only give through its environment, as docker-compose.yml and
/// scripts/cluster.sh give them to every node.
@Suite("Configuration")
struct ConfigurationTests {
    /// Behind nginx, whose read timeout cuts an upgraded socket silent for 6 s, the nodes ping sooner.
    @Test func theKeepalivePingComesFromTheEnvironmentAndIsChecked() throws {
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).pingAfterIdleSeconds == 20)
        #expect(try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_PING_AFTER_IDLE_SECONDS": "3"]).pingAfterIdleSeconds == 3)
        #expect(performing: { _ = try ServerConfiguration.load(file: nil, environment: ["STORYCIRCLE_PING_AFTER_IDLE_SECONDS": "0"]) }, throws: { error in
            String(describing: error).hasPrefix("keepalive: pingAfterIdleSeconds must be 1 to 3600")
        })
    }

    /// The benchmarks' "coalescing off" row: a file key, on unless the file says false, handed to the
    /// transport.
    @Test func coalescingWritesIsOnUnlessTheFileTurnsItOff() throws {
        #expect(try ServerConfiguration.load(file: nil, environment: [:]).coalesceWrites)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("coalesce-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"coalesceWrites": false}"#.utf8)))
        let configuration = try ServerConfiguration.load(file: file, environment: [:])
        #expect(!configuration.coalesceWrites)
        #expect(!ClassroomServer.transportConfiguration(configuration).coalesceWrites)
    }

    @Test func piperThreadsIsTwoWhereThereAreTwoCoresUnlessTheFileSaysAndIsChecked() throws {
        #expect(ServerConfiguration.automaticPiperThreads(cores: 1) == 1)
        #expect(ServerConfiguration.automaticPiperThreads(cores: 2) == 2)
        #expect(ServerConfiguration.automaticPiperThreads(cores: 64) == 2)
        let unset = try ServerConfiguration.load(file: nil, environment: [:])
        #expect(unset.piperThreads == nil)
        #expect(unset.resolvedPiperThreads == ServerConfiguration.automaticPiperThreads(cores: CPUBudget.cores()))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("piper-threads-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        for threads in [1, 2] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"piperThreads": \#(threads)}"#.utf8)))
            #expect(try ServerConfiguration.load(file: file, environment: [:]).resolvedPiperThreads == threads)
        }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"piperThreads": null}"#.utf8)))
        #expect(try ServerConfiguration.load(file: file, environment: [:]).piperThreads == nil)
        for wrong in ["0", "9", "-1"] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"piperThreads": \#(wrong)}"#.utf8)))
            #expect(throws: ServerConfiguration.Problem.self) { try ServerConfiguration.load(file: file, environment: [:]) }
        }
    }
}
