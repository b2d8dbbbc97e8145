import StoryCircleCore

/// Prepares a room's narration: synthesises (or finds cached) audio for every sentence and reports word
/// timings and durations. `SpeechNarrator` does it with espeak-ng; tests use instant fakes.
public protocol NarrationPreparing: Sendable {
    /// Prepares `request`, calling `progress(ready, total)` as clips become ready.
    func prepare(_ request: NarrationRequest, progress: @escaping @Sendable (_ ready: Int, _ total: Int) -> Void) async throws -> NarrationPlan
}

/// An error whose message is fit for a teacher: what went wrong and what to do. The room shows it in the
/// teacher's error state; children never see it.
public protocol FriendlyError: Error {
    var friendlyMessage: String { get }
}
