import Foundation
import Locking
import Speech
import StoryCircleCore
import StoryCircleServer

/// Prepares narration through the audio cache, with one of two engines: espeak-ng (built in, always the
/// fallback) or a natural Piper voice read by the resident worker. A sentence already spoken the same way
/// is a file read; a new one is synthesised once, encoded to MP3 and kept. Two rooms preparing the same
/// sentence at once share one synthesis.
///
/// A story is read by one voice from start to end: when the natural voice fails for any sentence (the
/// worker cannot start, keeps dying, or times out twice), the whole story is prepared again with
/// espeak-ng, and the plan carries a notice for the teacher. The questions, read after the story, are
/// not part of it: when the voice fails on one, only the questions are read by espeak-ng.
public final class SpeechNarrator: NarrationPreparing {
    private let engine: SpeechEngine
    private let cache: AudioCache
    private let metrics: ServerMetrics
    public let voices: VoiceCatalog
    public let piper: PiperWorker?
    private let logger: StoryCircleLog?
    private let inFlight = Locked<[String: Task<AudioCache.Clip, any Error>]>([:])
    private let readingAhead = Locked(ReadingAhead())

    public init(
        engine: SpeechEngine = .shared, cache: AudioCache, metrics: ServerMetrics,
        voices: VoiceCatalog = VoiceCatalog(espeak: [], natural: [], problems: [], piper: nil, piperMissing: nil),
        piper: PiperWorker? = nil, logger: StoryCircleLog? = nil
    ) {
        self.engine = engine
        self.cache = cache
        self.metrics = metrics
        self.voices = voices
        self.piper = piper
        self.logger = logger
    }

