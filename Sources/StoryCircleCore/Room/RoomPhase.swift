/// Where a room is in its lifecycle (see `../shared/DESIGN.md`, "Room lifecycle").
public enum RoomPhase: Sendable, Equatable {
    case lobby
    /// Synthesising the narration; `ready` of `total` clips are done.
    case preparing(ready: Int, total: Int)
    /// Narration could not be prepared; the teacher can retry (or skip to the quiz).
    case failed(NarrationProblem)
    case narrating(NarrationRun)
    case question(QuestionRun)
    case reveal(question: Int)
    case finished

    public var name: PhaseName {
        switch self {
        case .lobby: .lobby
        case .preparing: .preparing
        case .failed: .error
        case .narrating: .narrating
        case .question: .question
        case .reveal: .reveal
        case .finished: .finished
        }
    }

    public var isPaused: Bool {
        switch self {
        case .narrating(let run): run.pausedAt != nil
        case .question(let run): run.pausedAt != nil
        default: false
        }
    }
}

/// The narration in progress: `sentence` started (or starts) at `startedAt`. `waiting`: it has ended and
/// the next sentence is not synthesised yet, so the story holds at this boundary until it is.
public struct NarrationRun: Sendable, Equatable {
    public var sentence: Int
    public var startedAt: ServerTime
    public var pausedAt: ServerTime?
    public var waiting = false
}

/// An open question. A pause moves the deadline (and the opening, if it had not happened yet) by the length
/// of the pause, and the time spent paused after opening does not count against anyone's speed.
public struct QuestionRun: Sendable, Equatable {
    public var index: Int
    public var opensAt: ServerTime
    public var deadline: ServerTime?
    public var timeLimitMs: Int?
    public var pausedAt: ServerTime?
    public var pausedMs: Int = 0
}
