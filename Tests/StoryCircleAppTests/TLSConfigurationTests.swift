import Foundation
import Testing
import WebSocketTransport

@testable import StoryCircleApp

/// The `tls` settings: an object in the file, three variables, three flags (the CLI's tests); both files or
/// neither, and the data folder's pair when none is configured. No certificate is read here
/// (`CertificatePairTests` reads them; Tests/Integration/test_tls.py serves them).
@Suite("TLS configuration")
struct TLSConfigurationTests {
    private func load(_ json: String?, environment: [String: String] = [:]) throws -> ServerConfiguration {
        guard let json else { return try ServerConfiguration.load(file: nil, environment: environment) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(json.utf8)))
        return try ServerConfiguration.load(file: file, environment: environment)
    }

    private func problem(_ json: String?, environment: [String: String] = [:]) -> String? {
        do {
            _ = try load(json, environment: environment)
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test func theFileGivesAnObjectAndTheEnvironmentOverridesIt() throws {
        let file = try load(#"{"tls": {"certificate": "a.crt", "key": "a.key", "redirectPort": 8081}}"#)
        #expect(file.tls == ServerConfiguration.TLS(certificate: "a.crt", key: "a.key", redirectPort: 8081))
        let both = try load(#"{"tls": {"certificate": "a.crt", "key": "a.key"}}"#, environment: [
            "STORYCIRCLE_TLS_CERTIFICATE": "b.crt", "STORYCIRCLE_TLS_KEY": "b.key", "STORYCIRCLE_TLS_REDIRECT_PORT": "80",
        ])
        #expect(both.tls == ServerConfiguration.TLS(certificate: "b.crt", key: "b.key", redirectPort: 80))
        #expect(try load(nil).tls == ServerConfiguration.TLS())
        #expect(try load(#"{"tls": null}"#).tls == ServerConfiguration.TLS())
    }

    @Test func unknownOrMistypedTLSSettingsAreRefusedByName() {
        #expect(problem(#"{"tls": {"certificate": "a.crt", "key": "a.key", "chain": "x"}}"#)?.contains(#"unknown setting "tls.chain"; its settings are certificate, key, redirectPort"#) == true)
        #expect(problem(#"{"tls": "a.crt"}"#)?.contains(#""tls" has the wrong type (an object)"#) == true)
        #expect(problem(#"{"tls": {"redirectPort": "80"}}"#)?.contains(#""tls.redirectPort" has the wrong type"#) == true)
        #expect(problem(#"{"tls.certificate": "a.crt"}"#)?.contains("unknown setting") == true, "a dotted key is not a top-level key")
    }

    @Test func aCertificateNeedsItsKeyAndTheRedirectPortIsAnotherPort() {
        #expect(problem(#"{"tls": {"certificate": "a.crt"}}"#)?.hasPrefix("tls: set both tls.certificate and tls.key") == true)
        #expect(problem(nil, environment: ["STORYCIRCLE_TLS_KEY": "a.key"])?.hasPrefix("tls: set both") == true)
        #expect(problem(#"{"port": 8443, "tls": {"certificate": "a", "key": "b", "redirectPort": 8443}}"#) == "tls.redirectPort must differ from port (8443)")
        #expect(problem(#"{"tls": {"certificate": "a", "key": "b", "redirectPort": 70000}}"#) == "tls.redirectPort 70000 is not a TCP port (1 to 65535)")
        #expect(problem(nil, environment: ["STORYCIRCLE_TLS_REDIRECT_PORT": "eighty"]) == "STORYCIRCLE_TLS_REDIRECT_PORT=eighty is not a whole number")
    }

    @Test func theDataFoldersPairIsServedOnlyWhenNoneIsConfiguredAndBothFilesExist() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("tls-data-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data.appendingPathComponent("tls"), withIntermediateDirectories: true)
        var configuration = ServerConfiguration()
        configuration.files.dataDirectory = data.path
        #expect(configuration.resolvedTLS == nil, "no files: plain HTTP")
        #expect(FileManager.default.createFile(atPath: data.path + "/tls/server.crt", contents: Data()))
        #expect(configuration.resolvedTLS == nil, "a certificate without its key is not a pair")
        #expect(FileManager.default.createFile(atPath: data.path + "/tls/server.key", contents: Data()))
        #expect(configuration.resolvedTLS == TLSSettings(certificateFile: data.path + "/tls/server.crt", keyFile: data.path + "/tls/server.key"))
        configuration.tls = ServerConfiguration.TLS(certificate: "mine.crt", key: "mine.key", redirectPort: 8081)
        #expect(configuration.resolvedTLS == TLSSettings(certificateFile: "mine.crt", keyFile: "mine.key", redirectPort: 8081))
    }

    @Test func theTransportGetsThePairAndNothingWithout() {
        let settings = TLSSettings(certificateFile: "a.crt", keyFile: "a.key", redirectPort: 8081)
        #expect(ClassroomServer.transportConfiguration(ServerConfiguration(), tls: settings).tls == settings)
        #expect(ClassroomServer.transportConfiguration(ServerConfiguration()).tls == nil)
    }
}
