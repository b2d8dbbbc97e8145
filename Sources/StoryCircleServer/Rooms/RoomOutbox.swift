import Locking
import StoryCircleCore
import TransportCore

/// The shell of one room's `OutboxState`: it feeds the state the room's decisions and the store's
/// completions, and carries out the actions it returns — records to the store, sends and closes to the
/// transport, the retry timer, the waiters. The rules (what waits for which record, retries, giving up)
/// are all in `OutboxState`.
///
/// Events come from the room's actor and from the store's threads. The state changes under a lock, and its
/// actions are carried out outside it, in the order they were decided: whoever finds no one carrying out
/// actions becomes the carrier and runs every action queued meanwhile (by any thread) before it leaves.
/// So the transport and the store are never called under the lock, and a release on the store's thread can
/// never overtake, nor be overtaken by, what the room decided after it.
final class RoomOutbox: Sendable {
    /// A send or a close, as the room decided it.
    enum Delivery: Sendable {
        /// Frames, each for its connections, in order; `answers` counts the `answer.ack`s among them.
        case send([(OutboundFrame, [UInt64])], answers: Int)
        case close(UInt64, status: UInt16, reason: String)

        var messageCount: Int {
            switch self {
            case .send(let batch, _): batch.count
            case .close: 0
            }
        }
    }

    /// What the state's actions come to once its counts are turned into the deliveries they name.
    private enum Work: Sendable {
        case state(OutboxState.Action)
        case deliver(Delivery)
    }

    private struct Shell: Sendable {
        var state: OutboxState
        /// Deliveries decided and not yet carried out or dropped, oldest first: exactly those the state
        /// holds.
        var queue = FIFO<Delivery>()
        /// Work decided while another thread was carrying some out: it carries this out next.
        var ready: [Work] = []
        var carrying = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var retry: (any ServerTimer)?
        var stopped = false

        /// Applies `event`; returns its actions with the queue's deliveries in place of their counts.
        mutating func work(for event: OutboxState.Event) -> [Work] {
            var work: [Work] = []
            for action in state.handle(event) {
                switch action {
                case .deliver(let count):
                    for delivery in queue.prefix(count) { work.append(.deliver(delivery)) }
                    queue.removeFirst(count)
                case .discard(let count):
                    queue.removeFirst(count)
                default:
                    work.append(.state(action))
                }
            }
            return work
        }
    }

    private let code: String
    private let transport: any MessageTransport
    private let store: any RoomStore
    private let clock: any ServerClock
    private let metrics: ServerMetrics
    private let logger: StoryCircleLog
    private let health: StoreHealthMonitor?
    /// Records are written under this lease, when the store has leases.
    private let lease: (lease: RoomLease, store: any RoomLeases)?
    /// The outbox gave up on the room's records: the room must rebuild itself from the store.
    private let onGiveUp: @Sendable (StoreFailure) -> Void
    /// The store refused a record for the room's lease, so nothing held is ever sent and this room must stop.
    private let onLeaseLost: @Sendable () -> Void
    private let shell: Locked<Shell>

    init(
        code: String, services: RoomServices, lease: RoomLease? = nil,
        onGiveUp: @escaping @Sendable (StoreFailure) -> Void, onLeaseLost: @escaping @Sendable () -> Void = {}
    ) {
        // A lease comes only from a store that offers leases (`LeaseKeeper`).
        if let lease, let leases = services.storage.leases {
            self.lease = (lease, leases)
        } else {
            self.lease = nil
        }
        self.code = code
        self.transport = services.transport
        self.store = services.store
        self.clock = services.clock
        self.metrics = services.metrics
        self.logger = services.logger
        self.health = services.health
        self.onGiveUp = onGiveUp
        self.onLeaseLost = onLeaseLost
        self.shell = Locked(Shell(state: OutboxState(retryLimitMs: services.storageRetryMs)))
    }

    func persist(_ record: RoomRecord) {
        handle(.persist(record))
    }

    /// Several frames in this order, carried out (or held) together: one call to the transport.
    func send(_ batch: [(OutboundFrame, [UInt64])], answersAcknowledged: Int = 0) {
        decide(.send(batch, answers: answersAcknowledged))
    }

    func close(_ connection: UInt64, status: UInt16, reason: String) {
        decide(.close(connection, status: status, reason: reason))
    }

    /// Sends at once, ahead of held messages: for what carries no room state (pongs, the storage banner).
    func sendAtOnce(_ batch: [(OutboundFrame, [UInt64])]) {
        transport.send(batch)
    }

    /// Records not yet durable.
    var pendingRecords: Int {
        shell.withLock { $0.state.pendingRecords }
    }