    /// A room's voice, checked when the room is created and when the teacher changes it: one this node
    /// lacks (an espeak-ng voice or language it does not have, a natural voice not installed) is refused
    /// there with the voices it has, never read by another voice. For a natural voice the worker starts
    /// now, so the first sentence does not wait for Python and the voice to load.
    public func check(voice: String) -> Result<Void, VoiceRefusal> {
        switch voices.choose(voice) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(.natural):
            piper?.warmUp()
            return .success(())
        case .success(.espeak):
            return .success(())
        }
    }

    /// A voice the teacher typed into a room's settings that this node cannot read is refused with the
    /// voices it has, before the room changes (an empty one goes back to the story's voice, checked when
    /// the room was created).
    public func refusal(for command: TeacherCommand) -> RoomError? {
        guard case .settings(let patch) = command, let voice = patch.voice?.trimmingCharacters(in: .whitespaces), !voice.isEmpty,
              case .failure(let refusal) = check(voice: voice) else { return nil }
        return refusal.roomError
    }

    /// Reads a room's story with its natural voice into the cache in the background, while the children
    /// join: when the teacher presses start, its clips are ready (or in flight, shared with the
    /// preparation). One sentence at a time, so many rooms created at once queue one request each. A
    /// failure here changes nothing: the preparation at start decides (and falls back if it must).
    /// A room's new read-ahead (its voice changed in the lobby) ends the one before after its sentence;
    /// an espeak-ng voice, which reads a story in about a second, is not read ahead.
    public func readAhead(_ request: NarrationRequest, room: String) {
        let settings = request.settings
        guard let piper, case .success(.natural(let voice)) = voices.choose(settings.voice) else {
            readingAhead.withLock { $0.forget(room: room) }?.cancel()
            return
        }
        let engine = SpokenEngine.natural(voice, piper, rate: settings.rate, pitch: settings.pitch, urgent: false)
        let id = UUID()
        let task = Task { [self] in
            defer { readingAhead.withLock { $0.finished(id) } }
            for text in request.sentences {
                guard !Task.isCancelled, (try? await clip(for: text, engine: engine)) != nil else { return }
            }
        }
        switch readingAhead.withLock({ $0.keep(task, id: id, room: room) }) {
        case .refused: task.cancel()
        case .replacing(let earlier): earlier?.cancel()
        }
    }

    /// Ends after its current sentence (`stop` still waits for it).
    public func stopReadingAhead(room: String) {
        readingAhead.withLock { $0.forget(room: room) }?.cancel()
    }

    /// The server is stopping: reading ahead stops, the worker fails what waits for it and is killed, and
    /// this returns when nothing read ahead is left running.
    public func stop() async {
        let running = readingAhead.withLock { $0.stop() }
        for task in running { task.cancel() }
        piper?.stop()
        for task in running { await task.value }
    }

    /// The read-ahead tasks still running, so that `stop` can end them.
    var readingAheadCount: Int { readingAhead.withLock { $0.running.count } }

    public func prepare(_ request: NarrationRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> NarrationPlan {
        try await prepare(request) { step in
            if case .progress(let ready, let total) = step { progress(ready, total) }
        }
    }

    /// With the natural voice, reports each sentence as soon as it is ready, in order, so the story starts
    /// while the rest are synthesised. espeak-ng reads a whole story in about a second, well inside the
    /// plan's lead, so its plan comes whole (and screens get one message rather than one per sentence).
    /// When the natural voice fails part-way (after its worker was restarted and the sentence asked
    /// again), what was reported is dropped (`restarted`) and espeak-ng reads the story from its first
    /// sentence, with the notice for the teacher: one story never mixes voices. A question the natural
    /// voice fails on, once the whole story was read, never sends the story back: the questions alone are
    /// read by espeak-ng.
    public func prepare(_ request: NarrationRequest, report: @escaping @Sendable (NarrationStep) -> Void) async throws -> NarrationPlan {
        let settings = request.settings
        switch voices.choose(settings.voice) {
        case .failure:
            throw NarrationError(.unknownVoice(settings.voice))
        case .success(.espeak(let name)):
            return try await prepare(request, engine: .espeak(Voice(name: name, rate: settings.rate, pitch: settings.pitch)), notice: nil, report: report)
        case .success(.natural(let voice)):
            let fallback = SpokenEngine.espeak(Voice(name: voice.file.espeakVoice, rate: settings.rate, pitch: settings.pitch))
            guard let piper else {
                return try await prepare(request, engine: fallback, notice: .naturalVoiceFallback, report: report)
            }
            do {
                return try await prepare(
                    request, engine: .natural(voice, piper, rate: settings.rate, pitch: settings.pitch, urgent: true), notice: nil,
                    questionsFallback: fallback, report: report
                )
            } catch let failure as NaturalVoiceFailure {
                logger?.warning("Natural voice failed; the story is read by espeak-ng", ["voice": voice.id, "error": failure.failure.description])
                report(.restarted)
                return try await prepare(request, engine: fallback, notice: .naturalVoiceFallback, report: report)
            }
        }
    }

    /// `questionsFallback`: the engine that reads the questions when `engine` (the natural voice) fails on
    /// one after the whole story was read and streamed. Going back to the story's first sentence then would
    /// read the children a story they have already heard, so the story stays as it was read and only the
    /// questions (all of them, in one voice) are read by espeak-ng, with a notice for the teacher.
    private func prepare(
        _ request: NarrationRequest, engine: SpokenEngine, notice: NarrationNotice?,
        questionsFallback: SpokenEngine? = nil, report: @escaping @Sendable (NarrationStep) -> Void
    ) async throws -> NarrationPlan {
        let total = request.sentences.count + (request.questions?.count ?? 0)
        var sentences: [NarratedSentence] = []
        for (index, text) in request.sentences.enumerated() {
            try Task.checkCancellation()
            let clip = try await clip(for: text, engine: engine)
            let sentence = NarratedSentence(index: index, text: text, durationMs: clip.durationMs, words: clip.words, audio: clip.path)
            sentences.append(sentence)
            if case .natural = engine { report(.sentence(sentence, notice: notice)) }
            report(.progress(ready: index + 1, total: total))
        }
        guard let questions = request.questions else {
            return NarrationPlan(sentences: sentences, questionAudio: nil, notice: notice)
        }
        do {
            let paths = try await questionClips(questions, engine: engine, after: request.sentences.count, total: total, report: report)
            return NarrationPlan(sentences: sentences, questionAudio: paths, notice: notice)
        } catch let failure as NaturalVoiceFailure {
            guard let questionsFallback else { throw failure }
            logger?.warning("Natural voice failed on a question; the questions are read by espeak-ng", ["error": failure.failure.description])
            let paths = try await questionClips(questions, engine: questionsFallback, after: request.sentences.count, total: total, report: report)
            return NarrationPlan(sentences: sentences, questionAudio: paths, notice: .naturalVoiceQuestionsFallback)
        }
    }

    private func questionClips(
        _ questions: [String], engine: SpokenEngine, after sentenceCount: Int, total: Int, report: @escaping @Sendable (NarrationStep) -> Void
    ) async throws -> [String] {
        var paths: [String] = []
        for (index, text) in questions.enumerated() {
            try Task.checkCancellation()
            paths.append(try await clip(for: text, engine: engine).path)
            report(.progress(ready: sentenceCount + index + 1, total: total))
        }
        return paths
    }

    /// The espeak-ng clip for `text`, from the cache or synthesised now.
    public func clip(for text: String, voice: Voice) async throws -> AudioCache.Clip {
        try await clip(for: text, engine: .espeak(voice))
    }

    /// The clip for `text` read by `engine`, from the cache or synthesised now.
    func clip(for text: String, engine spoken: SpokenEngine, retried: Bool = false) async throws -> AudioCache.Clip {
        guard let version = engine.version else {
            throw NarrationError(.engineUnavailable("espeak-ng did not start"))
        }
        let key = try await spoken.cacheKey(text: text, espeakVersion: version)
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
                let made = try await Self.synthesize(text, engine: spoken, espeak: engine)
                metrics.sentenceSynthesized()
                return try cache.store(made.audio.bytes, durationMs: made.audio.durationMs, words: made.timings, key: key)
            }
            running[key] = task
            return .inFlight(task)
        }
        switch source {
        case .cached(let clip):
            metrics.audioCacheHit()
            return clip
        case .inFlight(let task):
            // Read ahead for a room still in its lobby, and now a room waits for it.
            guard case .natural(let voice, let piper, _, _, true) = spoken else { return try await task.value }
            piper.promote(PiperText.spoken(text), voice: voice.file.name)
            do {
                return try await task.value
            } catch let failure as NaturalVoiceFailure where failure.failure == .queueFull && !retried {
                // The read-ahead request gave its place to a room that waits before it could be promoted:
                // asked again, as urgent (a full queue of rooms that wait refuses it again).
                return try await clip(for: text, engine: spoken, retried: true)
            }
        }
    }

    /// Reads `text` with `voice` now, past the cache (`storycircle voices --say`): what a room's clip
    /// would hold, with the PCM it was encoded from.
    public func speak(_ text: String, voice: String, rate: Int = 150, pitch: Int = 50) async throws -> Synthesis {
        switch voices.choose(voice) {
        case .failure(let refusal):
            throw refusal
        case .success(.espeak(let name)):
            return try await Self.synthesize(text, engine: .espeak(Voice(name: name, rate: rate, pitch: pitch)), espeak: engine)
        case .success(.natural(let natural)):
            guard let piper else { throw NaturalVoiceFailure(failure: .unavailable(voices.piperMissing ?? "Piper is not installed")) }
            return try await Self.synthesize(text, engine: .natural(natural, piper, rate: rate, pitch: pitch, urgent: true), espeak: engine)
        }
    }

    /// A sentence read, encoded and timed, for the cache and for `storycircle voices --say`.
    public struct Synthesis: Sendable {
        public var spoken: SpokenText
        public var audio: MP3Audio
        /// Word timings as the MP3 plays (its leading encoder delay included).
        public var timings: [WordTiming]
        /// For a natural voice: where (in the PCM) its estimated timings were anchored.
        public var anchorsMs: [Int] = []
    }

    /// Reads `text` with `engine`: PCM and word timings (espeak-ng's own, or estimated from them for a
    /// natural voice), then MP3.
    static func synthesize(_ text: String, engine spoken: SpokenEngine, espeak: SpeechEngine) async throws -> Synthesis {
        do {
            var speech: SpokenText
            var anchors: [Int] = []
            switch spoken {
            case .espeak(let voice):
                speech = try await espeak.synthesize(text, voice: voice)
            case .natural(let voice, let piper, let rate, let pitch, let urgent):
                // espeak-ng's reading (the timing reference, a few ms on its own thread) runs while Piper reads.
                async let reference = espeak.synthesize(text, voice: Voice(name: voice.file.espeakVoice, rate: rate, pitch: pitch))
                speech = try await Self.natural(text, voice: voice, piper: piper, rate: rate, urgent: urgent)
                (speech.words, anchors) = WordTimingEstimate.estimateWithAnchors(reference: try await reference, target: speech)
            }
            let audio = try MP3Encoder.encode(speech.samples, sampleRate: speech.sampleRate)
            let timings = speech.words.map { WordTiming(at: $0.startMs + audio.leadingDelayMs, start: $0.offset, length: $0.length) }
            return Synthesis(spoken: speech, audio: audio, timings: timings, anchorsMs: anchors)
        } catch let error as SpeechError {
            throw NarrationError(error)
        }
    }

    /// `text` from the Piper worker; a worker that died or timed out is given a second chance (it is
    /// started again), anything else is the natural voice failing for this story.
    static func natural(_ text: String, voice: VoiceCatalog.NaturalVoice, piper: PiperWorker, rate: Int, urgent: Bool) async throws -> SpokenText {
        // Piper's speed is a length scale; espeak-ng's default rate, 150 words per minute, is Piper's 1.0.
        let lengthScale = min(2.0, max(0.5, 150.0 / Double(max(rate, 1))))
        var attempts = 0
        while true {
            attempts += 1
            switch await piper.synthesize(PiperText.spoken(text), voice: voice.file.name, lengthScale: lengthScale, urgent: urgent) {
            case .success(let spoken):
                return spoken
            case .failure(let failure):
                let worthRetrying = failure == .workerDied || failure == .timedOut
                guard worthRetrying, attempts < 2, !piper.status.givenUp else { throw NaturalVoiceFailure(failure: failure) }
            }
        }
    }

    /// The read-ahead tasks, owned: each kept until it ends, all cancelled and awaited by `stop`; one
    /// wanted per room (a room's earlier one is cancelled, and kept until it ends).
    struct ReadingAhead {
        var running: [UUID: Task<Void, Never>] = [:]
        /// Ended before `keep` could record them.
        var done: Set<UUID> = []
        /// Each room's current read-ahead.
        var rooms: [String: UUID] = [:]
        var stopped = false

        enum Kept {
            /// Stopped: the caller cancels the task.
            case refused
            /// The room's earlier read-ahead, still running, for the caller to cancel.
            case replacing(Task<Void, Never>?)
        }

        mutating func keep(_ task: Task<Void, Never>, id: UUID, room: String) -> Kept {
            guard !stopped else { return .refused }
            let earlier = rooms.removeValue(forKey: room).flatMap { running[$0] }
            // One that has already ended is the room's no longer.
            if done.remove(id) == nil {
                running[id] = task
                rooms[room] = id
            }
            return .replacing(earlier)
        }

        /// The room reads nothing ahead any more (its new voice is not one to read ahead with, or it has
        /// finished).
        mutating func forget(room: String) -> Task<Void, Never>? {
            rooms.removeValue(forKey: room).flatMap { running[$0] }
        }

        mutating func finished(_ id: UUID) {
            if running.removeValue(forKey: id) == nil { done.insert(id) }
            if let room = rooms.first(where: { $0.value == id })?.key { rooms[room] = nil }
        }

        mutating func stop() -> [Task<Void, Never>] {
            stopped = true
            rooms = [:]
            defer { running = [:] }
            return Array(running.values)
        }
    }

    private enum ClipSource {
        case cached(AudioCache.Clip)
        case inFlight(Task<AudioCache.Clip, any Error>)
    }
}

