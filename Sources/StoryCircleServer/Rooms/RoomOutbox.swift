import Locking
import StoryCircleCore
import WebSocketTransport

/// Carries out a room's sends, closes and records in the order the room decided them, without making the
/// room wait for the disk, and without ever sending what depends on a record that is not stored.
///
/// Each record gets a ticket. A send or close decided after a record may only go out once that record is
/// durable (that is how an answer is stored before it is acknowledged), so it is held until the store
/// reports the ticket committed; later actions queue behind it, keeping order per room. Meanwhile the room
/// goes on handling events: a busy room is never slowed to one commit per answer.
///
/// When a record fails, what was held stays held (the child's page says "Sending…") and the outbox tries
/// that record again, oldest first, with backoff, for `retryLimitMs`. If the store takes it, everything
/// behind it follows in order. If not (or at once, when the store says the record can never be written),
/// the outbox gives up: every record and action it holds is dropped, never sent, and the room is told
/// (`onGiveUp`), so it can rebuild itself from what the store holds. Until the room calls `reset()`,
/// whatever it decides is dropped too: it was decided on a state that is about to be replaced.
final class RoomOutbox: Sendable {
    private enum Action: Sendable {
        /// Frames, each for its connections, in order; `answersAcknowledged` counts the `answer.ack`s among them.
        case send([(OutboundFrame, [UInt64])], answersAcknowledged: Int)
        case close(UInt64, status: UInt16, reason: String)

        var frames: Int {
            switch self {
            case .send(let batch, _): batch.count
            case .close: 0
            }
        }
    }

    private enum Mode: Sendable {
        /// Records go to the store as soon as they are decided.
        case writing
        /// A record failed at `since`: it is tried again after `retryAt`; later ones wait here.
        case retrying(since: ServerTime, failures: Int, last: StoreFailure)
        /// The outbox gave up; the room is rebuilding itself. Everything is dropped until `reset()`.
        case gaveUp
    }

    private struct Pending: Sendable {
        let ticket: UInt64
        let record: RoomRecord
        /// The attempt whose completion counts: completions of earlier attempts are stale.
        var attempt: UInt64?
        var committed = false
    }

    private struct State: Sendable {
        var issued: UInt64 = 0
        var durable: UInt64 = 0
        /// Records not yet durable, oldest first.
        var pending = FIFO<Pending>()
        var held = FIFO<(ticket: UInt64, action: Action)>()
        var mode = Mode.writing
        var attempts: UInt64 = 0
        var inFlight = 0
        /// The next append tells the store to take this room's records again (after a failure).
        var resuming = false
        /// The room was rebuilt after a failure: its next stored record is news (storage works again).
        var rebuilt = false
        var retryDue = false
        var retryTimer: Task<Void, Never>?
        /// Records waiting to be handed to the store, in order (see `drain`).
        var outgoing: [(record: RoomRecord, attempt: UInt64, resuming: Bool)] = []
        var draining = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let code: String
    private let transport: any MessageTransport
    private let store: any RoomStore
    private let clock: any ServerClock
    private let retryLimitMs: Int
    private let metrics: ServerMetrics
    private let logger: StoryCircleLog
    private let storage: StorageMonitor?
    private let onGiveUp: @Sendable (StoreFailure) -> Void
    /// The lease every record is written under (`RoomLeases`), when the store has leases.
    private let lease: (lease: RoomLease, store: any RoomLeases)?
    /// The store refused a record because the lease is no longer the room's: another node may run the room
    /// now, so nothing held is ever sent and this room must stop.
    private let onLeaseLost: @Sendable () -> Void
    private let state = Locked(State())

    /// The first retry comes this soon after a failure; each next one twice as late, up to `maxRetryDelayMs`.
    static let firstRetryDelayMs = 100
    static let maxRetryDelayMs = 1_000