    /// Waits until every record decided so far is durable: `true`, or `false` if the outbox gave up on them
    /// (then they never will be: the room rebuilds itself without them).
    func waitUntilDurable() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = shell.withLock { shell in
                shell.nextWaiter += 1
                shell.waiters[shell.nextWaiter] = continuation
                return shell.nextWaiter
            }
            handle(.awaitDurable(waiter: id))
        }
    }

    /// After the room rebuilt itself: write what it decides from now on. Its first record tells the store to
    /// take the room's records again.
    func reset() {
        handle(.reset)
    }

    /// The room is going away for good: what is still held is dropped, whoever waits is told `false`, and
    /// the retry timer is cancelled.
    func stop() {
        handle(.stop)
        let retry = shell.withLock { shell in
            shell.stopped = true
            defer { shell.retry = nil }
            return shell.retry
        }
        retry?.cancel()
    }

    // MARK: - Carrying out

    private func handle(_ event: OutboxState.Event) {
        handle { $0.work(for: event) }
    }

    private func decide(_ delivery: Delivery) {
        handle { shell in
            shell.queue.append(delivery)
            return shell.work(for: .deliver(messages: delivery.messageCount))
        }
    }

    /// Decides under the lock, carries out outside it: the first thread to find no carrier becomes it and
    /// also carries out, in order, whatever other threads decide meanwhile.
    private func handle(_ decide: (inout Shell) -> [Work]) {
        var work = shell.withLock { shell -> [Work] in
            let work = decide(&shell)
            guard !shell.carrying else {
                shell.ready += work
                return []
            }
            shell.carrying = !work.isEmpty
            return work
        }
        while !work.isEmpty {
            for item in work { carryOut(item) }
            work = shell.withLock { shell in
                defer { shell.ready = [] }
                shell.carrying = !shell.ready.isEmpty
                return shell.ready
            }
        }
    }

    private func carryOut(_ work: Work) {
        switch work {
        case .deliver(.send(let batch, let answers)):
            if batch.count == 1 {
                transport.send(batch[0].0, to: batch[0].1)
            } else {
                transport.send(batch)
            }
            for _ in 0..<answers { metrics.answerAccepted() }
        case .deliver(.close(let connection, let status, let reason)):
            transport.close(connection, status: status, reason: reason)
        case .state(let action):
            carryOut(action)
        }
    }

    private func carryOut(_ action: OutboxState.Action) {
        switch action {
        case .write(let record, let attempt, let resuming):
            write(record, attempt: attempt, resuming: resuming)
        case .deliver, .discard:
            // Turned into the deliveries they name under the lock (`Shell.work(for:)`).
            break
        case .scheduleRetry(let at):
            scheduleRetry(at: at)
        case .cancelRetry:
            shell.withLock { shell in
                defer { shell.retry = nil }
                return shell.retry
            }?.cancel()
        case .resume(let ids, let durable):
            let continuations = shell.withLock { shell in ids.compactMap { shell.waiters.removeValue(forKey: $0) } }
            continuations.forEach { $0.resume(returning: durable) }
        case .writeFailed:
            metrics.storageFailed()
        case .failing(let failure):
            logger.error("Could not store a room record; holding what depends on it and trying again", ["room.code": code, "record": failure.record, "error": failure.reason])
            health?.poke()
        case .recovered:
            logger.notice("Room records stored again", ["room.code": code])
            health?.poke()
        case .gaveUp(let failure, let records, let messages):
            logger.error("Gave up storing a room's records; the room rebuilds itself from storage", [
                "room.code": code, "record": failure.record, "error": failure.reason,
                "records.dropped": String(records), "messages.dropped": String(messages),
            ])
            onGiveUp(failure)
        case .leaseLost:
            logger.warning("Room lease lost; the room stops on this node", ["room.code": code])
            onLeaseLost()
        }
    }

    private func write(_ record: RoomRecord, attempt: UInt64, resuming: Bool) {
        let done: @Sendable ((any Error)?) -> Void = { [self] error in
            if case .lost? = error as? RoomLeaseError {
                handle(.leaseLost)
            } else {
                handle(.completed(attempt: attempt, error.map { StoreFailure.from($0, record: record.kind) }, at: clock.now()))
            }
        }
        if let lease {
            lease.store.append(record, under: lease.lease, resuming: resuming, whenDurable: done)
        } else {
            store.append(record, room: code, resuming: resuming, whenDurable: done)
        }
    }

    /// One retry timer at a time; a stale firing is ignored by the state (it is before the retry's time, or
    /// the outbox is no longer retrying).
    private func scheduleRetry(at deadline: ServerTime) {
        let timer = clock.schedule(at: deadline) { [clock, weak self] in
            self?.handle(.retryDue(at: clock.now()))
        }
        let previous = shell.withLock { shell -> (any ServerTimer)? in
            guard !shell.stopped else { return timer }
            defer { shell.retry = timer }
            return shell.retry
        }
        previous?.cancel()
    }
}
