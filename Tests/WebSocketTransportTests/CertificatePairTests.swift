import Foundation
import Testing
import WebSocketTransport

/// The checks a certificate and key pass before the server serves them, at start and at each reload. The
/// files are made by the `openssl` command, never by the code under test; the clock is a parameter.
@Suite("Certificate pairs")
struct CertificatePairTests {
    /// A folder of PEM files: `name.crt` and `name.key`, self-signed for localhost and 127.0.0.1, valid for a day.
    final class Files {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("certificates-\(UUID().uuidString)")

        init() throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

        func make(_ name: String) throws -> (certificate: String, key: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path(name + ".key"),
                "-out", path(name + ".crt"), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,DNS:*.school.example,IP:127.0.0.1",
            ]
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            return (path(name + ".crt"), path(name + ".key"))
        }
    }

    private func problem(_ certificate: String, _ key: String, now: Date = Date()) -> String? {
        do {
            _ = try CertificatePair(certificateFile: certificate, keyFile: key, now: now)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aGoodPairIsReadWithItsNamesAndDates() throws {
        let files = try Files()
        let (certificate, key) = try files.make("good")
        let pair = try CertificatePair(certificateFile: certificate, keyFile: key)
        #expect(!pair.serial.isEmpty && pair.serial.allSatisfy(\.isHexDigit))
        let expires = try #require(pair.notAfter)
        #expect(expires > Date() && expires < Date().addingTimeInterval(2 * 86_400))
        for name in ["localhost", "LOCALHOST", "127.0.0.1", "laptop.school.example"] { #expect(pair.covers(host: name), "\(name)") }
        for name in ["192.168.1.20", "evil.example", "school.example", "a.b.school.example", "[::1]"] { #expect(!pair.covers(host: name), "\(name)") }
    }

    @Test func aMissingOrUnreadableFileIsNamed() throws {
        let files = try Files()
        let (certificate, key) = try files.make("good")
        #expect(problem(files.path("none.crt"), key) == "the TLS certificate \(files.path("none.crt")) does not exist")
        #expect(problem(certificate, files.path("none.key")) == "the TLS key \(files.path("none.key")) does not exist")
        #expect(FileManager.default.createFile(atPath: files.path("empty.crt"), contents: Data("not a certificate\n".utf8)))
        #expect(problem(files.path("empty.crt"), key) == "the TLS certificate \(files.path("empty.crt")) holds no PEM certificate")
        #expect(problem(certificate, certificate) == "the TLS key \(certificate) holds no unencrypted PEM private key")
        if getuid() != 0 {  // root reads anything
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: key)
            #expect(problem(certificate, key)?.hasPrefix("cannot read the TLS key \(key)") == true)
        }
    }

    @Test func aKeyFromAnotherPairIsRefused() throws {
        let files = try Files()
        let first = try files.make("first")
        let second = try files.make("second")
        #expect(problem(first.certificate, second.key) == "the TLS key \(second.key) does not match the certificate \(first.certificate)")
        #expect(problem(second.certificate, second.key) == nil)
    }

    @Test func anExpiredOrNotYetValidCertificateIsRefused() throws {
        let files = try Files()
        let (certificate, key) = try files.make("good")
        #expect(problem(certificate, key, now: Date().addingTimeInterval(3 * 86_400))?.hasPrefix("the TLS certificate \(certificate) expired on ") == true)
        #expect(problem(certificate, key, now: Date().addingTimeInterval(-86_400))?.hasPrefix("the TLS certificate \(certificate) is not valid yet") == true)
    }
}
