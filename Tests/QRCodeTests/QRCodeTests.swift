import Foundation
import Testing
@testable import QRCode

@Suite("QR codes")
struct QRCodeTests {
    /// Decodes a code with zbarimg, an independent decoder (installed by `make test`).
    private func decode(_ code: QRCode) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pbm")
        try code.portableBitmap().write(to: file, atomically: true, encoding: .ascii)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        process.arguments = ["--raw", "--quiet", file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    @Test(arguments: [
        "http://192.168.1.20:8080/?room=123456",
        "A",
        "https://storycircle.school.example/?room=987654&lang=es",
        String(repeating: "x", count: 150),
        "Ünïcödé 🤖 room 123456",
    ])
    func anIndependentDecoderReadsWhatWasEncoded(text: String) throws {
        let code = try QRCode(text: text)
        #expect(code.size == code.version * 4 + 17)
        #expect(try decode(code) == text)
    }

    @Test func everyVersionDecodes() throws {
        for length in [10, 20, 40, 60, 80, 100, 120, 150, 180, 210] {
            let text = String((0..<length).map { Character(UnicodeScalar(UInt8(65 + $0 % 26))) })
            let code = try QRCode(text: text)
            #expect(try decode(code) == text, "version \(code.version)")
        }
    }

    @Test func aJoinURLFitsASmallCode() throws {
        #expect(try QRCode(text: "http://192.168.100.200:8080/?room=123456").version == 3)
    }

    @Test func tooLongTextIsAClearError() {
        #expect(throws: QRCode.EncodingError.tooLong(bytes: 300, maximum: 213)) { try QRCode(text: String(repeating: "a", count: 300)) }
    }

    @Test func renderingsHaveTheQuietZone() throws {
        let code = try QRCode(text: "hi")
        let lines = code.terminalText(border: 2).split(separator: "\n")
        #expect(lines.count == (code.size + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == code.size + 4 })
        #expect(code.svg().hasPrefix("<svg"))
        #expect(code.svg().contains("viewBox=\"0 0 29 29\""))
    }
}
