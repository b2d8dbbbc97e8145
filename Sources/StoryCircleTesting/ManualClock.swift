import StoryCircleCore
import StoryCircleServer

/// A server clock that moves only when told to: `advance(to:)` wakes exactly the sleepers whose time has
/// come, so a test decides when each timer fires instead of sleeping and hoping.
public final class ManualClock: ServerClock {
    private let timeline: ManualTimeline<ServerTime>

    public init(now: ServerTime = ServerTime(milliseconds: 1_700_000_000_000)) {
        timeline = ManualTimeline(now: now)
    }

    public func now() -> ServerTime {
        timeline.now
    }

    public func sleep(until deadline: ServerTime) async throws {
        try await timeline.sleep(until: deadline)
    }

    /// Moves time to `time`, waking every sleeper due by then.
    public func advance(to time: ServerTime) {
        timeline.advance(to: time)
    }

    public func advance(by milliseconds: Int) {
        timeline.advance(to: now() + milliseconds)
    }

    /// Returns once some task is asleep on this clock.
    public func untilSomeoneSleeps() async {
        await timeline.untilSomeoneSleeps()
    }
}
