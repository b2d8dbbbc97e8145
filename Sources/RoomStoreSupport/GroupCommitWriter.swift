import Foundation
import Locking
import StoryCircleCore

/// One thing a batch's transaction writes.
public enum BatchWrite: Sendable {
    case record(RoomRecord, room: String, lease: RoomLease?)
    case createRoom(RoomHeader)
    case purge(createdBefore: ServerTime)
    /// A real write of about a good batch's size, that proves the database takes writes.
    case probe
    /// SQL of the backend's own, run in the transaction (SQLite's tests configure the database with it).
    case sql(String)

    /// What is written, for failures (`RoomRecord.kind`, `room.created`, ...).
    public var kind: String {
        switch self {
        case .record(let record, _, _): record.kind
        case .createRoom: "room.created"
        case .purge: "purge"
        case .probe: "probe"
        case .sql: "configure"
        }
    }
}

/// What a transaction of a batch came to.
public enum BatchOutcome {
    /// Committed. `results` has one entry per write, in order: stored (with a count, for a purge), or
    /// refused on its own without stopping the commit (a lease that is lost, a room code that is taken);
    /// a refused record does not block its room. `wrote`: the commit changed something, so it proved the
    /// database takes writes (a purge with nothing to delete commits without writing a page).
    case committed(results: [Result<Int, any Error>], wrote: Bool)
    /// Write `index` failed on its own data (a constraint); the transaction was rolled back.
    case rejected(index: Int, reason: String)
    /// The database failed; the transaction was rolled back (or its outcome is unknown).
    case unavailable(reason: String)
}

/// What a backend provides to the group-commit writer: one transaction that writes these, in this order.
/// Called on the writer thread only, one call at a time, so it may keep a connection without a lock.
///
/// The writer holds it as `any BatchCommitter`, not as a generic parameter: it is in another module than
/// the stores, and its every job would otherwise have its generic types looked up at run time.
public protocol BatchCommitter: AnyObject {
    /// Begins a transaction, writes `writes` in order, commits; says how it went.
    func commit(_ writes: [BatchWrite]) -> BatchOutcome
    /// Whether a record fenced by `lease` may be written, judged at its place in the queue before the
    /// batch's transaction. A backend that checks the lease inside the transaction answers true.
    func admits(_ lease: RoomLease) -> Bool
    /// The writer stopped: nothing more will be committed (close the connection).
    func finish()
}

extension BatchCommitter {
    public func admits(_ lease: RoomLease) -> Bool { true }
    public func finish() {}
}

