/// Where speech starts in a clip, from its energy alone: the frames (10 ms) whose loudness rises above a
/// threshold after a stretch of silence. Used to place estimated word timings on audio that came without
/// any (`WordTimingEstimate`) and to measure how far such an estimate is from the audio's own onsets.
public struct SpeechOnsets: Sendable, Equatable {
    public static let frameMs = 10

    /// Loudness (RMS) of each 10 ms frame.
    public var frames: [Double]
    /// A frame at or above this is speech: a fixed fraction of the loudest frame, so a quiet voice and a
    /// loud one are treated alike.
    public var threshold: Double

    public init(samples: [Int16], sampleRate: Int, thresholdRatio: Double = 0.06) {
        let size = max(1, sampleRate * Self.frameMs / 1_000)
        var frames: [Double] = []
        frames.reserveCapacity(samples.count / size + 1)
        var start = 0
        while start < samples.count {
            let end = min(start + size, samples.count)
            var sum = 0.0
            for index in start..<end {
                let value = Double(samples[index])
                sum += value * value
            }
            frames.append((sum / Double(end - start)).squareRoot())
            start = end
        }
        self.frames = frames
        self.threshold = max((frames.max() ?? 0) * thresholdRatio, 30)
    }

    /// From the first frame of speech to the end of the last one, in ms; nil for a silent clip.
    public var speechSpanMs: ClosedRange<Int>? {
        guard let first = frames.firstIndex(where: { $0 >= threshold }),
              let last = frames.lastIndex(where: { $0 >= threshold }) else { return nil }
        return (first * Self.frameMs)...((last + 1) * Self.frameMs)
    }

    /// Every onset after at least `silenceMs` of silence (and the first onset of the clip), in ms.
    public func onsets(afterSilenceMs silenceMs: Int = 80) -> [Int] {
        let needed = max(1, silenceMs / Self.frameMs)
        var quiet = needed
        var onsets: [Int] = []
        for (index, level) in frames.enumerated() {
            if level >= threshold {
                if quiet >= needed { onsets.append(index * Self.frameMs) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return onsets
    }

    /// The silences of at least `minimumMs` inside the speech (not before or after it), as ranges in ms.
    public func pauses(minimumMs: Int = 80) -> [Range<Int>] {
        guard let span = speechSpanMs else { return [] }
        let needed = max(1, minimumMs / Self.frameMs)
        var pauses: [Range<Int>] = []
        var quietStart: Int?
        let first = span.lowerBound / Self.frameMs
        let last = span.upperBound / Self.frameMs
        for index in first..<last {
            if frames[index] < threshold {
                if quietStart == nil { quietStart = index }
            } else if let start = quietStart {
                if index - start >= needed { pauses.append((start * Self.frameMs)..<(index * Self.frameMs)) }
                quietStart = nil
            }
        }
        return pauses
    }
}
