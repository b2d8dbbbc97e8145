import StoryCircleCore

/// A room's status for the API and the CLI.
public struct RoomReport: Sendable, Codable, Equatable {
    public var code: String
    public var title: String
    public var phase: PhaseName
    public var paused: Bool
    public var locked: Bool
    public var players: Int
    public var connectedPlayers: Int
    public var connections: Int
    public var question: Int?
    public var questionCount: Int
    public var answers: Int?
    /// Why the narration failed, in the error phase.
    public var errorMessage: String?
    /// Its code (`NarrationProblem.Reason`).
    public var errorReason: NarrationProblem.Reason?
    public var settings: RoomSettings
    /// The language the room's screens speak now.
    public var language: String
    public var createdAt: ServerTime
    /// Records waiting to be written; non-zero only for a moment under load.
    public var pendingRecords: Int

    init(state: RoomState, createdAt: ServerTime, pendingRecords: Int) {
        code = state.code.rawValue
        title = state.story.title
        phase = state.phase.name
        paused = state.phase.isPaused
        locked = state.isLocked
        players = state.playerCount
        connectedPlayers = state.connectedPlayerCount
        connections = state.connectionCount
        switch state.phase {
        case .question(let run): question = run.index
        case .reveal(let index): question = index
        default: question = nil
        }
        questionCount = state.story.quiz.questions.count
        answers = state.phase.name == .question ? state.answersToCurrentQuestion : nil
        if case .failed(let problem) = state.phase {
            errorMessage = problem.message
            errorReason = problem.reason
        }
        settings = state.settings
        language = state.language
        self.createdAt = createdAt
        self.pendingRecords = pendingRecords
    }
}
