import Foundation
import Testing
import Speech
@testable import StoryCircleCore
@testable import StoryCircleApp

/// What the editor's voice menu is built from: each voice described (its tag, natural or not, its speaker
/// or espeak-ng's name for it) and the best voice for each language, a natural one when it is installed.
@Suite("Voice menu")
struct VoiceMenuTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-voice-menu-\(UUID().uuidString)")

    /// A Piper voice file that passes the catalog's checks (nothing here reads it aloud).
    func natural(_ name: String, language: String) throws -> VoiceCatalog.NaturalVoice {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = folder.appendingPathComponent("\(name).onnx")
        try Data([0x08, 0x07] + [UInt8](repeating: 1, count: 2_048)).write(to: model)
        try Data(#"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"}, "language": {"code": "\#(language)"}}"#.utf8)
            .write(to: URL(fileURLWithPath: model.path + ".json"))
        let file = try PiperVoiceFile.inspect(modelPath: model.path).get()
        return VoiceCatalog.NaturalVoice(file: file, digest: ModelDigest(path: model.path, known: "0"))
    }

    let espeak = [EspeakVoice(language: "en-gb", name: "English_(Great_Britain)"), EspeakVoice(language: "en-gb-x-gbcwmd", name: "English_(West_Midlands)"),
                  EspeakVoice(language: "es", name: "Spanish_(Spain)"), EspeakVoice(language: "qya", name: "Quenya")]

    @Test func theBestVoiceIsTheNaturalOneWhenInstalledElseTheBareLanguage() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let joe = try natural("en_US-joe-medium", language: "en_US")
        let catalog = VoiceCatalog(espeak: espeak, natural: [joe], problems: [], piper: .init(python: "/usr/bin/python3", worker: "w.py"), piperMissing: nil)
        #expect(catalog.best(for: "en") == "piper:en_US-joe-medium")
        #expect(catalog.best(for: "es") == "es")
        #expect(catalog.best(for: "e") == "e", "a language is matched whole, not by its first letter")
        let robotic = VoiceCatalog(espeak: espeak, natural: [], problems: [], piper: nil, piperMissing: "Piper is not installed")
        #expect(robotic.best(for: "en") == "en")
    }

    @Test func eachVoiceIsDescribedNaturalOnesFirst() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let joe = try natural("en_US-joe-medium", language: "en_US")
        let catalog = VoiceCatalog(espeak: espeak, natural: [joe], problems: [], piper: .init(python: "/usr/bin/python3", worker: "w.py"), piperMissing: nil)
        let described = catalog.described
        #expect(described.map(\.name) == ["piper:en_US-joe-medium", "en-gb", "en-gb-x-gbcwmd", "es", "qya"])
        #expect(described[0] == VoiceCatalog.Described(name: "piper:en_US-joe-medium", language: "en", tag: "en-US", natural: true, speaker: "joe", description: nil))
        #expect(described[2] == VoiceCatalog.Described(name: "en-gb-x-gbcwmd", language: "en", tag: "en-gb-x-gbcwmd", natural: false, speaker: nil,
                                                       description: "English (West Midlands)"))
        #expect(described[4].language == nil && described[4].description == "Quenya")
    }
}
