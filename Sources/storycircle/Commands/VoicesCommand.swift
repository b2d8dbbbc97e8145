import Foundation
import Speech
import StoryCircleApp
import StoryCircleCore
import StoryCircleServer

/// `voices`: every voice this computer can read a story with, natural (Piper) and espeak-ng, with its
/// language; the voice files found but not offered, and why. `--say` reads lines of text with `--voice`
/// into `--out` (WAV, MP3 and word timings per line) and prints how long each took.
struct VoicesCommand: ParsableCommand {
    static let json = CommandSpec.Option(long: "json", valueName: nil, help: "Print JSON instead of a table.")
    static let say = CommandSpec.Option(long: "say", valueName: "text", help: "Read this text aloud (one clip per line) instead of listing.")
    static let voice = CommandSpec.Option(long: "voice", valueName: "voice", help: "The voice --say reads with.", defaultValue: "en")
    static let out = CommandSpec.Option(long: "out", valueName: "folder", help: "Where --say writes NNN.wav, NNN.mp3 and NNN.json.", defaultValue: ".")

    var configFile: String?
    var asJSON: Bool
    var text: String?
    var voice: String
    var out: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        configFile = arguments.value(of: ServerOptions.config)
        asJSON = arguments.isSet(Self.json)
        text = arguments.value(of: Self.say)
        voice = arguments.value(of: Self.voice) ?? "en"
        out = arguments.value(of: Self.out) ?? "."
    }

    func run() async throws -> Int32 {
        let configuration = try Self.configuration(file: configFile)
        let catalog = await Self.catalog(configuration)
        if let text {
            return try await speak(text, catalog: catalog, configuration: configuration)
        }
        if asJSON {
            var digests: [String: String] = [:]
            for voice in catalog.natural { digests[voice.id] = await voice.digest.value() }
            Output.line(Self.json(catalog, digests: digests))
            return ExitCode.success
        }
        Output.line("Natural voices (Piper), chosen in a story as \"voice\": \"piper:NAME\":")
        if catalog.natural.isEmpty {
            Output.line("  none\(catalog.piperMissing.map { " (\($0))" } ?? "")")
        }
        for voice in catalog.natural {
            Output.line("  \(voice.id.padding(toLength: 30, withPad: " ", startingAt: 0)) \(voice.file.language.padding(toLength: 8, withPad: " ", startingAt: 0)) \(voice.file.sampleRate) Hz  \(voice.file.modelPath)")
        }
        for problem in catalog.problems {
            Output.line("  not offered: \(problem.path): \(problem.reason)")
        }
        Output.line("espeak-ng voices, chosen as \"voice\": \"LANGUAGE\":")
        for voice in catalog.espeak {
            Output.line("  \(voice.language.padding(toLength: 30, withPad: " ", startingAt: 0)) \(voice.name)")
        }
        return ExitCode.success
    }

    static func configuration(file: String?) throws(CommandFailure) -> ServerConfiguration {
        let file = file ?? (FileManager.default.fileExists(atPath: ServerOptions.defaultConfigFile) ? ServerOptions.defaultConfigFile : nil)
        do {
            return try ServerConfiguration.load(file: file)
        } catch {
            throw CommandFailure("configuration: \(error.description)")
        }
    }

    static func catalog(_ configuration: ServerConfiguration) async -> VoiceCatalog {
        await VoiceCatalog.discoverOffPool(
            configuration, espeak: await SpeechEngine.shared.voices(), variants: await SpeechEngine.shared.variants(),
            hashCache: URL(fileURLWithPath: configuration.files.audioCacheDirectory).appendingPathComponent("voice-hashes.json")
        )
    }

    static func json(_ catalog: VoiceCatalog, digests: [String: String]) -> String {
        let object: [String: Any] = [
            "natural": catalog.natural.map { voice -> [String: Any] in
                ["voice": voice.id, "language": voice.file.language, "sampleRate": voice.file.sampleRate, "model": voice.file.modelPath,
                 "sha256": digests[voice.id] as Any, "espeakVoice": voice.file.espeakVoice]
            },
            "espeak": catalog.espeak.map { ["voice": $0.language, "name": $0.name] },
            "problems": catalog.problems.map { ["path": $0.path, "reason": $0.reason] },
            "piperMissing": catalog.piperMissing as Any,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func speak(_ text: String, catalog: VoiceCatalog, configuration: ServerConfiguration) async throws -> Int32 {
        if case .failure(let refusal) = catalog.choose(voice) { throw CommandFailure(refusal.description) }
        var piper: PiperWorker?
        if let install = catalog.piper, !catalog.natural.isEmpty {
            piper = PiperWorker(configuration: .init(python: install.python, script: install.worker, voices: catalog.natural.map { ($0.file.name, $0.file.modelPath) }))
        }
        let cache = try AudioCache(directory: FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-say-\(getpid())"), maxBytes: 1)
        let narrator = SpeechNarrator(cache: cache, metrics: ServerMetrics(), voices: catalog, piper: piper)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let clock = ContinuousClock()
        let started = clock.now
        for (index, line) in lines.enumerated() {
            let before = clock.now
            let made: SpeechNarrator.Synthesis
            do {
                made = try await narrator.speak(line, voice: voice)
            } catch {
                throw CommandFailure("\(voice) could not read line \(index + 1): \(error)")
            }
            let elapsed = before.duration(to: clock.now)
            let name = String(format: "%03d", index + 1)
            let folder = URL(fileURLWithPath: out)
            try Data(WAVEncoder.encode(made.spoken.samples, sampleRate: made.spoken.sampleRate)).write(to: folder.appendingPathComponent("\(name).wav"))
            try Data(made.audio.bytes).write(to: folder.appendingPathComponent("\(name).mp3"))
            let metadata: [String: Any] = [
                "text": line, "voice": voice, "sampleRate": made.spoken.sampleRate, "wavDurationMs": made.spoken.durationMs,
                "mp3DurationMs": made.audio.durationMs, "leadingDelayMs": made.audio.leadingDelayMs,
                "synthesisMs": Self.milliseconds(elapsed), "anchorsMs": made.anchorsMs,
                "words": made.timings.map { ["at": $0.at, "start": $0.start, "length": $0.length] },
            ]
            try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys]).write(to: folder.appendingPathComponent("\(name).json"))
            Output.line("\(name): \(made.spoken.durationMs) ms of audio in \(Self.milliseconds(elapsed)) ms")
        }
        Output.line("total: \(lines.count) clips in \(Self.milliseconds(started.duration(to: clock.now))) ms")
        try? FileManager.default.removeItem(at: cache.directory)
        return ExitCode.success
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
