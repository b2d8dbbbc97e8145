import Foundation
import Locking
import Speech
import StoryCircleCore
import StoryCircleServer

/// Prepares narration with espeak-ng, through the audio cache: a sentence already spoken the same way is a
/// file read; a new one is synthesised once, encoded to MP3 and kept. Two rooms preparing the same sentence
/// at once share one synthesis.
public final class SpeechNarrator: NarrationPreparing {
    private let engine: SpeechEngine
    private let cache: AudioCache
    private let metrics: ServerMetrics
    private let inFlight = Locked<[String: Task<AudioCache.Clip, any Error>]>([:])

    public init(engine: SpeechEngine = .shared, cache: AudioCache, metrics: ServerMetrics) {
        self.engine = engine
        self.cache = cache
        self.metrics = metrics
    }

    public func prepare(_ request: NarrationRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> NarrationPlan {
        let voice = Voice(name: request.settings.voice, rate: request.settings.rate, pitch: request.settings.pitch)
        let total = request.sentences.count + (request.questions?.count ?? 0)
        var sentences: [NarratedSentence] = []
        for (index, text) in request.sentences.enumerated() {
            try Task.checkCancellation()
            let clip = try await clip(for: text, voice: voice)
            sentences.append(NarratedSentence(index: index, text: text, durationMs: clip.durationMs, words: clip.words, audio: clip.path))
            progress(index + 1, total)
        }
        var questionAudio: [String]?
        if let questions = request.questions {
            var paths: [String] = []
            for (index, text) in questions.enumerated() {
                try Task.checkCancellation()
                paths.append(try await clip(for: text, voice: voice).path)
                progress(request.sentences.count + index + 1, total)
            }
            questionAudio = paths
        }
        return NarrationPlan(sentences: sentences, questionAudio: questionAudio)
    }

    /// The clip for `text`, from the cache or synthesised now.
    public func clip(for text: String, voice: Voice) async throws -> AudioCache.Clip {
        guard let version = engine.version else {
            throw NarrationError(.engineUnavailable("espeak-ng did not start"))
        }
        let key = AudioCache.key(text: text, voice: voice.name, rate: voice.rate, pitch: voice.pitch, engineVersion: version)
        if let clip = cache.clip(key) {
            metrics.audioCacheHit()
            return clip
        }
        let source = inFlight.withLock { running -> ClipSource in
            if let task = running[key] { return .inFlight(task) }
            // Looked at again under the lock: a synthesis stores its clip before it leaves `inFlight`, so a
            // clip that was in neither place a moment ago is now in one of them, never synthesised twice.
            if let clip = cache.clip(key) { return .cached(clip) }
            let task = Task { [engine, cache, metrics, inFlight] () throws -> AudioCache.Clip in
                defer { _ = inFlight.withLock { $0.removeValue(forKey: key) } }
                do {
                    let spoken = try await engine.synthesize(text, voice: voice)
                    let audio = try MP3Encoder.encode(spoken.samples, sampleRate: spoken.sampleRate)
                    // Timings describe the file as it plays, leading encoder delay included.
                    let words = spoken.words.map { WordTiming(at: $0.startMs + audio.leadingDelayMs, start: $0.offset, length: $0.length) }
                    metrics.sentenceSynthesized()
                    return try cache.store(audio.bytes, durationMs: audio.durationMs, words: words, key: key)
                } catch let error as SpeechError {
                    throw NarrationError(error)
                }
            }
            running[key] = task
            return .inFlight(task)
        }
        switch source {
        case .cached(let clip):
            metrics.audioCacheHit()
            return clip
        case .inFlight(let task):
            return try await task.value
        }
    }

    private enum ClipSource {
        case cached(AudioCache.Clip)
        case inFlight(Task<AudioCache.Clip, any Error>)
    }
}

/// A speech failure, with the message the teacher reads (children and the projector get a kind sentence
/// from the room instead, with no voice names or program names in it).
public struct NarrationError: FriendlyError, CustomStringConvertible {
    public let underlying: SpeechError

    public init(_ underlying: SpeechError) {
        self.underlying = underlying
    }

    public var friendlyMessage: String {
        switch underlying {
        case .unknownVoice(let voice):
            "The voice \"\(voice)\" is not installed on this computer. Choose another voice in Settings, then press Try again."
        case .engineUnavailable:
            "The reading voice (espeak-ng) is not installed on this computer. Install it, then press Try again, or skip to the quiz."
        case .synthesisFailed, .encodingFailed:
            "The story could not be read aloud. Press Try again, or skip to the quiz."
        }
    }

    public var description: String { underlying.description }
}