/// The one writer of a room store: a queue of jobs and one thread that takes everything queued and
/// commits it as one transaction (group commit), so under load one fsync serves hundreds of answers from
/// many rooms; each job's completion runs only after the commit that decided it, in queue order.
///
/// When commits come back to back (the disk is the bottleneck, and each commit's fsync costs the server
/// CPU as well as time), a lone record waits up to `gatherWindow` for `gatherEnough` of them, so one
/// commit serves several; an idle store commits at once, and a stop ends the wait at once.
///
/// When a write fails, nothing in its transaction is reported durable:
/// - a failure of one write (a constraint) fails that write alone: the backend rolled back, and the batch
///   runs again without it, so other rooms' records do not pay for it;
/// - a failure of the database fails the whole batch, and the store is `failing` until a write succeeds.
/// Either way the room whose record failed is blocked: its later records fail untried until an append
/// with `resuming`, so what is stored of a room is always a prefix of what it decided. A record fenced by
/// a lease is blocked per lease (room and epoch): a new holder starts again from the store and does not
/// wait for the failures of the one before it.
///
/// `@unchecked Sendable`: the queue is behind its `LockedCondition`, the health behind its `Locked`; the
/// committer and the blocked rooms are only touched on the writer thread.
public final class GroupCommitWriter: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<Int, any Error>) -> Void

    private enum Job {
        case write(BatchWrite, resuming: Bool, done: Completion)
        /// Work on the writer thread at this place in the queue, outside the transaction (SQLite's lease
        /// table); what it returns runs after the batch's commit, with the other completions.
        /// `abandon` answers instead when the writer stops before it takes the turn.
        case turn(@Sendable (any BatchCommitter) -> @Sendable () -> Void, abandon: @Sendable (any Error) -> Void)
        case stop

        var isStop: Bool {
            if case .stop = self { true } else { false }
        }

        var kind: String {
            switch self {
            case .write(let write, _, _): write.kind
            case .turn: "lease"
            case .stop: "stop"
            }
        }

        /// The sequence whose order this job is part of (records only): its room's records, as written by
        /// one holder of the room.
        var order: String? {
            guard case .write(.record(_, let room, let lease), _, _) = self else { return nil }
            return lease.map { "\(room)@\($0.epoch)" } ?? room
        }

        func fail(_ error: any Error) {
            switch self {
            case .write(_, _, let done): done(.failure(error))
            case .turn(_, let abandon): abandon(error)
            case .stop: break
            }
        }
    }

    private struct Queue {
        var jobs: [Job] = []
        /// Set once the writer took `.stop`: later jobs fail at once.
        var stopped = false
        /// Set once the writer thread has ended.
        var finished = false
        var finishWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let queue = LockedCondition(Queue())
    private let currentHealth = Locked<StoreHealth>(.ok)
    private let counters = Locked((commits: 0, batches: 0))
    /// Starts the writer thread, which takes `committer` over: nothing else may touch it from here on.
    public init(name: String, committer: any BatchCommitter) {
        let handOff = HandOff(committer: committer)
        let thread = Thread { [self] in
            self.writeLoop(handOff)
        }
        thread.name = name
        thread.start()
    }

    /// Whether writes are succeeding: `.failing` from the first failed write until one succeeds again.
    public var health: StoreHealth { currentHealth.withLock { $0 } }

    /// Transactions committed so far (a measure of how well writes are grouped).
    public var commitCount: Int { counters.withLock { $0.commits } }

    /// Batches taken from the queue so far (tests use it to know what the writer is doing).
    public var batchesTaken: Int { counters.withLock { $0.batches } }

    /// Queues `write`; `done` runs on the writer thread once it is committed (with its count: a purge's
    /// rooms, 0 otherwise) or could not be. Never blocks.
    public func submit(_ write: BatchWrite, resuming: Bool = false, done: @escaping Completion) {
        enqueue(.write(write, resuming: resuming, done: done))
    }

    /// `submit` for a caller that only needs to know whether it was committed (an append's `whenDurable`).
    public func submit(_ write: BatchWrite, resuming: Bool = false, whenDurable: @escaping @Sendable ((any Error)?) -> Void) {
        submit(write, resuming: resuming, done: { (result: Result<Int, any Error>) in
            if case .failure(let error) = result { whenDurable(error) } else { whenDurable(nil) }
        })
    }

    /// Queues `write` and waits, suspended, until it is committed; returns its count.
    @discardableResult
    public func write(_ write: BatchWrite) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            submit(write, done: { continuation.resume(with: $0) })
        }
    }

    /// Runs `body` on the writer thread at its place in the queue (after what was queued before it, before
    /// what is queued after), and answers once the batch it fell in is committed.
    /// `as` names the backend's committer type (the one given to `init`).
    public func turn<C: BatchCommitter, T: Sendable>(as _: C.Type, _ body: @escaping @Sendable (C) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job.turn({ committer in
                let result = Result { () throws -> T in
                    guard let committer = committer as? C else { preconditionFailure("a turn for another committer than the writer's") }
                    return try body(committer)
                }
                return { continuation.resume(with: result) }
            }, abandon: { continuation.resume(throwing: $0) })
            if !tryEnqueue(job) {
                continuation.resume(throwing: StoreFailure(.unavailable, record: "lease", reason: GroupCommit.closedReason))
            }
        }
    }

    /// Commits everything queued, then stops the writer; returns once its thread has ended. Writes after
    /// this fail.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = queue.withLockAndWake { queue in
                if queue.finished { return true }
                if !queue.stopped, !queue.jobs.contains(where: \.isStop) { queue.jobs.append(.stop) }
                queue.finishWaiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }

    private func enqueue(_ job: Job) {
        if !tryEnqueue(job) {
            job.fail(StoreFailure(.unavailable, record: job.kind, reason: GroupCommit.closedReason))
        }
    }

    private func tryEnqueue(_ job: Job) -> Bool {
        queue.withLockAndWake { queue in
            if queue.stopped { return false }
            queue.jobs.append(job)
            return true
        }
    }

    // MARK: - The writer thread

    private func writeLoop(_ handOff: HandOff) {
        // Released before `stop` returns, so the backend's connection is closed by then.
        var taken: (any BatchCommitter)? = handOff.take()
        /// Rooms with a record that failed, and why: their later records fail untried until one resumes.
        var blocked: [String: StoreFailure] = [:]
        var lastCommitEnded = ContinuousClock.now - .seconds(1)
        while true {
            queue.waitUntil({ !$0.jobs.isEmpty }) { _ in }
            if ContinuousClock.now - lastCommitEnded < GroupCommit.busyGap {
                _ = queue.waitUntil({ $0.jobs.count >= GroupCommit.gatherEnough || $0.jobs.contains(where: \.isStop) }, timeout: GroupCommit.gatherWindow)
            }
            let (batch, stopping) = queue.withLock { queue in
                let batch = Array(queue.jobs.prefix(GroupCommit.maxBatch))
                queue.jobs.removeFirst(batch.count)
                let stopping = batch.contains(where: \.isStop)
                if stopping { queue.stopped = true }
                return (batch, stopping)
            }
            counters.withLock { $0.batches += 1 }

            commit(batch, taken!, &blocked)
            lastCommitEnded = .now
            if stopping {
                let leftovers = queue.withLock { queue in
                    defer { queue.jobs = [] }
                    return queue.jobs
                }
                leftovers.forEach { $0.fail(StoreFailure(.unavailable, record: $0.kind, reason: GroupCommit.closedReason)) }
                taken?.finish()
                taken = nil
                let waiters = queue.withLockAndWake { queue in
                    queue.finished = true
                    defer { queue.finishWaiters = [] }
                    return queue.finishWaiters
                }
                waiters.forEach { $0.resume() }
                return
            }
        }
    }

    /// Commits `batch` as one transaction, taking out writes that fail on their own. Completions run
    /// afterwards, in the order the jobs were queued.
    ///
    /// Turns and leases are settled first, in queue order: a fenced record is judged (`admits`) at its
    /// place in the queue, so a record queued before a takeover is judged before it and one queued after
    /// is refused; a turn's answer (a new holder hearing of its lease) goes out only after the commit, so
    /// what the new holder then loads includes everything the old one was allowed to write.
    private func commit(_ batch: [Job], _ committer: any BatchCommitter, _ blocked: inout [String: StoreFailure]) {
        var outcomes = [Result<Int, any Error>?](repeating: nil, count: batch.count)
        var answers: [Int: @Sendable () -> Void] = [:]
        var pending: [(position: Int, write: BatchWrite, order: String?)] = []
        for (position, job) in batch.enumerated() {
            switch job {
            case .turn(let body, _):
                answers[position] = body(committer)
            case .stop:
                break
            case .write(let write, let resuming, _):
                let order = job.order
                if let order {
                    if resuming { blocked[order] = nil }
                    if let cause = blocked[order] {
                        outcomes[position] = .failure(GroupCommit.behind(cause, record: write.kind))
                        continue
                    }
                    // No need to block the room after this: a lease that is lost stays lost, so every later
                    // record under it is refused the same way.
                    if case .record(_, let room, let lease?) = write, !committer.admits(lease) {
                        outcomes[position] = .failure(RoomLeaseError.lost(room: room, epoch: lease.epoch))
                        continue
                    }
                }
                pending.append((position, write, order))
            }
        }
        attempts: while !pending.isEmpty {
            switch committer.commit(pending.map(\.write)) {
            case .committed(let results, let wrote):
                counters.withLock { $0.commits += 1 }
                if wrote { currentHealth.withLock { $0 = .ok } }
                for (entry, result) in zip(pending, results) { outcomes[entry.position] = result }
                break attempts
            case .rejected(let index, let reason):
                let failed = pending[index]
                let failure = StoreFailure(.rejected, record: failed.write.kind, reason: reason)
                if let order = failed.order { blocked[order] = failure }
                outcomes[failed.position] = .failure(failure)
                var rest: [(position: Int, write: BatchWrite, order: String?)] = []
                for (offset, entry) in pending.enumerated() where offset != index {
                    if offset > index, let order = failed.order, entry.order == order {
                        outcomes[entry.position] = .failure(GroupCommit.behind(failure, record: entry.write.kind))
                    } else {
                        rest.append(entry)
                    }
                }
                pending = rest
            case .unavailable(let reason):
                // The health changes before any completion runs, so whoever hears of the failure from a
                // completion finds the store failing.
                let now = ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
                currentHealth.withLock { health in
                    if case .failing(let since, _) = health {
                        health = .failing(since: since, reason: reason)
                    } else {
                        health = .failing(since: now, reason: reason)
                    }
                }
                for entry in pending {
                    let failure = StoreFailure(.unavailable, record: entry.write.kind, reason: reason)
                    if let order = entry.order { blocked[order] = failure }
                    outcomes[entry.position] = .failure(failure)
                }
                break attempts
            }
        }
        for (position, job) in batch.enumerated() {
            switch job {
            case .turn: answers[position]?()
            case .stop: break
            case .write(_, _, let done): done(outcomes[position] ?? .success(0))
            }
        }
    }

}

/// The writer's constants, shared by every backend.
public enum GroupCommit {
    public static let closedReason = "the room store is closed"
    /// The most writes one transaction takes, so one huge burst does not delay every completion.
    public static let maxBatch = 4_096
    /// A commit that starts sooner than this after the last one ended finds the store busy...
    public static let busyGap = Duration.milliseconds(2)
    /// ...and waits up to this long for this many jobs before it commits.
    public static let gatherWindow = Duration.microseconds(1_000)
    public static let gatherEnough = 8

    /// The failure of a record that was not tried because an earlier one of its room failed.
    static func behind(_ cause: StoreFailure, record: String) -> StoreFailure {
        StoreFailure(.unavailable, record: record, reason: "an earlier record of this room was not stored (\(cause.reason))")
    }
}

/// Moves the committer to the writer thread. `@unchecked Sendable` because ownership is handed over:
/// after `init` passes it to the thread, nothing else ever touches it.
private final class HandOff: @unchecked Sendable {
    private var committer: (any BatchCommitter)?

    init(committer: any BatchCommitter) {
        self.committer = committer
    }

    func take() -> any BatchCommitter {
        defer { committer = nil }
        return committer!
    }
}
