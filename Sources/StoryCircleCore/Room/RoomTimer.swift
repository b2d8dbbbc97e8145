/// A timer a room asked for. Timers carry the room's epoch at scheduling time; any change of phase, pause
/// or resume moves the epoch on, so a timer that fires late for a moment that no longer exists is ignored
/// rather than cancelled in a race.
public enum RoomTimer: Hashable, Sendable {
    /// Sentence `sentence` starts (when it equals the sentence count, the narration ends).
    case narration(sentence: Int, epoch: Int)
    /// The question's deadline (plus the network grace) has passed.
    case deadline(question: Int, epoch: Int)
    /// Time to send dashboards their coalesced update.
    case flushScreens
    /// The first reconnection grace of a child who left without answering has run out: the open question
    /// may be revealed now if everyone else has answered.
    case reconnectGrace(question: Int, epoch: Int)

    /// Timers in the same slot replace each other in the shell: a room has at most one of each.
    public enum Slot: Hashable, Sendable {
        case narration, deadline, flushScreens, reconnectGrace
    }

    public var slot: Slot {
        switch self {
        case .narration: .narration
        case .deadline: .deadline
        case .flushScreens: .flushScreens
        case .reconnectGrace: .reconnectGrace
        }
    }
}
