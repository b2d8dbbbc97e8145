/// The rules of a room's outbox, as a value: which records go to the store, which sends and closes wait for
/// which records, how a failing record is retried, and when the outbox gives up. It takes events with the
/// time and returns actions for its shell (`RoomOutbox` in the server) to carry out in order; it reads no
/// clock, holds no lock and starts no work, so every rule here is tested on plain values.
///
/// The deliveries themselves (frames, closes) stay with the shell, in the order they were decided: the state
/// says how many of the oldest to carry out or to drop. So it needs nothing of the transport, and is not
/// generic: a room's every message passes through it.
///
/// Each record gets a ticket. A delivery (send or close) decided after a record may only go out once that
/// record is durable (that is how an answer is stored before it is acknowledged), so it is held until the
/// store reports the ticket committed; later deliveries queue behind it, keeping order per room. Meanwhile
/// the room goes on deciding: a busy room is never slowed to one commit per answer.
///
/// When a record fails, what was held stays held (the child's page says "Sending…") and the record is tried
/// again, oldest first, with backoff, for `retryLimitMs`. If the store takes it, everything behind it follows
/// in order. If not (or at once, when the store says the record can never be written), the outbox gives up:
/// every record and delivery it holds is dropped, never sent, and the shell is told (`gaveUp`), so the room
/// can rebuild itself from what the store holds. Until `reset`, whatever the room decides is dropped too: it
/// was decided on a state that is about to be replaced.
public struct OutboxState: Sendable {
    public enum Event: Sendable {
        /// The room decided a record.
        case persist(RoomRecord)
        /// The room decided a send or a close (counting `messages` messages, for what is dropped); the shell
        /// keeps it at the end of its queue.
        case deliver(messages: Int)
        /// The store committed the record of `attempt` (`nil`), or could not (the failure).
        case completed(attempt: UInt64, StoreFailure?, at: ServerTime)
        /// The store refused a record because the room's lease is no longer this node's (the answer to
        /// that record's attempt, in place of `completed`).
        case leaseLost
        /// The retry timer asked for by `scheduleRetry` fired.
        case retryDue(at: ServerTime)
        /// Someone waits until everything decided so far is durable (`resume` answers, with this id).
        case awaitDurable(waiter: UInt64)
        /// The room rebuilt itself from the store after the outbox gave up: write what it decides from now.
        case reset
        /// The room is going away for good (the server stops): nothing held is sent any more, and whoever
        /// waits is told it will not be stored by this outbox.
        case stop
    }

    public enum Action: Sendable {
        /// Hand `record` to the store; its completion comes back as `completed(attempt:…)`. `resuming` tells
        /// the store to take this room's records again after a failure.
        case write(RoomRecord, attempt: UInt64, resuming: Bool)
        /// Carry out the `count` oldest deliveries of the queue, in order.
        case deliver(count: Int)
        /// Drop the `count` oldest deliveries of the queue: they are never carried out.
        case discard(count: Int)
        /// Fire `retryDue` at `at` (replacing any earlier retry timer).
        case scheduleRetry(at: ServerTime)
        case cancelRetry
        /// Tell these waiters whether what they waited for is durable (`false`: it never will be).
        case resume(waiters: [UInt64], durable: Bool)
        /// A write failed (every failure, for the metric).
        case writeFailed
        /// The first failure of a run of them: the shell logs it and looks at the store's health.
        case failing(StoreFailure)
        /// Records are stored again after failures.
        case recovered
        /// The outbox gave up on `failure`, dropping this much; the room must rebuild itself.
        case gaveUp(StoreFailure, droppedRecords: Int, droppedMessages: Int)
        /// The lease is gone: nothing held is ever sent, and the room must stop on this node.
        case leaseLost
    }

    private enum Mode: Sendable {
        /// Records go to the store as soon as they are decided.
        case writing
        /// A record failed at `since`, `failures` times so far; later records wait.
        case retrying(since: ServerTime, failures: Int)
        /// Gave up; the room is rebuilding itself. Everything is dropped until `reset`.
        case gaveUp
    }

