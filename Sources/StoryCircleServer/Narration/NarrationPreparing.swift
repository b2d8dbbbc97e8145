import StoryCircleCore

/// Prepares a room's narration: synthesises (or finds cached) audio for every sentence and reports word
/// timings and durations. `SpeechNarrator` does it with espeak-ng; tests use instant fakes.
public protocol NarrationPreparing: Sendable {
    /// Prepares `request`, calling `progress(ready, total)` as clips become ready.
    func prepare(_ request: NarrationRequest, progress: @escaping @Sendable (_ ready: Int, _ total: Int) -> Void) async throws -> NarrationPlan

    /// Prepares `request`, reporting each step (a narrator that streams reports each sentence as it is
    /// ready, so the story starts before the last one is synthesised).
    func prepare(_ request: NarrationRequest, report: @escaping @Sendable (NarrationStep) -> Void) async throws -> NarrationPlan

    /// Why `command` cannot be carried out here (it sets a voice this node cannot read), or nil.
    func refusal(for command: TeacherCommand) -> RoomError?

    /// Reads `request`'s story ahead for `room`, in the background, for a preparation to find in its
    /// cache; a later read-ahead for the same room replaces it. Nothing waits for it.
    func readAhead(_ request: NarrationRequest, room: String)

    /// `room` has finished: what it still reads ahead is wanted no more.
    func stopReadingAhead(room: String)
}

extension NarrationPreparing {
    /// Narrators that do not stream report progress only; the story starts when all of it is ready.
    public func prepare(_ request: NarrationRequest, report: @escaping @Sendable (NarrationStep) -> Void) async throws -> NarrationPlan {
        try await prepare(request) { ready, total in report(.progress(ready: ready, total: total)) }
    }

    /// Narrators that read any voice (the tests' fakes) refuse nothing.
    public func refusal(for command: TeacherCommand) -> RoomError? { nil }

    /// Narrators with no cache to fill read nothing ahead.
    public func readAhead(_ request: NarrationRequest, room: String) {}

    public func stopReadingAhead(room: String) {}
}

/// An error a teacher can act on: why (a code the teacher's page words from its catalog, with its
/// parameters) and an English sentence saying what to do, for the API, the CLI and logs. The room shows
/// it in the teacher's error state; children never see it.
public protocol FriendlyError: Error {
    var narrationProblem: NarrationProblem { get }
}
