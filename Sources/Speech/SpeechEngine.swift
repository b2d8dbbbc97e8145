import CEspeakNG
import Foundation
import Locking

/// espeak-ng, driven from one dedicated thread.
///
/// espeak-ng keeps global state and is not re-entrant, so every call into it runs on `thread`, one job at a
/// time; callers await the result. There is one engine per process (`shared`). It synthesises about a
/// hundred times faster than real time here, so one thread keeps up with many rooms (and the audio cache
/// means a story is synthesised once).
///
/// Sendable: the job queue and the startup result are behind locks, and espeak-ng itself is only
/// touched on `thread`.
public final class SpeechEngine: Sendable {
    public static let shared = SpeechEngine()

    private let jobs = LockedCondition<[@Sendable () -> Void]>([])
    /// `nil` until the engine thread has tried to start espeak-ng.
    private let startup = LockedCondition<Result<(version: String, sampleRate: Int), SpeechError>?>(nil)

    private init() {
        let thread = Thread { [self] in self.serve() }
        thread.name = "espeak-ng"
        thread.start()
        startup.waitUntil({ $0 != nil }, then: { _ in })
    }

    /// The espeak-ng version ("1.51"), part of audio cache keys; `nil` when the engine could not start.
    public var version: String? {
        try? startup.withLock { $0 }?.get().version
    }

    /// Speaks `text` into PCM with word timings.
    public func synthesize(_ text: String, voice: Voice) async throws(SpeechError) -> SpokenText {
        let result: Result<SpokenText, SpeechError> = await withCheckedContinuation { continuation in
            enqueue { [self] in continuation.resume(returning: self.synthesizeOnThread(text, voice: voice)) }
        }
        return try result.get()
    }

