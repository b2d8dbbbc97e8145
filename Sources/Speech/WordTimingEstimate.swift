/// Word timings for audio that came without any (Piper's voices give no alignments), estimated from
/// espeak-ng's word timings for the same text (`reference`, which has them) mapped onto the new audio
/// (`target`).
///
/// The mapping is piecewise linear between anchors that both clips have: where speech starts and ends,
/// and the edges of each pause (a comma, a full stop inside the sentence) when both clips pause the same
/// number of times. Between anchors, time is scaled by the ratio of the two stretches: a sentence read
/// more slowly by one voice keeps its words in proportion. When the pauses do not pair up, only the start
/// and end of speech anchor it. Measured against each clip's own onsets by `SpeechTests` and
/// `Tests/Integration/test_voice.py`.
public enum WordTimingEstimate {
    /// A pause shorter than this is not used as an anchor (a stop consonant's closure is 30-80 ms).
    public static let anchorPauseMs = 150

    public static func estimate(reference: SpokenText, target: SpokenText) -> [SpokenText.Word] {
        let referenceEnergy = SpeechOnsets(samples: reference.samples, sampleRate: reference.sampleRate)
        let targetEnergy = SpeechOnsets(samples: target.samples, sampleRate: target.sampleRate)
        guard let referenceSpan = referenceEnergy.speechSpanMs, let targetSpan = targetEnergy.speechSpanMs else {
            return reference.words.map { SpokenText.Word(startMs: 0, offset: $0.offset, length: $0.length) }
        }
        let anchors = Self.anchors(
            referenceSpan: referenceSpan, referencePauses: referenceEnergy.pauses(minimumMs: anchorPauseMs),
            targetSpan: targetSpan, targetPauses: targetEnergy.pauses(minimumMs: anchorPauseMs)
        )
        let last = max(0, target.durationMs - 1)
        var previous = 0
        return reference.words.map { word in
            let mapped = min(max(map(word.startMs, anchors: anchors), previous), last)
            previous = mapped
            return SpokenText.Word(startMs: mapped, offset: word.offset, length: word.length)
        }
    }

    /// Pairs of (reference ms, target ms), increasing in both.
    static func anchors(referenceSpan: ClosedRange<Int>, referencePauses: [Range<Int>], targetSpan: ClosedRange<Int>, targetPauses: [Range<Int>]) -> [(Int, Int)] {
        var anchors = [(referenceSpan.lowerBound, targetSpan.lowerBound)]
        if referencePauses.count == targetPauses.count {
            for (reference, target) in zip(referencePauses, targetPauses) {
                anchors.append((reference.lowerBound, target.lowerBound))
                anchors.append((reference.upperBound, target.upperBound))
            }
        }
        anchors.append((referenceSpan.upperBound, targetSpan.upperBound))
        return anchors
    }

    static func map(_ time: Int, anchors: [(Int, Int)]) -> Int {
        guard let first = anchors.first, let last = anchors.last else { return time }
        if time <= first.0 { return first.1 }
        if time >= last.0 { return last.1 }
        for (from, to) in zip(anchors, anchors.dropFirst()) where time >= from.0 && time <= to.0 {
            let span = to.0 - from.0
            guard span > 0 else { return to.1 }
            return from.1 + (time - from.0) * (to.1 - from.1) / span
        }
        return last.1
    }

    /// How far estimated word starts are from the audio's own onsets: for each onset after a silence,
    /// the distance to the nearest estimated word start, in ms. Its median is the figure reported per voice.
    public static func onsetErrors(words: [SpokenText.Word], audio: SpokenText, leadingDelayMs: Int = 0, silenceMs: Int = 80) -> [Int] {
        let onsets = SpeechOnsets(samples: audio.samples, sampleRate: audio.sampleRate).onsets(afterSilenceMs: silenceMs)
        let starts = words.map { $0.startMs + leadingDelayMs }
        guard !starts.isEmpty else { return [] }
        return onsets.map { onset in starts.map { abs($0 - onset) }.min() ?? 0 }
    }

    public static func median(_ values: [Int]) -> Int? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
