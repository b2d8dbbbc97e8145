import Foundation
import Testing
@testable import Speech

/// espeak-ng is one process-wide engine: every test (and other suites in the same process) share it.
@Suite("espeak-ng speech")
struct SpeechTests {
    let engine = SpeechEngine.shared

    @Test func wordTimingsIncreaseAndLieInsideTheSentence() async throws {
        let text = "Pip the robot counted the gears in his tummy."
        let spoken = try await engine.synthesize(text, voice: Voice(name: "en"))
        #expect(spoken.sampleRate == 22_050)
        #expect(spoken.durationMs > 1_000)
        #expect(spoken.words.count == 9)
        #expect(spoken.words.map(\.startMs) == spoken.words.map(\.startMs).sorted())
        #expect(Set(spoken.words.map(\.startMs)).count == spoken.words.count, "strictly increasing")
        #expect(spoken.words.allSatisfy { $0.startMs >= 0 && $0.startMs < spoken.durationMs })
        let utf16 = Array(text.utf16)
        let words = spoken.words.map { String(decoding: utf16[$0.offset..<($0.offset + $0.length)], as: UTF16.self) }
        #expect(words == ["Pip", "the", "robot", "counted", "the", "gears", "in", "his", "tummy"])
    }

    /// espeak-ng adds a word of length 0 near the end of some texts, depending on the one spoken before:
    /// "Every morning, …" after the first Pip sentence did, as did the test above when another suite had
    /// just spoken Spanish. Such a word pointed at offset 0 and sent the page's highlight back to the start.
    @Test func everyWordNamesSomeOfTheText() async throws {
        let spoken: [(text: String, voice: Voice)] = [
            ("Los patos sujetaron un palo con el pico, y Lola lo mordió con fuerza.", Voice(name: "es", rate: 140)),
            ("Lola vio el mundo desde arriba y se rió de alegría.", Voice(name: "es", rate: 140)),
            ("Pip the robot counted the gears in his tummy.", Voice(name: "en")),
            ("Pip was a small robot who lived in a busy workshop at the end of Maple Street.", Voice(name: "en-gb", pitch: 55)),
            ("Every morning, Pip polished his silver arms and counted the gears in his tummy.", Voice(name: "en-gb", pitch: 55)),
            ("Who had the lost gear? A cat … A mouse … A bird … A dog", Voice(name: "en-gb", pitch: 55)),
            ("Pip the robot counted the gears in his tummy.", Voice(name: "en")),
        ]
        for (text, voice) in spoken {
            let result = try await engine.synthesize(text, voice: voice)
            let length = text.utf16.count
            #expect(result.words.allSatisfy { $0.length > 0 && $0.offset + $0.length <= length }, "\(text): \(result.words)")
            #expect(result.words.map(\.offset) == result.words.map(\.offset).sorted(), "\(text): words in reading order")
        }
    }

    @Test func offsetsAreUTF16EvenForAccentsAndEmoji() async throws {
        let text = "¿Cómo estás, Lola? 🐢 Muy bien."
        let spoken = try await engine.synthesize(text, voice: Voice(name: "es"))
        let utf16 = Array(text.utf16)
        let words = spoken.words.map { String(decoding: utf16[$0.offset..<($0.offset + $0.length)], as: UTF16.self) }
        #expect(words.contains("Cómo"))
        #expect(words.contains("estás"))
        #expect(words.contains("bien"))
    }

    @Test func mp3IsWellFormedAndAsLongAsTheSpeech() async throws {
        let spoken = try await engine.synthesize("Dot the mouse was rolling the blue gear like a wheel.", voice: Voice(name: "en-us"))
        let audio = try MP3Encoder.encode(spoken.samples, sampleRate: spoken.sampleRate)
        let mp3 = audio.bytes
        let frames = try #require(MP3Frames.scan(mp3), "every frame header decodes and the frames cover the file")
        #expect(audio.durationMs == frames.durationMs)
        #expect((40...80).contains(audio.leadingDelayMs), "LAME's delay at 22.05 kHz is about 50 ms, not \(audio.leadingDelayMs)")
        #expect(frames.sampleRate == 22_050)
        #expect(frames.samplesPerFrame == 576)
        let difference = abs(frames.durationMs - spoken.durationMs)
        #expect(Double(difference) <= 0.1 * Double(spoken.durationMs), "MP3 \(frames.durationMs) ms vs speech \(spoken.durationMs) ms")
        #expect(mp3.count < spoken.samples.count / 4, "compressed well below 16-bit PCM")
    }

    @Test func aCorruptFileIsNotMistakenForMP3() throws {
        #expect(MP3Frames.scan(Array("not audio at all".utf8)) == nil)
        #expect(MP3Frames.scan([]) == nil)
    }

    @Test func wavFallbackHasAValidHeader() async throws {
        let spoken = try await engine.synthesize("Hello.", voice: Voice(name: "en"))
        let wav = WAVEncoder.encode(spoken.samples, sampleRate: spoken.sampleRate)
        #expect(Array(wav[0..<4]) == Array("RIFF".utf8))
        #expect(Array(wav[8..<12]) == Array("WAVE".utf8))
        #expect(wav.count == 44 + spoken.samples.count * 2)
    }

    @Test func anUnknownVoiceIsAClearError() async {
        await #expect(throws: SpeechError.unknownVoice("xx-nowhere")) {
            try await engine.synthesize("Hello.", voice: Voice(name: "xx-nowhere"))
        }
    }

    /// espeak-ng has no voice file named "en-gb"; it must be found by language, as the espeak-ng command does.
    @Test(arguments: ["en-gb", "en-us", "es", "es-419", "fr", "gmw/en", "en+f3"])
    func voicesAreFoundByNameOrLanguage(voice: String) async throws {
        #expect(await engine.hasVoice(voice))
        _ = try await engine.synthesize("Hello.", voice: Voice(name: voice))
    }

    @Test func rateChangesTheDuration() async throws {
        let text = "The three little clouds rained gently all night."
        let slow = try await engine.synthesize(text, voice: Voice(name: "en", rate: 100))
        let fast = try await engine.synthesize(text, voice: Voice(name: "en", rate: 300))
        #expect(slow.durationMs > fast.durationMs * 2)
    }

    /// The shape of a release number, not one release: the test holds on any espeak-ng a distribution
    /// ships ("1.51", "1.52.0", "1.52-dev"), and still fails on "unknown" or an empty string, which would
    /// make every cached file look current after an upgrade.
    @Test func reportsTheLibraryVersionForCacheKeys() throws {
        let version = try #require(engine.version)
        #expect(version.wholeMatch(of: /\d+(\.\d+)+([-+~][0-9A-Za-z.]+)?/) != nil, "\(version)")
    }
}