    /// Whether espeak-ng knows `voice` (it is selected on the engine thread and reported back).
    public func hasVoice(_ name: String) async -> Bool {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: Self.selectVoice(name)) }
        }
    }

    /// Every voice espeak-ng has, by the language code a story names it with ("en-us", "es").
    public func voices() async -> [EspeakVoice] {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: Self.listVoices()) }
        }
    }

    /// The variants a voice name may add after `+` ("en+m3"), as espeak-ng names their files.
    public func variants() async -> [String] {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: Self.listVariants()) }
        }
    }

    // MARK: - The engine thread

    /// Engine thread only. Variants are listed as voices of the language "variant", identified `!v/NAME`.
    private static func listVariants() -> [String] {
        guard case .success? = SpeechEngine.shared.startupResult else { return [] }
        var spec = espeak_VOICE()
        let list: UnsafeMutablePointer<UnsafePointer<espeak_VOICE>?>? = "variant".withCString { pointer in
            spec.languages = pointer
            return espeak_ListVoices(&spec)
        }
        guard let list else { return [] }
        var names: [String] = []
        var index = 0
        while let voice = list[index] {
            index += 1
            guard let identifier = voice.pointee.identifier.map({ String(cString: $0) }), identifier.hasPrefix("!v/") else { continue }
            names.append(String(identifier.dropFirst(3)))
        }
        return names.sorted()
    }

    /// Engine thread only. A voice's `languages` is a list of (priority byte, NUL-terminated language),
    /// ended by a zero priority; the first is the one it is chosen by.
    private static func listVoices() -> [EspeakVoice] {
        guard case .success? = SpeechEngine.shared.startupResult, let list = espeak_ListVoices(nil) else { return [] }
        var voices: [EspeakVoice] = []
        var index = 0
        while let voice = list[index] {
            index += 1
            guard let languages = voice.pointee.languages, languages.pointee != 0 else { continue }
            let language = String(cString: languages + 1)
            let name = voice.pointee.name.map { String(cString: $0) } ?? language
            voices.append(EspeakVoice(language: language, name: name))
        }
        return voices.sorted { $0.language < $1.language }
    }

    private var startupResult: Result<(version: String, sampleRate: Int), SpeechError>? {
        startup.withLock { $0 }
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        jobs.withLockAndWake { $0.append(job) }
    }

    private func serve() {
        let result = Self.initialize()
        startup.withLockAndWake { $0 = result }
        while true {
            let job = jobs.waitUntil({ !$0.isEmpty }, then: { $0.removeFirst() })
            job()
        }
    }

    private static func initialize() -> Result<(version: String, sampleRate: Int), SpeechError> {
        espeak_ng_InitializePath(nil)
        // The espeak-ng API reports missing data as a status; only the old `espeak_Initialize` wrapper
        // calls exit() on it (unless given espeakINITIALIZE_DONT_EXIT), so a broken install cannot end
        // the server here: `startup` holds the failure and every synthesis reports it.
        var context: espeak_ng_ERROR_CONTEXT?
        let status = espeak_ng_Initialize(&context)
        espeak_ng_ClearErrorContext(&context)
        if let error = Self.error(status, as: SpeechError.engineUnavailable) { return .failure(error) }
        if let error = Self.error(espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, 0, nil), as: SpeechError.engineUnavailable) {
            return .failure(error)
        }
        espeak_SetSynthCallback(speechEngineCallback)
        let version = espeak_Info(nil).map { String(cString: $0) } ?? "unknown"
        return .success((version, Int(espeak_ng_GetSampleRate())))
    }

    private func synthesizeOnThread(_ text: String, voice: Voice) -> Result<SpokenText, SpeechError> {
        let sampleRate: Int
        switch startup.withLock({ $0 }) {
        case .success(let engine)?: sampleRate = engine.sampleRate
        case .failure(let error)?: return .failure(error)
        case nil: return .failure(.engineUnavailable("not started"))
        }
        guard Self.selectVoice(voice.name) else {
            return .failure(.unknownVoice(voice.name))
        }
        espeak_ng_SetParameter(espeakRATE, Int32(voice.rate), 0)
        espeak_ng_SetParameter(espeakPITCH, Int32(voice.pitch), 0)

        let collector = SynthesisCollector()
        let userData = Unmanaged.passRetained(collector)
        defer { userData.release() }
        // Emoji are not read by name; the text spoken has as many scalars as `text`, so the word
        // positions espeak-ng reports below still point into `text`.
        var bytes = Array(Pictographs.silenced(text).utf8CString)
        let status = bytes.withUnsafeMutableBytes { buffer in
            espeak_ng_Synthesize(buffer.baseAddress, buffer.count, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil, userData.toOpaque())
        }
        if let error = Self.error(status, as: SpeechError.synthesisFailed) { return .failure(error) }

        let offsets = Self.utf16Offsets(of: text)
        let words = collector.words.map { word in
            // espeak-ng counts 1-based Unicode scalars; convert to 0-based UTF-16 offsets.
            let first = min(max(word.position - 1, 0), offsets.count - 1)
            let last = min(max(word.position - 1 + word.length, 0), offsets.count - 1)
            return SpokenText.Word(startMs: word.ms, offset: offsets[first], length: offsets[last] - offsets[first])
        }
        return .success(SpokenText(samples: collector.samples, sampleRate: sampleRate, words: words))
    }

    /// Selects a voice by name ("en-us", "gmw/en", "en+f3"), or else by language ("en-gb", "es-419"), as
    /// the espeak-ng command does: some languages have no voice file of their own name. Engine thread only.
    static func selectVoice(_ name: String) -> Bool {
        if espeak_ng_SetVoiceByName(name) == ENS_OK { return true }
        let language = String(name.prefix { $0 != "+" })
        var spec = espeak_VOICE()
        return language.withCString { pointer in
            spec.languages = pointer
            return espeak_ng_SetVoiceByProperties(&spec) == ENS_OK
        }
    }

    /// For each Unicode scalar index, its UTF-16 offset; one extra entry for the end.
    static func utf16Offsets(of text: String) -> [Int] {
        var offsets: [Int] = []
        var offset = 0
        for scalar in text.unicodeScalars {
            offsets.append(offset)
            offset += scalar.utf16.count
        }
        offsets.append(offset)
        return offsets
    }

    /// The one helper that turns an espeak-ng status into a Swift error.
    static func error(_ status: espeak_ng_STATUS, as make: (String) -> SpeechError) -> SpeechError? {
        guard status != ENS_OK else { return nil }
        var buffer = [CChar](repeating: 0, count: 256)
        espeak_ng_GetStatusCodeMessage(status, &buffer, buffer.count)
        return make(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// Where the synthesis callback puts samples and word events for the text being spoken; reached through
/// espeak-ng's per-call user data.
final class SynthesisCollector {
    var samples: [Int16] = []
    var words: [(position: Int, length: Int, ms: Int)] = []
}

/// espeak-ng's synthesis callback: a top-level function, as C needs. Most calls carry audio and no event
/// but the list terminator, which still carries the call's user data: that is how the collector is found.
func speechEngineCallback(_ wave: UnsafeMutablePointer<Int16>?, _ count: Int32, _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard var event = events else { return 0 }
    var collector: SynthesisCollector?
    while true {
        if collector == nil, let userData = event.pointee.user_data {
            collector = Unmanaged<SynthesisCollector>.fromOpaque(userData).takeUnretainedValue()
        }
        if event.pointee.type == espeakEVENT_LIST_TERMINATED { break }
        // espeak-ng sometimes adds a word of length 0 near the end of a text, depending on what it spoke
        // before; its position means nothing (it would send the highlight back to the first word).
        if event.pointee.type == espeakEVENT_WORD, event.pointee.length > 0 {
            collector?.words.append((Int(event.pointee.text_position), Int(event.pointee.length), Int(event.pointee.audio_position)))
        }
        event += 1
    }
    if let wave, count > 0, let collector {
        collector.samples.append(contentsOf: UnsafeBufferPointer(start: wave, count: Int(count)))
    }
    return 0
}
