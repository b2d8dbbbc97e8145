import Foundation
import Testing
@testable import Speech

/// A voice dropped in the voices folder is checked before it is offered; every refusal says why.
@Suite("Piper voice files")
struct PiperVoiceFileTests {
    static let config = #"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"}, "language": {"code": "en_US"}}"#

    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("voices-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// An ONNX-looking model (its first byte is field 1, a varint) of `size` bytes, and its config.
    func write(_ name: String, in folder: URL, model: [UInt8]? = nil, config: String? = config) throws {
        try Data(model ?? ([0x08, 0x07] + [UInt8](repeating: 0x01, count: 4_096))).write(to: folder.appendingPathComponent("\(name).onnx"))
        if let config { try Data(config.utf8).write(to: folder.appendingPathComponent("\(name).onnx.json")) }
    }

    @Test func aWellFormedVoiceIsOffered() throws {
        let folder = try folder()
        try write("en_US-test-medium", in: folder)
        let found = PiperVoiceFile.scan(directory: folder.path)
        #expect(found.problems == [])
        #expect(found.voices.map(\.name) == ["en_US-test-medium"])
        #expect(found.voices.first?.language == "en_US")
        #expect(found.voices.first?.espeakVoice == "en-us")
        #expect(found.voices.first?.sampleRate == 22_050)
    }

    @Test func brokenVoicesAreRefusedWithTheirReason() throws {
        let folder = try folder()
        try write("a-truncated", in: folder, model: [0x08, 0x01])
        try write("b-html", in: folder, model: Array("<html>not found</html>".utf8) + [UInt8](repeating: 0x20, count: 2_000))
        try write("c-no-config", in: folder, config: nil)
        try write("d-bad-json", in: folder, config: "{")
        try write("e-no-language", in: folder, config: #"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"}}"#)
        try write("f-odd-rate", in: folder, config: #"{"audio": {"sample_rate": 12345}, "espeak": {"voice": "en-us"}, "language": {"code": "en_US"}}"#)
        let found = PiperVoiceFile.scan(directory: folder.path)
        #expect(found.voices == [])
        let reasons = found.problems.map { URL(fileURLWithPath: $0.path).lastPathComponent + ": " + $0.reason }
        #expect(reasons.count == 6)
        #expect(reasons[0].hasPrefix("a-truncated.onnx: the model file is too small"))
        #expect(reasons[1] == "b-html.onnx: the model file is not an ONNX model")
        #expect(reasons[2].hasPrefix("c-no-config.onnx: its config c-no-config.onnx.json is missing"))
        #expect(reasons[3] == "d-bad-json.onnx: its config d-bad-json.onnx.json is not valid JSON")
        #expect(reasons[4] == "e-no-language.onnx: its config names no language (language.code)")
        #expect(reasons[5].hasPrefix("f-odd-rate.onnx: its config's sample rate"))
    }

    @Test func aMissingFolderHasNoVoices() {
        let found = PiperVoiceFile.scan(directory: "/nonexistent/voices")
        #expect(found.voices.isEmpty && found.problems.isEmpty)
    }
}
