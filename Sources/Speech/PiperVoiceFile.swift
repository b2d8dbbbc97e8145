import Foundation

/// A Piper voice on disk (`NAME.onnx` and `NAME.onnx.json` beside it), checked before it is offered: its
/// config must parse and name a language and a sample rate the server can encode, and the model must look
/// like an ONNX file. A voice that fails is not offered; `problem` says why, for the operator.
public struct PiperVoiceFile: Sendable, Equatable {
    /// The file name without `.onnx` ("en_US-joe-medium"); a story chooses it as `piper:<name>`.
    public var name: String
    public var modelPath: String
    /// Piper's language code ("en_US").
    public var language: String
    /// The espeak-ng voice Piper phonemises with ("en-us"): the reference for word timings and the voice
    /// a story falls back to when the worker fails.
    public var espeakVoice: String
    public var sampleRate: Int
    public var modelBytes: Int

    /// Sample rates LAME encodes (MPEG-1, -2 and 2.5).
    public static let sampleRates: Set<Int> = [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000]

    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// Checks the voice whose model is `modelPath`.
    public static func inspect(modelPath: String) -> Result<PiperVoiceFile, Problem> {
        func problem(_ reason: String) -> Result<PiperVoiceFile, Problem> { .failure(Problem(path: modelPath, reason: reason)) }
        let url = URL(fileURLWithPath: modelPath)
        let name = url.deletingPathExtension().lastPathComponent
        guard url.pathExtension == "onnx", !name.isEmpty,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            return problem("a voice's file name must be NAME.onnx, NAME made of letters, digits, '-', '_' and '.'")
        }
        // A school may link its voices in rather than copy them: the file is what the link points at.
        let target = url.resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: target),
              let size = (attributes[.size] as? NSNumber)?.intValue else {
            return problem("the model file cannot be read")
        }
        // An ONNX model is a protobuf ModelProto whose first field is ir_version (field 1, a varint: 0x08);
        // a truncated download or an HTML error page saved under the name fails here, not in the worker.
        guard size >= 1_024, let handle = FileHandle(forReadingAtPath: modelPath) else {
            return problem("the model file is too small to be a voice (\(size) bytes)")
        }
        let head = handle.readData(ofLength: 2)
        try? handle.close()
        guard head.first == 0x08 else { return problem("the model file is not an ONNX model") }
        let configPath = modelPath + ".json"
        guard let data = FileManager.default.contents(atPath: configPath) else {
            return problem("its config \(url.lastPathComponent).json is missing (Piper voices come as NAME.onnx and NAME.onnx.json)")
        }
        guard let config = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return problem("its config \(url.lastPathComponent).json is not valid JSON")
        }
        guard let language = (config["language"] as? [String: Any])?["code"] as? String, !language.isEmpty else {
            return problem("its config names no language (language.code)")
        }
        guard let rate = (config["audio"] as? [String: Any])?["sample_rate"] as? Int, sampleRates.contains(rate) else {
            return problem("its config's sample rate (audio.sample_rate) is missing or not one of \(sampleRates.sorted().map(String.init).joined(separator: ", "))")
        }
        guard let espeak = (config["espeak"] as? [String: Any])?["voice"] as? String, !espeak.isEmpty else {
            return problem("its config names no espeak-ng voice (espeak.voice)")
        }
        return .success(PiperVoiceFile(name: name, modelPath: modelPath, language: language, espeakVoice: espeak, sampleRate: rate, modelBytes: size))
    }

    /// Every `.onnx` file in `directory` (not below it), checked; a missing directory has none.
    public static func scan(directory: String) -> (voices: [PiperVoiceFile], problems: [Problem]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return ([], []) }
        var voices: [PiperVoiceFile] = []
        var problems: [Problem] = []
        for name in names.sorted() where name.hasSuffix(".onnx") {
            switch inspect(modelPath: (directory as NSString).appendingPathComponent(name)) {
            case .success(let voice): voices.append(voice)
            case .failure(let problem): problems.append(problem)
            }
        }
        return (voices, problems)
    }
}
