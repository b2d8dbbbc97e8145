/// The rules of the resident Piper worker, as a value: what happened goes in (a request, the worker ready,
/// an answer, the worker gone, the time), what to do comes out. `PiperWorker` carries the directives out
/// with a real process; the tests drive this alone on a clock of plain milliseconds.
///
/// One worker answers one request at a time, in order. Requests wait in a bounded queue; each has a
/// deadline once it is sent, and a worker that misses it is killed (it is stuck, or the machine is too
/// busy to narrate in time). A worker that dies, cannot start or times out is started again for the
/// requests still waiting, but only `restartBudget` times within `budgetWindowMs`: past that the worker is
/// given up for `coolDownMs`, every waiting request fails as `.unavailable`, and the rooms narrate with
/// espeak-ng instead until it is tried again.
public struct PiperWorkerPolicy: Sendable, Equatable {
    public struct Limits: Sendable, Equatable {
        public var maxQueued = 64
        /// Places in the queue that reading ahead never takes: a room waiting in "preparing" always finds
        /// room, however many rooms are reading ahead in their lobbies.
        public var urgentReserve = 16
        /// From launch to the worker's "ready" (Python, onnxruntime and the voices loading: about 1-3 s).
        public var startTimeoutMs = 30_000
        /// Per request: `requestBaseMs` plus `requestPerCharacterMs` for each character of text, generous
        /// against a real-time factor of about 0.06 on one core so that only a stuck worker misses it.
        public var requestBaseMs = 15_000
        public var requestPerCharacterMs = 100
        public var restartBudget = 3
        public var budgetWindowMs = 60_000
        public var coolDownMs = 300_000

        public init() {}

        public func timeoutMs(characters: Int) -> Int { requestBaseMs + requestPerCharacterMs * characters }
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// More requests wait than the queue holds.
        case queueFull
        /// The worker did not answer in time and was killed.
        case timedOut
        /// The worker died while working on this request.
        case workerDied
        /// The worker cannot start or kept failing: given up for now.
        case unavailable(String)
        /// The worker answered with an error for this request (it is still running).
        case rejected(String)

        public var description: String {
            switch self {
            case .queueFull: "the natural voice has too many sentences waiting"
            case .timedOut: "the natural voice did not answer in time"
            case .workerDied: "the natural voice's worker stopped"
            case .unavailable(let reason): "the natural voice is not available: \(reason)"
            case .rejected(let reason): "the natural voice could not read a sentence: \(reason)"
            }
        }
    }

    public enum Directive: Sendable, Equatable {
        /// Launch a worker process and wait for its ready line.
        case launch
        /// Write request `id` to the worker.
        case send(id: Int)
        /// Kill the worker (SIGKILL); its exit is reported later as `exited`.
        case kill
        /// Finish request `id` with this failure.
        case fail(id: Int, Failure)
        /// Call `tick` at this time (or earlier) if nothing else happens.
        case wake(atMs: Int)
    }

    public enum Worker: Sendable, Equatable {
        case stopped
        case starting(deadlineMs: Int)
        case idle
        case working(id: Int, deadlineMs: Int)
        /// Killed, waiting for its exit.
        case stopping
    }