/// Which engine reads a story, with everything that changes the sound.
enum SpokenEngine: Sendable {
    case espeak(Voice)
    /// `urgent`: a room waits for it (false: read ahead while the room is in its lobby).
    case natural(VoiceCatalog.NaturalVoice, PiperWorker, rate: Int, pitch: Int, urgent: Bool)

    /// espeak-ng clips keep their keys from before there were two engines; a natural voice's key names
    /// Piper and the model file's hash (its timings also depend on espeak-ng, so its version too).
    func cacheKey(text: String, espeakVersion: String) async throws -> String {
        switch self {
        case .espeak(let voice):
            // A text with emoji is read without them now: its older clips (emoji read by name) are not replayed.
            let version = Pictographs.present(in: text) ? "\(espeakVersion)/\(Pictographs.version)" : espeakVersion
            return AudioCache.key(text: text, voice: voice.name, rate: voice.rate, pitch: voice.pitch, engineVersion: version)
        case .natural(let voice, _, let rate, let pitch, _):
            guard let digest = await voice.digest.value() else {
                throw NaturalVoiceFailure(failure: .unavailable("its model file cannot be read"))
            }
            let textVersion = Pictographs.present(in: text) ? "\(PiperText.version)/\(Pictographs.version)" : PiperText.version
            return AudioCache.key(text: text, voice: voice.id, rate: rate, pitch: pitch, engineVersion: "piper-1.8/\(textVersion)/\(digest)/espeak-ng-\(espeakVersion)")
        }
    }
}

/// The natural voice failed for a sentence: the story is read by espeak-ng instead.
public struct NaturalVoiceFailure: Error, CustomStringConvertible {
    public var failure: PiperWorkerPolicy.Failure
    public var description: String { failure.description }
}

/// A speech failure, with the message the teacher reads (children and the projector get a kind sentence
/// from the room instead, with no voice names or program names in it).
public struct NarrationError: FriendlyError, CustomStringConvertible {
    public let underlying: SpeechError

    public init(_ underlying: SpeechError) {
        self.underlying = underlying
    }

    public var narrationProblem: NarrationProblem {
        switch underlying {
        case .unknownVoice(let voice):
            NarrationProblem(.voiceNotInstalled, "The voice \"\(voice)\" is not installed on this computer. Choose another voice in Settings, then press Try again.", params: ["voice": voice])
        case .engineUnavailable:
            NarrationProblem(.engineUnavailable, "The reading voice (espeak-ng) is not installed on this computer. Install it, then press Try again, or skip to the quiz.")
        case .synthesisFailed, .encodingFailed:
            NarrationProblem(.synthesisFailed, "The story could not be read aloud. Press Try again, or skip to the quiz.")
        }
    }

    public var description: String { underlying.description }
}
