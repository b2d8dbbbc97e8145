/// Why speech could not be made.
public enum SpeechError: Error, Equatable, Sendable, CustomStringConvertible {
    /// espeak-ng could not start (its data is missing, for example).
    case engineUnavailable(String)
    case unknownVoice(String)
    case synthesisFailed(String)
    case encodingFailed(String)

    public var description: String {
        switch self {
        case .engineUnavailable(let detail): "espeak-ng is not available: \(detail)"
        case .unknownVoice(let voice): "espeak-ng has no voice \"\(voice)\""
        case .synthesisFailed(let detail): "speech synthesis failed: \(detail)"
        case .encodingFailed(let detail): "audio encoding failed: \(detail)"
        }
    }
}
