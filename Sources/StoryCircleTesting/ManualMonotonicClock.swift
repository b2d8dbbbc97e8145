import StoryCircleServer

/// The monotonic clock leases run on, moved only when told to: `advance(by:)` wakes exactly the sleepers
/// whose time has come, so a test decides when a renewal happens. It starts at the real monotonic now,
/// since the stores compare lease deadlines with that clock.
public final class ManualMonotonicClock: MonotonicClock {
    private let timeline: ManualTimeline<ContinuousClock.Instant>

    public init(now: ContinuousClock.Instant = .now) {
        timeline = ManualTimeline(now: now)
    }

    public var now: ContinuousClock.Instant {
        timeline.now
    }

    public func sleep(for duration: Duration) async throws {
        try await timeline.sleep(until: timeline.now + duration)
    }

    /// Moves time forward by `duration`, waking every sleeper due by then.
    public func advance(by duration: Duration) {
        timeline.advance(to: timeline.now + duration)
    }

    /// Returns once some task is asleep on this clock (a test waits for a loop to be asleep before it moves
    /// time, or the move would be lost on it).
    public func untilSomeoneSleeps() async {
        await timeline.untilSomeoneSleeps()
    }
}