    init(
        code: String, transport: any MessageTransport, store: any RoomStore, clock: any ServerClock, retryLimitMs: Int,
        metrics: ServerMetrics, logger: StoryCircleLog, storage: StorageMonitor?, lease: RoomLease? = nil,
        onGiveUp: @escaping @Sendable (StoreFailure) -> Void, onLeaseLost: @escaping @Sendable () -> Void = {}
    ) {
        if let lease, let leases = store as? any RoomLeases {
            self.lease = (lease, leases)
        } else {
            self.lease = nil
        }
        self.onLeaseLost = onLeaseLost
        self.code = code
        self.transport = transport
        self.store = store
        self.clock = clock
        self.retryLimitMs = retryLimitMs
        self.metrics = metrics
        self.logger = logger
        self.storage = storage
        self.onGiveUp = onGiveUp
    }

    func persist(_ record: RoomRecord) {
        state.withLock { state in
            if case .gaveUp = state.mode { return }
            state.issued += 1
            state.pending.append(Pending(ticket: state.issued, record: record))
            if case .writing = state.mode { send(state.pending.endIndex - 1, in: &state) }
        }
        drain()
    }

    func send(_ frame: OutboundFrame, to connections: [UInt64], answersAcknowledged: Int = 0) {
        perform(.send([(frame, connections)], answersAcknowledged: answersAcknowledged))
    }

    /// Several frames in this order, carried out (or held) together: one call to the transport.
    func send(_ batch: [(OutboundFrame, [UInt64])], answersAcknowledged: Int = 0) {
        perform(.send(batch, answersAcknowledged: answersAcknowledged))
    }

    func close(_ connection: UInt64, status: UInt16, reason: String) {
        perform(.close(connection, status: status, reason: reason))
    }

    /// Sends at once, ahead of held messages: for replies that carry no room state (pongs).
    func sendImmediately(_ frame: OutboundFrame, to connections: [UInt64]) {
        transport.send(frame, to: connections)
    }

    /// Records not yet durable.
    var pendingRecords: Int {
        state.withLock { $0.pending.count }
    }

