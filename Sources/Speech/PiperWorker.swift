import Foundation
import Glibc
import Locking

/// The resident Piper worker process (`scripts/piper-worker.py`) and the shell around it: one per node,
/// launched on first use (or when a room that will need it is created), with the rules of
/// `PiperWorkerPolicy` (a bounded queue, a deadline per request, a restart budget).
///
/// Callers only put an event under a lock and await their answer, so nothing here blocks Swift's
/// cooperative pool: the process is launched and killed by the `piper-supervisor` thread, and each
/// process's input is written by a `piper-writer` thread and its output read by a `piper-reader` thread of
/// its own. So a worker that stops reading (stopped, stuck) blocks only its writer: the supervisor still
/// keeps the deadlines and kills it.
public final class PiperWorker: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// The Python that has `piper-tts` installed (the project's `.venv-voice/bin/python`).
        public var python: String
        /// `scripts/piper-worker.py`.
        public var script: String
        /// The voices to load: name and model file (`.onnx`, its `.onnx.json` beside it).
        public var voices: [(name: String, model: String)]
        public var niceness = 10
        /// onnxruntime's threads for one synthesis: 1 keeps the worker to one core; 2 reads a sentence in
        /// about two thirds of the time (`piperThreads`, which picks 2 wherever there are two cores).
        public var threads = 1
        public var limits = PiperWorkerPolicy.Limits()

        public init(python: String, script: String, voices: [(name: String, model: String)]) {
            self.python = python
            self.script = script
            self.voices = voices
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.python == rhs.python && lhs.script == rhs.script && lhs.niceness == rhs.niceness && lhs.threads == rhs.threads && lhs.limits == rhs.limits
                && lhs.voices.map(\.name) == rhs.voices.map(\.name) && lhs.voices.map(\.model) == rhs.voices.map(\.model)
        }
    }

    /// What `/healthz` and `/metrics` say about the worker.
    public struct Status: Sendable, Equatable {
        public var state: String
        public var pid: Int32?
        public var launches: Int
        public var failures: Int
        public var givenUp: Bool
        public var lastProblem: String?
    }

    private enum Event {
        case submit(id: Int, Job)
        case warmUp
        case shutDown
        case promote(voice: String, text: String)
        case ready(generation: Int)
        case launchFailed(generation: Int, String)
        case answered(generation: Int, id: Int, Result<SpokenText, PiperWorkerPolicy.Failure>)
        case exited(generation: Int)
    }

    private struct Job {
        var voice: String
        var text: String
        var lengthScale: Double
        var urgent: Bool
        var continuation: CheckedContinuation<Result<SpokenText, PiperWorkerPolicy.Failure>, Never>
    }

    private struct Shared {
        var events: [Event] = []
        var nextId = 1
        var status = Status(state: "stopped", pid: nil, launches: 0, failures: 0, givenUp: false, lastProblem: nil)
    }

    public let configuration: Configuration
    private let shared = LockedCondition(Shared())

    public init(configuration: Configuration) {
        self.configuration = configuration
        let supervisor = Supervisor(configuration: configuration, shared: shared)
        let thread = Thread { supervisor.run() }
        thread.name = "piper-supervisor"
        thread.start()
    }

    /// Reads `text` with `voice` (one of `configuration.voices`): PCM, with no word timings (Piper's voices
    /// give none; `WordTimingEstimate` makes them).
    /// `urgent: false` for reading ahead: sent only when no urgent request waits.
    public func synthesize(_ text: String, voice: String, lengthScale: Double = 1.0, urgent: Bool = true) async -> Result<SpokenText, PiperWorkerPolicy.Failure> {
        await withCheckedContinuation { continuation in
            shared.withLockAndWake { shared in
                let id = shared.nextId
                shared.nextId += 1
                shared.events.append(.submit(id: id, Job(voice: voice, text: text, lengthScale: lengthScale, urgent: urgent, continuation: continuation)))
            }
        }
    }

    /// A room now waits for `text`, which was asked for as read-ahead: it goes first.
    public func promote(_ text: String, voice: String) {
        shared.withLockAndWake { $0.events.append(.promote(voice: voice, text: text)) }
    }

    /// Launches the worker now if it is not running, so the first sentence does not wait for it.
    public func warmUp() {
        shared.withLockAndWake { $0.events.append(.warmUp) }
    }

    /// The server is stopping: whatever waits for the worker fails now (as `.unavailable`), the process is
    /// killed and none is started again.
    public func stop() {
        shared.withLockAndWake { $0.events.append(.shutDown) }
    }

    public var status: Status {
        shared.withLock { $0.status }
    }

    /// Milliseconds on the monotonic clock.
    static func nowMs() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000 + time.tv_nsec / 1_000_000
    }

    /// Everything the supervisor thread owns: the policy, the running process, the jobs by id.
    private final class Supervisor: @unchecked Sendable {
        let configuration: Configuration
        let shared: LockedCondition<Shared>
        var policy: PiperWorkerPolicy
        var jobs: [Int: Job] = [:]
        var process: Process?
        var input: Writer?
        var generation = 0
        var wakeAtMs: Int?

        init(configuration: Configuration, shared: LockedCondition<Shared>) {
            self.configuration = configuration
            self.shared = shared
            self.policy = PiperWorkerPolicy(limits: configuration.limits)
        }

        func run() {
            while true {
                if let wakeAtMs {
                    let wait = max(0, wakeAtMs - PiperWorker.nowMs())
                    _ = shared.waitUntil({ !$0.events.isEmpty }, timeout: .milliseconds(wait))
                } else {
                    shared.waitUntil({ !$0.events.isEmpty }, then: { _ in })
                }
                let events = shared.withLock { shared in
                    let events = shared.events
                    shared.events = []
                    return events
                }
                for event in events { handle(event) }
                let now = PiperWorker.nowMs()
                if let wake = wakeAtMs, now >= wake {
                    wakeAtMs = nil
                    carryOut(policy.tick(nowMs: now))
                }
                publishStatus()
            }
        }

        private func handle(_ event: Event) {
            let now = PiperWorker.nowMs()
            switch event {
            case .submit(let id, let job):
                jobs[id] = job
                carryOut(policy.submit(id: id, timeoutMs: configuration.limits.timeoutMs(characters: job.text.count), urgent: job.urgent, nowMs: now))
            case .warmUp:
                carryOut(policy.warmUp(nowMs: now))
            case .shutDown:
                carryOut(policy.shutDown(nowMs: now))
            case .promote(let voice, let text):
                for (id, job) in jobs where job.voice == voice && job.text == text && !job.urgent {
                    jobs[id]?.urgent = true
                    carryOut(policy.promote(id: id))
                }
            case .ready(let from) where from == generation:
                carryOut(policy.ready(nowMs: now))
            case .launchFailed(let from, let reason) where from == generation:
                carryOut(policy.launchFailed(reason, nowMs: now))
            case .answered(let from, let id, let result) where from == generation:
                switch result {
                case .success(let spoken):
                    let directives = policy.answered(id: id, nowMs: now)
                    jobs.removeValue(forKey: id)?.continuation.resume(returning: .success(spoken))
                    carryOut(directives)
                case .failure(let failure):
                    carryOut(policy.answered(id: id, rejected: failure.description, nowMs: now))
                }
            case .exited(let from) where from == generation:
                process = nil
                input?.close()
                input = nil
                carryOut(policy.exited(nowMs: now))
            case .ready, .launchFailed, .answered, .exited:
                break  // From a process that is already gone.
            }
        }

        private func carryOut(_ directives: [PiperWorkerPolicy.Directive]) {
            for directive in directives {
                switch directive {
                case .launch:
                    launch()
                case .send(let id):
                    send(id)
                case .kill:
                    if let pid = process?.processIdentifier { Glibc.kill(pid, SIGKILL) }
                case .fail(let id, let failure):
                    jobs.removeValue(forKey: id)?.continuation.resume(returning: .failure(failure))
                case .wake(let at):
                    wakeAtMs = min(wakeAtMs ?? at, at)
                }
            }
        }

        private func publishStatus() {
            let state: String
            switch policy.worker {
            case .stopped: state = policy.isAvailable(atMs: PiperWorker.nowMs()) ? "stopped" : "given-up"
            case .starting: state = "starting"
            case .idle: state = "ready"
            case .working: state = "reading"
            case .stopping: state = "stopping"
            }
            let pid = process?.processIdentifier
            let failures = policy.failures.count
            let givenUp = !policy.isAvailable(atMs: PiperWorker.nowMs())
            let problem = policy.lastProblem
            shared.withLock {
                $0.status.state = state
                $0.status.pid = pid
                $0.status.failures = failures
                $0.status.givenUp = givenUp
                $0.status.lastProblem = problem
            }
        }

        private func launch() {
            generation += 1
            let generation = generation
            shared.withLock { $0.status.launches += 1 }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: configuration.python)
            // `--threads` only when it is not the worker's own default: a school's worker script from before
            // the option still starts.
            process.arguments = ["-u", configuration.script, "--nice", String(configuration.niceness)]
                + (configuration.threads == 1 ? [] : ["--threads", String(configuration.threads)])
                + configuration.voices.flatMap { ["--voice", "\($0.name)=\($0.model)"] }
            let stdin = Pipe()
            let stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                handle(.launchFailed(generation: generation, "\(configuration.python) could not be started: \(error.localizedDescription)"))
                handle(.exited(generation: generation))
                return
            }
            self.process = process
            let writer = Writer(descriptor: stdin.fileHandleForWriting.fileDescriptor, keeping: stdin)
            self.input = writer
            let writing = Thread { writer.run() }
            writing.name = "piper-writer"
            writing.start()
            let reader = Reader(handle: stdout.fileHandleForReading, process: process, generation: generation, shared: shared)
            let thread = Thread { reader.run() }
            thread.name = "piper-reader"
            thread.start()
        }

        private func send(_ id: Int) {
            guard let job = jobs[id], let input else {
                handle(.exited(generation: generation))
                return
            }
            let request: [String: Any] = ["id": id, "voice": job.voice, "text": job.text, "lengthScale": job.lengthScale]
            guard var line = try? JSONSerialization.data(withJSONObject: request) else { return }
            line.append(0x0A)
            input.write(line)
        }
    }

    /// Writes one process's requests in order, on a thread of its own, until it is closed or the pipe
    /// breaks (the worker is gone: its reader reports the exit). Lines not yet written when it is closed
    /// are dropped; their requests were already failed by the policy.
    private final class Writer: @unchecked Sendable {
        private struct State {
            var lines: [Data] = []
            var closed = false
        }

        private let descriptor: Int32
        /// Holds the pipe, whose handle closes the descriptor when it goes.
        private let pipe: Pipe
        private let state = LockedCondition(State())

        init(descriptor: Int32, keeping pipe: Pipe) {
            self.descriptor = descriptor
            self.pipe = pipe
        }

        func write(_ line: Data) {
            state.withLockAndWake { $0.lines.append(line) }
        }

        func close() {
            state.withLockAndWake { $0.closed = true }
        }

        func run() {
            // A write to a worker that died raises SIGPIPE on this thread: blocked here, the write just
            // fails with EPIPE instead of ending the server.
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            while true {
                let next = state.waitUntil({ !$0.lines.isEmpty || $0.closed }) { state -> Data? in
                    state.closed ? nil : state.lines.removeFirst()
                }
                guard let next, writeAll(next) else { break }
            }
            try? pipe.fileHandleForWriting.close()
        }

        private func writeAll(_ data: Data) -> Bool {
            data.withUnsafeBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                    offset += written
                }
                return true
            }
        }
    }

    /// Reads one process's answers until its output closes, then reaps it.
    private final class Reader: @unchecked Sendable {
        let handle: FileHandle
        let process: Process
        let generation: Int
        let shared: LockedCondition<Shared>
        var buffer: [UInt8] = []

        init(handle: FileHandle, process: Process, generation: Int, shared: LockedCondition<Shared>) {
            self.handle = handle
            self.process = process
            self.generation = generation
            self.shared = shared
        }

        func post(_ event: Event) {
            shared.withLockAndWake { $0.events.append(event) }
        }

        func run() {
            while let line = readLine() {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { break }
                if let ready = object["ready"] as? Bool {
                    if ready {
                        post(.ready(generation: generation))
                    } else {
                        post(.launchFailed(generation: generation, (object["error"] as? String) ?? "the worker could not start"))
                    }
                    continue
                }
                guard let id = object["id"] as? Int else { break }
                if object["ok"] as? Bool == true, let count = object["bytes"] as? Int, let rate = object["sampleRate"] as? Int,
                   count >= 0, count % 2 == 0, let bytes = read(count) {
                    let samples = bytes.withUnsafeBytes { raw in
                        (0..<(count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
                    }
                    post(.answered(generation: generation, id: id, .success(SpokenText(samples: samples, sampleRate: rate, words: []))))
                } else if object["ok"] as? Bool == false {
                    post(.answered(generation: generation, id: id, .failure(.rejected((object["error"] as? String) ?? "unknown"))))
                } else {
                    break
                }
            }
            // Its output closed or made no sense: make sure it is gone, reap it, and say so.
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            post(.exited(generation: generation))
        }

        private func fill() -> Bool {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { return false }
            buffer += chunk
            return true
        }

        private func readLine() -> [UInt8]? {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    return line
                }
                guard fill() else { return nil }
            }
        }

        private func read(_ count: Int) -> [UInt8]? {
            while buffer.count < count {
                guard fill() else { return nil }
            }
            let bytes = Array(buffer.prefix(count))
            buffer.removeFirst(count)
            return bytes
        }
    }
}
