/// Why a room's narration could not be prepared, for the teacher: a stable `reason` with the parameters
/// a page words it with (`params`, absent when there are none), and an English sentence for the API, the
/// CLI and logs. Children and the projector are never sent it (they get kind words from the catalog).
public struct NarrationProblem: Sendable, Equatable, Codable {
    public enum Reason: String, Sendable, Equatable, Codable, CaseIterable {
        /// `params.voice`: the voice this computer does not have.
        case voiceNotInstalled = "voice_not_installed"
        /// espeak-ng itself could not start (not installed, its data missing).
        case engineUnavailable = "engine_unavailable"
        /// Speech or its encoding failed for a sentence.
        case synthesisFailed = "synthesis_failed"
        /// The server restarted while the narration was being prepared, or after it had failed.
        case notReadyAfterRestart = "not_ready_after_restart"
        /// Anything else: the message says what.
        case unknown
    }

    public var reason: Reason
    public var params: [String: String]?
    public var message: String

    public init(_ reason: Reason, _ message: String, params: [String: String]? = nil) {
        self.reason = reason
        self.message = message
        self.params = params
    }

    public static let notReadyAfterRestart = NarrationProblem(
        .notReadyAfterRestart, "The narration was not ready when the server restarted. Press retry to prepare it again.")
}
