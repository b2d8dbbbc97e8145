import Foundation
import StoryCircleCore
import TransportCore

/// The server's clock: the only source of "now" for rooms, and the only way they wait. Tests inject a
/// `ManualClock` so time moves only when they say.
public protocol ServerClock: Sendable {
    func now() -> ServerTime
    /// Suspends until `deadline` (or returns at once if it has passed); throws if the task is cancelled.
    func sleep(until deadline: ServerTime) async throws
    /// Calls `fire` once `deadline` has come, unless the timer is cancelled first. A cancel that crosses the
    /// firing may not stop it: callers ignore a stale firing (a room by its generation, the outbox by its
    /// state). By default a task that sleeps on this clock.
    func schedule(at deadline: ServerTime, _ fire: @escaping @Sendable () -> Void) -> any ServerTimer
}

/// A timer `ServerClock.schedule` set.
public protocol ServerTimer: Sendable {
    func cancel()
}

extension Task: ServerTimer where Success == Void, Failure == Never {}

extension LoopTimer: ServerTimer {}

extension ServerClock {
    public func schedule(at deadline: ServerTime, _ fire: @escaping @Sendable () -> Void) -> any ServerTimer {
        Task {
            do {
                try await sleep(until: deadline)
            } catch {
                return
            }
            fire()
        }
    }
}

/// Wall-clock time in milliseconds since the epoch, which browsers can compare with `Date.now()` after
/// correcting by their measured offset.
public struct SystemClock: ServerClock {
    public init() {}

    public func now() -> ServerTime {
        ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
    }

    public func sleep(until deadline: ServerTime) async throws {
        let remaining = deadline - now()
        if remaining > 0 {
            try await Task.sleep(for: .milliseconds(remaining))
        }
    }
}

/// The system's time, with timers fired by the loop rooms run on (`LoopExecutor`, in `TransportCore`): a room's timer fires on
/// its own thread, with no task, no Dispatch timer thread and no hop in between.
public struct LoopClock: ServerClock {
    private let system = SystemClock()
    private let loop: LoopExecutor

    public init(loop: LoopExecutor) {
        self.loop = loop
    }

    public func now() -> ServerTime {
        system.now()
    }

    public func sleep(until deadline: ServerTime) async throws {
        try await system.sleep(until: deadline)
    }

    public func schedule(at deadline: ServerTime, _ fire: @escaping @Sendable () -> Void) -> any ServerTimer {
        loop.schedule(afterMilliseconds: Int64(deadline - now()), fire)
    }
}