    /// Waits until every record decided so far is durable: `true`, or `false` if the outbox gave up on
    /// them (then they never will be: the room rebuilds itself without them).
    func waitUntilDurable() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = state.withLock { state in
                if case .gaveUp = state.mode { return false }
                if state.durable >= state.issued { return true }
                state.waiters.append((state.issued, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// After the room rebuilt itself: write what it decides from now on. Its first record tells the store
    /// to take the room's records again.
    func reset() {
        state.withLock { state in
            state.mode = .writing
            state.resuming = true
            state.rebuilt = true
            state.durable = state.issued
            state.retryTimer?.cancel()
            state.retryTimer = nil
            state.retryDue = false
        }
    }

    // MARK: - Actions

    private func perform(_ action: Action) {
        // The transport is called under the lock so a release on the store's thread and a new action from
        // the room cannot overtake each other.
        state.withLock { state in
            if case .gaveUp = state.mode { return }
            if state.pending.isEmpty, state.held.isEmpty {
                carryOut(action)
            } else {
                state.held.append((state.issued, action))
            }
        }
    }

    private func carryOut(_ action: Action) {
        switch action {
        case .send(let batch, let answers):
            if batch.count == 1 {
                transport.send(batch[0].0, to: batch[0].1)
            } else {
                transport.send(batch)
            }
            for _ in 0..<answers { metrics.answerAccepted() }
        case .close(let connection, let status, let reason):
            transport.close(connection, status: status, reason: reason)
        }
    }

    // MARK: - Records

    /// Queues pending record `index` for the store (under the lock); `drain()` hands it over outside it.
    private func send(_ index: Int, in state: inout State) {
        state.attempts += 1
        state.pending[index].attempt = state.attempts
        state.inFlight += 1
        state.outgoing.append((state.pending[index].record, state.attempts, state.resuming))
        state.resuming = false
    }

    /// Hands queued records to the store in the order they were queued, outside the lock (a store may
    /// complete an append before returning from it), and one thread at a time (so order holds).
    private func drain() {
        var batch = state.withLock { state -> [(record: RoomRecord, attempt: UInt64, resuming: Bool)] in
            guard !state.draining, !state.outgoing.isEmpty else { return [] }
            state.draining = true
            defer { state.outgoing = [] }
            return state.outgoing
        }
        while !batch.isEmpty {
            for item in batch {
                let done: @Sendable ((any Error)?) -> Void = { [self] error in
                    if case .lost? = error as? RoomLeaseError {
                        leaseLost()
                    } else {
                        completed(attempt: item.attempt, error: error.map { StoreFailure.from($0, record: item.record.kind) })
                    }
                }
                if let lease {
                    lease.store.append(item.record, under: lease.lease, resuming: item.resuming, whenDurable: done)
                } else {
                    store.append(item.record, room: code, resuming: item.resuming, whenDurable: done)
                }
            }
            batch = state.withLock { state in
                if state.outgoing.isEmpty {
                    state.draining = false
                    return []
                }
                defer { state.outgoing = [] }
                return state.outgoing
            }
        }
    }

    private func completed(attempt: UInt64, error: StoreFailure?) {
        var resumed: [CheckedContinuation<Bool, Never>] = []
        var gaveUp: StoreFailure?
        var dropped = (records: 0, messages: 0)
        var firstFailure: StoreFailure?
        var recovered = false
        state.withLock { state in
            state.inFlight -= 1
            guard let index = state.pending.firstIndex(where: { $0.attempt == attempt }) else {
                // A stale attempt: its record was tried again since, or dropped.
                retryIfDue(&state)
                return
            }
            if let error {
                metrics.storageFailed()
                switch state.mode {
                case .writing:
                    firstFailure = error
                    state.mode = .retrying(since: clock.now(), failures: 1, last: error)
                    state.resuming = true
                    if error.kind == .rejected {
                        gaveUp = error
                    } else {
                        scheduleRetry(after: Self.firstRetryDelayMs, in: &state)
                    }
                case .retrying(let since, let failures, _):
                    // Only the oldest record is ever tried again; later ones failed behind it.
                    guard index == state.pending.startIndex else { break }
                    let now = clock.now()
                    state.mode = .retrying(since: since, failures: failures + 1, last: error)
                    state.resuming = true
                    let deadline = since + retryLimitMs
                    if error.kind == .rejected || now >= deadline {
                        gaveUp = error
                    } else {
                        let delay = min(Self.firstRetryDelayMs << min(failures, 10), Self.maxRetryDelayMs)
                        scheduleRetry(after: min(delay, deadline - now), in: &state)
                    }
                case .gaveUp:
                    break
                }
                state.pending[index].attempt = nil
                if let failure = gaveUp {
                    dropped = (state.pending.count, state.held.reduce(0) { $0 + $1.action.frames })
                    resumed = giveUp(&state, failure)
                } else {
                    retryIfDue(&state)
                }
                return
            }
            // Committed. Durable means every record up to it is committed: a store keeps a room's order,
            // but this does not lean on it.
            state.pending[index].attempt = nil
            state.pending[index].committed = true
            let stored = state.pending.prefix { $0.committed }
            if let last = stored.last { state.durable = max(state.durable, last.ticket) }
            state.pending.removeFirst(stored.count)
            if state.rebuilt, !stored.isEmpty {
                state.rebuilt = false
                recovered = true
            }
            if case .retrying = state.mode, !stored.isEmpty, state.pending.allSatisfy({ $0.attempt == nil }) {
                // The record that was failing is stored: the rest follow in order, as usual.
                state.mode = .writing
                state.retryTimer?.cancel()
                state.retryTimer = nil
                state.retryDue = false
                recovered = true
                for i in state.pending.indices where !state.pending[i].committed { send(i, in: &state) }
            }
            var released = 0
            for (heldTicket, action) in state.held {
                guard heldTicket <= state.durable else { break }
                carryOut(action)
                released += 1
            }
            state.held.removeFirst(released)
            resumed = state.waiters.filter { $0.ticket <= state.durable }.map(\.continuation)
            state.waiters.removeAll { $0.ticket <= state.durable }
            retryIfDue(&state)
        }
        drain()
        resumed.forEach { $0.resume(returning: gaveUp == nil) }
        if let firstFailure {
            logger.error("Could not store a room record; holding what depends on it and trying again", ["room.code": code, "record": firstFailure.record, "error": firstFailure.reason])
            storage?.poke()
        }
        if recovered {
            logger.notice("Room records stored again", ["room.code": code])
            storage?.poke()
        }
        if let gaveUp {
            logger.error("Gave up storing a room's records; the room rebuilds itself from storage", [
                "room.code": code, "record": gaveUp.record, "error": gaveUp.reason,
                "records.dropped": String(dropped.records), "messages.dropped": String(dropped.messages),
            ])
            onGiveUp(gaveUp)
        }
    }

    /// Not a storage failure: retrying cannot help, and rebuilding from the store would make two owners.
    /// Everything held is dropped (nothing that waited for these records is sent) and the room is told once.
    private func leaseLost() {
        let (waiters, first) = state.withLock { state -> ([CheckedContinuation<Bool, Never>], Bool) in
            if case .gaveUp = state.mode { return ([], false) }
            state.inFlight = 0
            return (giveUp(&state, StoreFailure(.rejected, record: "lease", reason: "lease lost")), true)
        }
        waiters.forEach { $0.resume(returning: false) }
        if first {
            logger.warning("Room lease lost; the room stops on this node", ["room.code": code])
            onLeaseLost()
        }
    }

    private func scheduleRetry(after delayMs: Int, in state: inout State) {
        let at = clock.now() + max(0, delayMs)
        state.retryTimer?.cancel()
        state.retryTimer = Task { [clock, weak self] in
            do {
                try await clock.sleep(until: at)
            } catch {
                return
            }
            self?.retry()
        }
    }

    private func retry() {
        state.withLock { state in
            guard case .retrying = state.mode else { return }
            state.retryDue = true
            retryIfDue(&state)
        }
        drain()
    }

    /// Tries the oldest record again once its backoff is over and nothing of this room is in flight (a
    /// store that has not answered for an earlier attempt must not get a second copy).
    private func retryIfDue(_ state: inout State) {
        guard case .retrying = state.mode, state.retryDue, state.inFlight == 0, !state.pending.isEmpty else { return }
        state.retryDue = false
        state.retryTimer = nil
        send(state.pending.startIndex, in: &state)
    }

    /// Drops everything held: the records will not be written by this outbox, and what depended on them is
    /// never sent. Returns the waiters to tell.
    private func giveUp(_ state: inout State, _ failure: StoreFailure) -> [CheckedContinuation<Bool, Never>] {
        state.mode = .gaveUp
        state.pending = FIFO()
        state.held = FIFO()
        state.outgoing = []
        state.retryTimer?.cancel()
        state.retryTimer = nil
        state.retryDue = false
        let waiters = state.waiters.map(\.continuation)
        state.waiters = []
        return waiters
    }
}

/// An array that is emptied from the front: `removeFirst` moves a start index instead of every element,
/// so a room with thousands of records in flight does not pay for each one stored twice over.
struct FIFO<Element>: RandomAccessCollection, MutableCollection {
    private var storage: [Element] = []
    private var head = 0

    var startIndex: Int { head }
    var endIndex: Int { storage.count }

    subscript(position: Int) -> Element {
        get { storage[position] }
        set { storage[position] = newValue }
    }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func removeFirst(_ count: Int) {
        precondition(count <= self.count, "removing more than there is")
        head += count
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}

extension FIFO: Sendable where Element: Sendable {}