    public let limits: Limits
    public private(set) var worker: Worker = .stopped
    /// Waiting requests with their timeouts, in the order they will be sent: urgent ones (a room waiting
    /// in "preparing") first, then those read ahead (a room still in its lobby), each oldest first.
    public private(set) var queue: [(id: Int, timeoutMs: Int, urgent: Bool)] = []
    /// When the worker failed within the current budget window.
    public private(set) var failures: [Int] = []
    public private(set) var givenUpUntilMs: Int?
    public private(set) var lastProblem: String?
    /// The server is stopping: nothing more is read.
    public private(set) var shutDown = false

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.worker == rhs.worker && lhs.queue.map(\.id) == rhs.queue.map(\.id) && lhs.failures == rhs.failures
            && lhs.givenUpUntilMs == rhs.givenUpUntilMs
    }

    /// Whether a request made now would be tried (false while given up).
    public func isAvailable(atMs now: Int) -> Bool {
        givenUpUntilMs.map { now >= $0 } ?? true
    }

    public mutating func submit(id: Int, timeoutMs: Int, urgent: Bool = true, nowMs now: Int) -> [Directive] {
        guard !shutDown else { return [.fail(id: id, .unavailable(Self.stopping))] }
        if let until = givenUpUntilMs {
            guard now >= until else { return [.fail(id: id, .unavailable(lastProblem ?? "it kept failing"))] }
            givenUpUntilMs = nil
            failures = []
        }
        var directives: [Directive] = []
        if urgent {
            if queue.count >= limits.maxQueued {
                // Full: the newest request read ahead gives its place (its room is still in the lobby, and
                // asks again at start); only a queue full of rooms waiting refuses one more.
                guard let readAhead = queue.lastIndex(where: { !$0.urgent }) else { return [.fail(id: id, .queueFull)] }
                directives.append(.fail(id: queue.remove(at: readAhead).id, .queueFull))
            }
            queue.insert((id, timeoutMs, true), at: queue.firstIndex { !$0.urgent } ?? queue.endIndex)
        } else {
            guard queue.count < limits.maxQueued - limits.urgentReserve else { return [.fail(id: id, .queueFull)] }
            queue.append((id, timeoutMs, false))
        }
        switch worker {
        case .stopped:
            let deadline = now + limits.startTimeoutMs
            worker = .starting(deadlineMs: deadline)
            return directives + [.launch, .wake(atMs: deadline)]
        case .idle:
            return directives + sendNext(nowMs: now)
        case .starting, .working, .stopping:
            return directives
        }
    }

    /// Starts the worker ahead of its first request (a room that will need it was created), so the first
    /// sentence does not wait for Python and the voices to load.
    public mutating func warmUp(nowMs now: Int) -> [Directive] {
        guard case .stopped = worker, isAvailable(atMs: now), !shutDown else { return [] }
        let deadline = now + limits.startTimeoutMs
        worker = .starting(deadlineMs: deadline)
        return [.launch, .wake(atMs: deadline)]
    }

    /// A request read ahead that a room now waits for: it goes before the other read-ahead requests.
    public mutating func promote(id: Int) -> [Directive] {
        guard let index = queue.firstIndex(where: { $0.id == id && !$0.urgent }) else { return [] }
        let request = queue.remove(at: index)
        queue.insert((request.id, request.timeoutMs, true), at: queue.firstIndex { !$0.urgent } ?? queue.endIndex)
        return []
    }

    static let stopping = "the server is stopping"

    /// The server is stopping: every request waiting or being read fails now, the worker is killed, and
    /// nothing is read or launched again.
    public mutating func shutDown(nowMs now: Int) -> [Directive] {
        shutDown = true
        lastProblem = Self.stopping
        var directives: [Directive] = queue.map { .fail(id: $0.id, .unavailable(Self.stopping)) }
        queue = []
        switch worker {
        case .stopped, .stopping:
            return directives
        case .working(let id, _):
            directives.append(.fail(id: id, .unavailable(Self.stopping)))
        case .starting, .idle:
            break
        }
        worker = .stopping
        return directives + [.kill]
    }

    /// The worker printed its ready line.
    public mutating func ready(nowMs now: Int) -> [Directive] {
        guard case .starting = worker else { return [] }
        worker = .idle
        return sendNext(nowMs: now)
    }

    /// The worker answered `id` (audio or an error of its own, which `rejected` carries).
    public mutating func answered(id: Int, rejected: String? = nil, nowMs now: Int) -> [Directive] {
        guard case .working(let current, _) = worker, current == id else { return [] }
        worker = .idle
        return (rejected.map { [.fail(id: id, .rejected($0))] } ?? []) + sendNext(nowMs: now)
    }

    /// The worker said it could not start (`{"ready": false}`), or could not be launched at all.
    public mutating func launchFailed(_ reason: String, nowMs now: Int) -> [Directive] {
        lastProblem = reason
        switch worker {
        case .starting:
            // Counted now; the process still has to exit (the shell reports `exited` for one that never ran).
            failures.append(now)
            worker = .stopping
            return [.kill]
        default:
            return []
        }
    }

    /// The worker process is gone (it exited, crashed or was killed).
    public mutating func exited(nowMs now: Int) -> [Directive] {
        var directives: [Directive] = []
        switch worker {
        case .stopped:
            return []
        case .stopping:
            break  // Counted when it was killed.
        case .starting:
            lastProblem = lastProblem ?? "the worker exited before it was ready"
            failures.append(now)
        case .idle:
            lastProblem = "the worker exited"
            failures.append(now)
        case .working(let id, _):
            lastProblem = "the worker exited while reading"
            failures.append(now)
            directives.append(.fail(id: id, .workerDied))
        }
        worker = .stopped
        return shutDown ? directives : directives + afterFailure(nowMs: now)
    }

    public mutating func tick(nowMs now: Int) -> [Directive] {
        switch worker {
        case .starting(let deadline) where now >= deadline:
            lastProblem = "the worker did not get ready in \(limits.startTimeoutMs / 1_000) s"
            failures.append(now)
            worker = .stopping
            return [.kill]
        case .working(let id, let deadline) where now >= deadline:
            lastProblem = "the worker did not answer in time"
            failures.append(now)
            worker = .stopping
            return [.fail(id: id, .timedOut), .kill]
        case .starting(let deadline), .working(_, let deadline):
            return [.wake(atMs: deadline)]
        default:
            return []
        }
    }

    private mutating func sendNext(nowMs now: Int) -> [Directive] {
        guard case .idle = worker, !queue.isEmpty else { return [] }
        let next = queue.removeFirst()
        let deadline = now + next.timeoutMs
        worker = .working(id: next.id, deadlineMs: deadline)
        return [.send(id: next.id), .wake(atMs: deadline)]
    }

    /// After a failure has been counted and the worker is stopped: start again for the waiting requests,
    /// or give up for a while if the budget is spent.
    private mutating func afterFailure(nowMs now: Int) -> [Directive] {
        failures.removeAll { $0 <= now - limits.budgetWindowMs }
        if failures.count > limits.restartBudget {
            givenUpUntilMs = now + limits.coolDownMs
            let waiting = queue
            queue = []
            return waiting.map { .fail(id: $0.id, .unavailable(lastProblem ?? "it kept failing")) }
        }
        guard !queue.isEmpty else { return [] }
        let deadline = now + limits.startTimeoutMs
        worker = .starting(deadlineMs: deadline)
        return [.launch, .wake(atMs: deadline)]
    }
}