    private struct Pending: Sendable {
        let ticket: UInt64
        let record: RoomRecord
        /// The attempt whose completion counts: completions of earlier attempts are stale.
        var attempt: UInt64?
        var committed = false
    }

    /// How long a failing record is tried again before the outbox gives up.
    public let retryLimitMs: Int
    /// The first retry comes this soon after a failure; each next one twice as late, up to `maxRetryDelayMs`.
    public static var firstRetryDelayMs: Int { 100 }
    public static var maxRetryDelayMs: Int { 1_000 }

    private var issued: UInt64 = 0
    private var durable: UInt64 = 0
    /// Records not yet durable, oldest first.
    private var pending = FIFO<Pending>()
    private var held = FIFO<(ticket: UInt64, messages: Int)>()
    private var mode = Mode.writing
    private var attempts: UInt64 = 0
    private var inFlight = 0
    /// The next write tells the store to take this room's records again (after a failure).
    private var resuming = false
    /// The room was rebuilt after a failure: its next stored record means storage works again.
    private var rebuilt = false
    private var retryAt: ServerTime?
    private var retryDue = false
    private var waiters: [(ticket: UInt64, id: UInt64)] = []

    public init(retryLimitMs: Int) {
        self.retryLimitMs = retryLimitMs
    }

    /// Records decided and not yet durable.
    public var pendingRecords: Int { pending.count }

    /// Deliveries waiting for records.
    public var heldDeliveries: Int { held.count }

    public var hasGivenUp: Bool {
        if case .gaveUp = mode { return true }
        return false
    }

