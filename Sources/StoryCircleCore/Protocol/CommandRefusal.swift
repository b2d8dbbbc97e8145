/// Why a teacher's command cannot be done now: the `problem` parameter of an `invalid_command` refusal
/// (with `command`, the command refused), which the teacher's page words from its catalog
/// (`error.invalid_command.PROBLEM`). Each says what would work instead.
public enum CommandRefusal: String, Sendable, Equatable, CaseIterable {
    case alreadyStarted = "already_started"
    case nothingFailed = "nothing_failed"
    case alreadyPaused = "already_paused"
    case nothingToPause = "nothing_to_pause"
    case notPaused = "not_paused"
    case notNarrating = "not_narrating"
    case noOpenQuestion = "no_open_question"
    case notStarted = "not_started"
    case storyNotOver = "story_not_over"
    case alreadyLocked = "already_locked"
    case notLocked = "not_locked"
    /// A release of a child's name that nobody holds.
    case notTaken = "not_taken"
    case unknownCommand = "unknown_command"

    /// The refusal of `command` for this reason; `message` is the English for the API and the CLI.
    public func error(_ command: String, _ message: String) -> RoomError {
        RoomError(.invalidCommand, message, params: ["problem": rawValue, "command": command])
    }
}
