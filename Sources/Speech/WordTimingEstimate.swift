/// Word timings for audio that came without any (Piper's voices give no alignments), estimated from
/// espeak-ng's word timings for the same text (`reference`, which has them) mapped onto the new audio
/// (`target`).
///
/// The mapping is piecewise linear between anchors that both clips have: where speech starts and ends,
/// and the edges of each pause (a comma, a full stop inside the sentence) that both clips make at about
/// the same place in the sentence (`pairPauses`). Between anchors, time is scaled by the ratio of the two
/// stretches: a sentence read more slowly by one voice keeps its words in proportion. A pause only one
/// clip makes anchors nothing. Measured against each clip's own onsets by `SpeechTests` and
/// `Tests/Integration/test_voice.py`.
public enum WordTimingEstimate {
    /// A pause shorter than this is not used as an anchor (a stop consonant's closure is 30-80 ms).
    public static let anchorPauseMs = 100

    public static func estimate(reference: SpokenText, target: SpokenText) -> [SpokenText.Word] {
        estimateWithAnchors(reference: reference, target: target).words
    }

    /// The estimate, and the target times it was anchored at (where speech starts and ends, and the edges
    /// of the paired pauses): onsets there are right by construction, so a fair measure leaves them out.
    public static func estimateWithAnchors(reference: SpokenText, target: SpokenText) -> (words: [SpokenText.Word], anchorsMs: [Int]) {
        let referenceEnergy = SpeechOnsets(samples: reference.samples, sampleRate: reference.sampleRate)
        let targetEnergy = SpeechOnsets(samples: target.samples, sampleRate: target.sampleRate)
        guard let referenceSpan = referenceEnergy.speechSpanMs, let targetSpan = targetEnergy.speechSpanMs else {
            return (reference.words.map { SpokenText.Word(startMs: 0, offset: $0.offset, length: $0.length) }, [])
        }
        let anchors = Self.anchors(
            referenceSpan: referenceSpan, referencePauses: referenceEnergy.pauses(minimumMs: anchorPauseMs),
            targetSpan: targetSpan, targetPauses: targetEnergy.pauses(minimumMs: anchorPauseMs)
        )
        let last = max(0, target.durationMs - 1)
        var previous = 0
        let words = reference.words.map { word in
            let mapped = min(max(map(word.startMs, anchors: anchors), previous), last)
            previous = mapped
            return SpokenText.Word(startMs: mapped, offset: word.offset, length: word.length)
        }
        return (words, anchors.map(\.1))
    }

    /// Pairs of (reference ms, target ms), increasing in both: the speech spans' ends, and the edges of
    /// the pauses `pairPauses` matches.
    static func anchors(referenceSpan: ClosedRange<Int>, referencePauses: [Range<Int>], targetSpan: ClosedRange<Int>, targetPauses: [Range<Int>]) -> [(Int, Int)] {
        var anchors = [(referenceSpan.lowerBound, targetSpan.lowerBound)]
        for (reference, target) in pairPauses(referencePauses, in: referenceSpan, targetPauses, in: targetSpan) {
            anchors.append((reference.lowerBound, target.lowerBound))
            anchors.append((reference.upperBound, target.upperBound))
        }
        anchors.append((referenceSpan.upperBound, targetSpan.upperBound))
        return anchors
    }

    /// The pauses both readings make, in order: each pause's middle as a fraction of its clip's speech,
    /// paired by the monotonic matching that minimises the distance between paired fractions, leaving a
    /// pause unpaired when that costs less than `unpairedCost` (one voice breathes where the other runs on).
    static func pairPauses(_ reference: [Range<Int>], in referenceSpan: ClosedRange<Int>, _ target: [Range<Int>], in targetSpan: ClosedRange<Int>) -> [(Range<Int>, Range<Int>)] {
        func fraction(_ pause: Range<Int>, _ span: ClosedRange<Int>) -> Double {
            Double((pause.lowerBound + pause.upperBound) / 2 - span.lowerBound) / Double(max(1, span.upperBound - span.lowerBound))
        }
        let r = reference.map { fraction($0, referenceSpan) }
        let t = target.map { fraction($0, targetSpan) }
        let unpairedCost = 0.06
        // cost[i][j]: the best matching of the first i reference and j target pauses.
        var cost = [[Double]](repeating: [Double](repeating: 0, count: t.count + 1), count: r.count + 1)
        for i in 0...r.count {
            for j in 0...t.count where i > 0 || j > 0 {
                var best = Double.infinity
                if i > 0 { best = min(best, cost[i - 1][j] + unpairedCost) }
                if j > 0 { best = min(best, cost[i][j - 1] + unpairedCost) }
                if i > 0, j > 0, abs(r[i - 1] - t[j - 1]) < 2 * unpairedCost { best = min(best, cost[i - 1][j - 1] + abs(r[i - 1] - t[j - 1])) }
                cost[i][j] = best
            }
        }
        var pairs: [(Range<Int>, Range<Int>)] = []
        var i = r.count, j = t.count
        while i > 0 || j > 0 {
            if i > 0, j > 0, abs(r[i - 1] - t[j - 1]) < 2 * unpairedCost, cost[i][j] == cost[i - 1][j - 1] + abs(r[i - 1] - t[j - 1]) {
                pairs.append((reference[i - 1], target[j - 1]))
                i -= 1; j -= 1
            } else if i > 0, cost[i][j] == cost[i - 1][j] + unpairedCost {
                i -= 1
            } else {
                j -= 1
            }
        }
        return pairs.reversed()
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