    /// Applies `event`; returns what the shell must do, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .persist(let record):
            guard !hasGivenUp else { break }
            issued += 1
            pending.append(Pending(ticket: issued, record: record))
            if case .writing = mode { write(pending.endIndex - 1, &actions) }
        case .deliver(let messages):
            if hasGivenUp {
                actions.append(.discard(count: 1))
            } else if pending.isEmpty, held.isEmpty {
                actions.append(.deliver(count: 1))
            } else {
                held.append((issued, messages))
            }
        case .completed(let attempt, let failure, let now):
            completed(attempt: attempt, failure: failure, at: now, &actions)
        case .leaseLost:
            // The store answered one attempt (by refusing it): that attempt is no longer in flight, even
            // when the outbox gave up meanwhile and is about to be reset.
            inFlight -= 1
            guard !hasGivenUp else { break }
            giveUp(&actions)
            actions.append(.leaseLost)
        case .retryDue(let now):
            guard case .retrying = mode, let due = retryAt, now >= due else { break }
            retryDue = true
            retryIfDue(&actions)
        case .awaitDurable(let id):
            if hasGivenUp {
                actions.append(.resume(waiters: [id], durable: false))
            } else if durable >= issued {
                actions.append(.resume(waiters: [id], durable: true))
            } else {
                waiters.append((issued, id))
            }
        case .stop:
            guard !hasGivenUp else { break }
            giveUp(&actions)
        case .reset:
            mode = .writing
            resuming = true
            rebuilt = true
            durable = issued
            retryAt = nil
            retryDue = false
            actions.append(.cancelRetry)
        }
        return actions
    }

    private mutating func completed(attempt: UInt64, failure: StoreFailure?, at now: ServerTime, _ actions: inout [Action]) {
        inFlight -= 1
        guard let index = pending.firstIndex(where: { $0.attempt == attempt }) else {
            // A stale attempt: its record was tried again since, or dropped.
            retryIfDue(&actions)
            return
        }
        pending[index].attempt = nil
        if let failure {
            failed(index, failure, at: now, &actions)
            return
        }
        // Committed. Durable means every record up to it is committed: a store keeps a room's order, but
        // this does not lean on it.
        pending[index].committed = true
        let stored = pending.prefix { $0.committed }
        if let last = stored.last { durable = max(durable, last.ticket) }
        pending.removeFirst(stored.count)
        var recovered = false
        if rebuilt, !stored.isEmpty {
            rebuilt = false
            recovered = true
        }
        if case .retrying = mode, !stored.isEmpty, pending.allSatisfy({ $0.attempt == nil }) {
            // The record that was failing is stored: the rest follow in order, as usual.
            mode = .writing
            retryAt = nil
            retryDue = false
            recovered = true
            actions.append(.cancelRetry)
            for i in pending.indices where !pending[i].committed { write(i, &actions) }
        }
        var released = 0
        for (ticket, _) in held {
            guard ticket <= durable else { break }
            released += 1
        }
        if released > 0 {
            held.removeFirst(released)
            actions.append(.deliver(count: released))
        }
        let done = waiters.filter { $0.ticket <= durable }.map(\.id)
        if !done.isEmpty {
            waiters.removeAll { $0.ticket <= durable }
            actions.append(.resume(waiters: done, durable: true))
        }
        retryIfDue(&actions)
        if recovered { actions.append(.recovered) }
    }

    private mutating func failed(_ index: Int, _ failure: StoreFailure, at now: ServerTime, _ actions: inout [Action]) {
        actions.append(.writeFailed)
        var givingUp = false
        switch mode {
        case .writing:
            actions.append(.failing(failure))
            mode = .retrying(since: now, failures: 1)
            resuming = true
            if failure.kind == .rejected {
                givingUp = true
            } else {
                scheduleRetry(at: now + Self.firstRetryDelayMs, &actions)
            }
        case .retrying(let since, let failures):
            // Only the oldest record is ever tried again; later ones failed behind it.
            guard index == pending.startIndex else { break }
            mode = .retrying(since: since, failures: failures + 1)
            resuming = true
            let deadline = since + retryLimitMs
            if failure.kind == .rejected || now >= deadline {
                givingUp = true
            } else {
                let delay = min(Self.firstRetryDelayMs << min(failures, 10), Self.maxRetryDelayMs)
                scheduleRetry(at: now + min(delay, deadline - now), &actions)
            }
        case .gaveUp:
            break
        }
        if givingUp {
            let dropped = (records: pending.count, messages: held.reduce(0) { $0 + $1.messages })
            giveUp(&actions)
            actions.append(.gaveUp(failure, droppedRecords: dropped.records, droppedMessages: dropped.messages))
        } else {
            retryIfDue(&actions)
        }
    }

    private mutating func write(_ index: Int, _ actions: inout [Action]) {
        attempts += 1
        pending[index].attempt = attempts
        inFlight += 1
        actions.append(.write(pending[index].record, attempt: attempts, resuming: resuming))
        resuming = false
    }

    private mutating func scheduleRetry(at time: ServerTime, _ actions: inout [Action]) {
        retryAt = time
        actions.append(.scheduleRetry(at: time))
    }

    /// Tries the oldest record again once its backoff is over and nothing of this room is in flight (a store
    /// that has not answered for an earlier attempt must not get a second copy).
    private mutating func retryIfDue(_ actions: inout [Action]) {
        guard case .retrying = mode, retryDue, inFlight == 0, !pending.isEmpty else { return }
        retryDue = false
        retryAt = nil
        write(pending.startIndex, &actions)
    }

    /// Drops everything held: the records will not be written by this outbox, and what depended on them is
    /// never sent.
    private mutating func giveUp(_ actions: inout [Action]) {
        mode = .gaveUp
        pending = FIFO()
        if !held.isEmpty { actions.append(.discard(count: held.count)) }
        held = FIFO()
        retryAt = nil
        retryDue = false
        actions.append(.cancelRetry)
        let told = waiters.map(\.id)
        waiters = []
        if !told.isEmpty { actions.append(.resume(waiters: told, durable: false)) }
    }
}
