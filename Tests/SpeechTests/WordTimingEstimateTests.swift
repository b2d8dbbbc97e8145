import Foundation
import Testing
@testable import Speech

/// Word timings for audio that has none, on clips made here: bursts of tone separated by silences, so
/// where each "word" starts is known exactly.
@Suite("Word timing estimate")
struct WordTimingEstimateTests {
    static let rate = 16_000

    /// Tone where `bursts` says (ms ranges), silence elsewhere.
    static func clip(_ bursts: [Range<Int>], lengthMs: Int, words: [Int] = []) -> SpokenText {
        var samples = [Int16](repeating: 0, count: lengthMs * rate / 1_000)
        for burst in bursts {
            for index in (burst.lowerBound * rate / 1_000)..<(burst.upperBound * rate / 1_000) {
                samples[index] = Int16(8_000 * sin(Double(index) * 2 * .pi * 220 / Double(rate)))
            }
        }
        return SpokenText(samples: samples, sampleRate: rate, words: words.enumerated().map { SpokenText.Word(startMs: $0.element, offset: $0.offset * 4, length: 3) })
    }

    @Test func onsetsAreWhereSpeechFollowsSilence() {
        let energy = SpeechOnsets(samples: Self.clip([100..<400, 420..<600, 900..<1_200], lengthMs: 1_500).samples, sampleRate: Self.rate)
        #expect(energy.speechSpanMs == 100...1_200)
        #expect(energy.onsets(afterSilenceMs: 80) == [100, 900], "the 20 ms gap is inside a word")
        #expect(energy.pauses(minimumMs: 150) == [600..<900])
        #expect(SpeechOnsets(samples: [Int16](repeating: 0, count: 1_000), sampleRate: Self.rate).speechSpanMs == nil)
    }

    @Test func aSlowerVoiceKeepsItsWordsInProportionBetweenPauses() {
        // The reference: words at 100, 300 | pause | 800, 1000. The target reads slower and pauses longer.
        let reference = Self.clip([100..<500, 800..<1_200], lengthMs: 1_400, words: [100, 300, 800, 1_000])
        let target = Self.clip([200..<1_000, 1_500..<2_300], lengthMs: 2_600)
        let words = WordTimingEstimate.estimate(reference: reference, target: target)
        #expect(words.map(\.startMs) == [200, 600, 1_500, 1_900])
        #expect(words.map(\.offset) == reference.words.map(\.offset), "the text positions are the reference's")
    }

    @Test func whenThePausesDoNotPairUpOnlyTheSpeechSpanAnchors() {
        let reference = Self.clip([100..<500, 800..<1_100], lengthMs: 1_200, words: [100, 600, 800])
        let target = Self.clip([0..<2_000], lengthMs: 2_100)
        let words = WordTimingEstimate.estimate(reference: reference, target: target)
        #expect(words.map(\.startMs) == [0, 1_000, 1_400])
    }

    @Test func pausesArePairedByWhereTheyFallEvenWhenOneReadingPausesMore() {
        // The reference pauses once, in the middle; the target pauses near the start and in the middle.
        let reference = Self.clip([0..<450, 550..<1_000], lengthMs: 1_000, words: [0, 550, 800])
        let target = Self.clip([0..<200, 320..<900, 1_100..<2_000], lengthMs: 2_000)
        let words = WordTimingEstimate.estimate(reference: reference, target: target)
        #expect(words.map(\.startMs) == [0, 1_100, 1_600], "the middle pauses pair; the target's early breath anchors nothing")
    }

    @Test func estimatesAreMonotonicAndInsideTheAudio() {
        let reference = Self.clip([0..<1_000], lengthMs: 1_000, words: [0, 500, 400, 990])
        let target = Self.clip([0..<600], lengthMs: 600)
        let starts = WordTimingEstimate.estimate(reference: reference, target: target).map(\.startMs)
        #expect(starts == starts.sorted())
        #expect(starts.allSatisfy { $0 >= 0 && $0 < 600 })
    }

    @Test func theErrorMeasureIsTheDistanceFromEachOnsetToTheNearestWord() {
        let audio = Self.clip([100..<400, 900..<1_200], lengthMs: 1_300)
        let words = [SpokenText.Word(startMs: 130, offset: 0, length: 1), SpokenText.Word(startMs: 850, offset: 2, length: 1)]
        #expect(WordTimingEstimate.onsetErrors(words: words, audio: audio) == [30, 50])
        #expect(WordTimingEstimate.median([30, 50, 10]) == 30)
        #expect(WordTimingEstimate.median([]) == nil)
    }

    /// espeak-ng's own timings against its own audio: the floor the estimate is held to (the same measure
    /// as `test_voice.py` applies to Piper's audio).
    @Test func espeakTimingsMeetTheirOwnOnsets() async throws {
        let texts = [
            "Every morning, Pip polished his silver arms and counted the gears in his tummy.",
            "Pip looked under the workbench, behind the paint cans, and inside his toolbox.",
            "\"I am sorry, Pip,\" said Dot. \"I wanted a wheel for my cart.\"",
        ]
        var errors: [Int] = []
        for text in texts {
            let spoken = try await SpeechEngine.shared.synthesize(text, voice: Voice(name: "en-us"))
            errors += WordTimingEstimate.onsetErrors(words: spoken.words, audio: spoken).dropFirst()
        }
        let median = try #require(WordTimingEstimate.median(errors))
        print("espeak-ng en-us: median onset error \(median) ms over \(errors.count) onsets")
        #expect(median < 80)
    }
}
