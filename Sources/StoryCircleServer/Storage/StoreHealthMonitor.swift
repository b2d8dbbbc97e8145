import Locking
import StoryCircleCore

/// Watches whether the store can write, and says so when that changes: to the rooms (for their teachers'
/// banner), and in the log.
///
/// Outboxes poke it when a record fails and when one is stored again. While the store is failing it also
/// probes it every `probeIntervalMs` with a real write, so the banner and `/healthz` notice that space came
/// back without waiting for a room to write something.
final class StoreHealthMonitor: Sendable {
    private enum Tick {
        case poke, probe
    }

    private let store: any RoomStore
    private let clock: any ServerClock
    private let probeIntervalMs: Int
    private let logger: StoryCircleLog
    private let ticks: AsyncStream<Tick>
    private let sink: AsyncStream<Tick>.Continuation

    init(store: any RoomStore, clock: any ServerClock, probeIntervalMs: Int = 1_000, logger: StoryCircleLog) {
        self.store = store
        self.clock = clock
        self.probeIntervalMs = probeIntervalMs
        self.logger = logger
        (ticks, sink) = AsyncStream.makeStream(of: Tick.self)
    }

    /// Something was written or failed to be: look at the store's health now. Callable from any thread.
    func poke() {
        sink.yield(.poke)
    }

    func stop() {
        sink.finish()
    }

    /// Runs until `stop()`, calling `changed` with each new health (a store is taken to work at first:
    /// opening it wrote to it).
    func run(_ changed: @escaping @Sendable (StoreHealth) async -> Void) async {
        var published = StoreHealth.ok
        var prober: Task<Void, Never>?
        defer { prober?.cancel() }
        for await tick in ticks {
            var health = store.health
            if case .probe = tick, !health.isOK {
                health = await store.probe()
            }
            guard health.isOK != published.isOK || health.reason != published.reason else { continue }
            let failedSince: ServerTime? = if case .failing(let since, _) = published { since } else { nil }
            published = health
            switch health {
            case .ok:
                prober?.cancel()
                prober = nil
                logger.notice("Storage works again", ["failed.seconds": String(failedSince.map { (clock.now() - $0) / 1_000 } ?? 0)])
            case .failing(_, let reason):
                logger.error("Storage is failing: answers are not acknowledged and joins get no token until it works again", ["error": reason])
                if prober == nil {
                    prober = Task { [clock, probeIntervalMs, sink] in
                        while !Task.isCancelled {
                            do { try await clock.sleep(until: clock.now() + probeIntervalMs) } catch { return }
                            sink.yield(.probe)
                        }
                    }
                }
            }
            await changed(health)
        }
    }
}
