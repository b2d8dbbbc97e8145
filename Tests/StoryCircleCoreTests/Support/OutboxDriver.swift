@testable import StoryCircleCore

/// A send or close, as the tests name it: `messageCount` is what it counts for when dropped.
struct TestDelivery: Equatable {
    var name: String
    var messageCount: Int
}

/// Drives an `OutboxState` the way `RoomOutbox` does, on plain values: a fake store that keeps every write
/// (by attempt) until the test completes it, a manual time, and a retry timer that fires only when the test
/// advances time past it. Every action is kept, and each call answers with the actions it caused, spelled
/// out (`"write p1 #1"`, `"deliver a"`, `"scheduleRetry +100"`…) so a test reads like the rule it checks.
struct OutboxDriver {
    typealias State = OutboxState

    var state: State
    var now = ServerTime(milliseconds: 1_000_000)
    /// Where the test started: `scheduleRetry` is spelled relative to it.
    let start = ServerTime(milliseconds: 1_000_000)
    private(set) var log: [State.Action] = []
    /// Every write handed to the store, in order.
    private(set) var writes: [(record: RoomRecord, attempt: UInt64, resuming: Bool)] = []
    /// Attempts the store has not answered yet, oldest first.
    private(set) var inFlight: [UInt64] = []
    /// What went out to the transport, in order.
    private(set) var delivered: [String] = []
    /// Deliveries decided and not yet carried out or dropped, as the shell keeps them.
    private var queue: [TestDelivery] = []

    /// When the retry timer fires, if one is set.
    private(set) var retryAt: ServerTime?
    /// How each waiter was answered.
    private(set) var resumed: [UInt64: Bool] = [:]
    private var nextWaiter: UInt64 = 0

    init(retryLimitMs: Int = 5_000) {
        state = State(retryLimitMs: retryLimitMs)
    }

    static func record(_ n: Int) -> RoomRecord {
        .playerLeft(player: "p\(n)", at: ServerTime(milliseconds: Int64(n)))
    }

    static func failure(_ kind: StoreFailure.Kind = .unavailable) -> StoreFailure {
        StoreFailure(kind, record: "player.left", reason: kind == .rejected ? "constraint failed" : "disk full")
    }

    // MARK: Events

    /// Applies `event` and carries out its actions; returns them, spelled out.
    @discardableResult
    mutating func handle(_ event: State.Event) -> [String] {
        let actions = state.handle(event)
        log += actions
        var described: [String] = []
        for action in actions {
            switch action {
            case .write(let record, let attempt, let resuming):
                precondition(!inFlight.contains(attempt), "attempt \(attempt) written twice")
                inFlight.append(attempt)
                writes.append((record, attempt, resuming))
            case .deliver(let count):
                precondition(queue.count >= count, "delivering more than was decided")
                let names = queue.prefix(count).map(\.name)
                queue.removeFirst(count)
                delivered += names
                described += names.map { "deliver \($0)" }
                continue
            case .discard(let count):
                precondition(queue.count >= count, "dropping more than was decided")
                queue.removeFirst(count)
                continue
            case .scheduleRetry(let at): retryAt = at
            case .cancelRetry: retryAt = nil
            case .resume(let waiters, let durable):
                for waiter in waiters {
                    precondition(resumed[waiter] == nil, "waiter \(waiter) resumed twice")
                    resumed[waiter] = durable
                }
            case .writeFailed, .failing, .recovered, .gaveUp, .leaseLost: break
            }
            described.append(describe(action))
        }
        // The shell's queue is exactly what the state holds: nothing delivered twice, nothing left behind.
        precondition(queue.count == state.heldDeliveries, "the queue holds \(queue.count), the state \(state.heldDeliveries)")
        return described
    }

    /// What the shell still holds for the state: every delivery held, and nothing else.
    var queued: Int { queue.count }

    /// The room decides record `n` (`p<n>`).
    @discardableResult
    mutating func persist(_ n: Int) -> [String] {
        handle(.persist(Self.record(n)))
    }

    /// The room decides a send (or, with no messages, a close) named `name`.
    @discardableResult
    mutating func deliver(_ name: String, messages: Int = 1) -> [String] {
        queue.append(TestDelivery(name: name, messageCount: messages))
        return handle(.deliver(messages: messages))
    }

    /// The store answers `attempt`: committed, or `failure`.
    @discardableResult
    mutating func complete(attempt: UInt64, _ failure: StoreFailure? = nil) -> [String] {
        inFlight.removeAll { $0 == attempt }
        return handle(.completed(attempt: attempt, failure, at: now))
    }

    /// The store commits the latest attempt at record `n`.
    @discardableResult
    mutating func commit(_ n: Int) -> [String] {
        complete(attempt: attempt(of: n))
    }

    /// The latest attempt at record `n` fails.
    @discardableResult
    mutating func fail(_ n: Int, _ kind: StoreFailure.Kind = .unavailable) -> [String] {
        complete(attempt: attempt(of: n), Self.failure(kind))
    }

    /// The store refuses a write because the lease is gone (it answers one attempt that way).
    @discardableResult
    mutating func leaseLost(attempt: UInt64? = nil) -> [String] {
        if let attempt { inFlight.removeAll { $0 == attempt } }
        return handle(.leaseLost)
    }

    /// Someone waits until everything decided so far is durable; returns the waiter's id.
    mutating func awaitDurable() -> (waiter: UInt64, actions: [String]) {
        nextWaiter += 1
        return (nextWaiter, handle(.awaitDurable(waiter: nextWaiter)))
    }

    /// Moves time to `time`, firing the retry timer (at its own instant) if it is due by then; returns the
    /// actions of the firings.
    @discardableResult
    mutating func advance(to time: ServerTime) -> [String] {
        var actions: [String] = []
        while let due = retryAt, due <= time {
            retryAt = nil
            now = max(now, due)
            actions += handle(.retryDue(at: now))
        }
        now = max(now, time)
        return actions
    }

    @discardableResult
    mutating func advance(by milliseconds: Int) -> [String] {
        advance(to: now + milliseconds)
    }

    // MARK: Inspection

    /// The latest attempt written for record `n`.
    func attempt(of n: Int) -> UInt64 {
        guard let write = writes.last(where: { $0.record == Self.record(n) }) else {
            preconditionFailure("p\(n) was never written")
        }
        return write.attempt
    }

    /// The records written, in order, by name (`p1`, `p2`…), including every retry.
    var written: [String] {
        writes.map { Self.name(of: $0.record) }
    }

    static func name(of record: RoomRecord) -> String {
        if case .playerLeft(let player, _) = record { return player.rawValue }
        return record.kind
    }

    func describe(_ action: State.Action) -> String {
        switch action {
        case .write(let record, let attempt, let resuming):
            "write \(Self.name(of: record)) #\(attempt)\(resuming ? " resuming" : "")"
        case .deliver(let count): "deliver \(count)"
        case .discard(let count): "discard \(count)"
        case .scheduleRetry(let at): "scheduleRetry +\(at - start)"
        case .cancelRetry: "cancelRetry"
        case .resume(let waiters, let durable): "resume \(waiters) \(durable)"
        case .writeFailed: "writeFailed"
        case .failing(let failure): "failing \(failure.kind)"
        case .recovered: "recovered"
        case .gaveUp(let failure, let records, let messages): "gaveUp \(failure.kind) records:\(records) messages:\(messages)"
        case .leaseLost: "leaseLost"
        }
    }
}
