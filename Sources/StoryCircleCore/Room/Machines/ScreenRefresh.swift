/// What the screens (dashboards, teachers) still need: one of the machines `RoomState` is composed of.
/// Changes that dashboards show (a join, an answer) are many and quick; a screen gets them coalesced, one
/// update per flush, and at most one flush is pending at a time.
struct ScreenRefresh: Sendable {
    private var dirty = false
    private var flushPending = false

    /// Something the screens show changed. True when a flush must be scheduled (none is pending).
    mutating func markDirty() -> Bool {
        dirty = true
        guard !flushPending else { return false }
        flushPending = true
        return true
    }

    /// The pending flush is due. True when the screens need an update.
    mutating func flush() -> Bool {
        flushPending = false
        defer { dirty = false }
        return dirty
    }

    /// The screens were just sent everything (a reveal carries the whole board): nothing is owed.
    mutating func sentEverything() {
        dirty = false
    }
}
