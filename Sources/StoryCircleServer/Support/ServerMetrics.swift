import Locking
import StoryCircleCore

/// The application's counters for `/metrics` (the transport keeps its own). Thread-safe.
public final class ServerMetrics: Sendable {
    private struct State {
        var errorsSent: [ErrorCode: Int] = [:]
        var answersAccepted = 0
        var roomsCreated = 0
        var roomsRestored = 0
        var storageFailures = 0
        var roomsRebuilt = 0
        var roomLeasesLost = 0
        var narrationsPrepared = 0
        var narrationsFailed = 0
        var sentencesSynthesized = 0
        var audioCacheHits = 0
        var joinsRateLimited = 0
        var joinsHeld = 0
    }

    private let state = Locked(State())

    public init() {}

    func errorSent(_ code: ErrorCode) { state.withLock { $0.errorsSent[code, default: 0] += 1 } }
    func answerAccepted() { state.withLock { $0.answersAccepted += 1 } }
    func roomCreated() { state.withLock { $0.roomsCreated += 1 } }
    func roomRestored() { state.withLock { $0.roomsRestored += 1 } }
    func storageFailed() { state.withLock { $0.storageFailures += 1 } }
    func roomRebuilt() { state.withLock { $0.roomsRebuilt += 1 } }
    func roomLeaseLost() { state.withLock { $0.roomLeasesLost += 1 } }
    func narrationPrepared(success: Bool) { state.withLock { if success { $0.narrationsPrepared += 1 } else { $0.narrationsFailed += 1 } } }
    func joinRateLimited() { state.withLock { $0.joinsRateLimited += 1 } }
    func joinHeld() { state.withLock { $0.joinsHeld += 1 } }
    public func sentenceSynthesized() { state.withLock { $0.sentencesSynthesized += 1 } }
    public func audioCacheHit() { state.withLock { $0.audioCacheHits += 1 } }

    public var errorsSent: [ErrorCode: Int] { state.withLock { $0.errorsSent } }
    public var answersAccepted: Int { state.withLock { $0.answersAccepted } }
    public var roomsRebuilt: Int { state.withLock { $0.roomsRebuilt } }
    public var storageFailures: Int { state.withLock { $0.storageFailures } }
    public var sentencesSynthesized: Int { state.withLock { $0.sentencesSynthesized } }
    public var audioCacheHits: Int { state.withLock { $0.audioCacheHits } }
    public var joinsHeld: Int { state.withLock { $0.joinsHeld } }

    /// These counters, in Prometheus text.
    package func write(to text: inout PrometheusText) {
        state.withLock { state in
            text.family("storycircle_errors_sent_total", .counter, "Refusals sent to clients, by error code.", samples: ErrorCode.allCases.compactMap { code in
                state.errorsSent[code].map { ("code=\"\(code.rawValue)\"", $0) }
            })
            text.counter("storycircle_answers_accepted_total", "Answers stored and acknowledged.", state.answersAccepted)
            text.counter("storycircle_rooms_created_total", "Rooms created.", state.roomsCreated)
            text.counter("storycircle_rooms_restored_total", "Rooms brought back from storage (after a restart, or when asked for).", state.roomsRestored)
            text.counter("storycircle_storage_failures_total", "Attempts to store a room record that failed (each retry counts).", state.storageFailures)
            text.counter("storycircle_rooms_rebuilt_total", "Rooms rebuilt from storage after giving up on a record.", state.roomsRebuilt)
            text.counter("storycircle_room_leases_lost_total", "Rooms stopped on this node because their lease was lost (another node may run them).", state.roomLeasesLost)
            text.counter("storycircle_narrations_prepared_total", "Narrations prepared.", state.narrationsPrepared)
            text.counter("storycircle_narrations_failed_total", "Narrations that could not be prepared.", state.narrationsFailed)
            text.counter("storycircle_sentences_synthesized_total", "Sentences synthesised by espeak-ng (cache misses).", state.sentencesSynthesized)
            text.counter("storycircle_audio_cache_hits_total", "Sentences found in the audio cache.", state.audioCacheHits)
            text.counter("storycircle_joins_rate_limited_total", "Hellos refused by the per-address rate limit.", state.joinsRateLimited)
            text.counter("storycircle_joins_held_total", "Hellos answered late because their address had spent its wrong codes.", state.joinsHeld)
        }
    }
}

/// The Prometheus text format (version 0.0.4), the one way every `/metrics` figure is written: a family is
/// its `# HELP` and `# TYPE` lines, then its samples.
public struct PrometheusText: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge
    }

    public private(set) var lines: [String] = []

    public init() {}

    /// A family of samples told apart by labels (`phase="lobby"`); its header even with no sample yet.
    public mutating func family(_ name: String, _ kind: Kind, _ help: String, samples: [(labels: String, value: Int)]) {
        lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(kind.rawValue)"]
        lines += samples.map { "\(name){\($0.labels)} \($0.value)" }
    }

    /// One figure; nil (a figure that could not be read) leaves the family out rather than make one up.
    public mutating func metric(_ name: String, _ kind: Kind, _ help: String, _ value: String?) {
        guard let value else { return }
        lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(kind.rawValue)", "\(name) \(value)"]
    }

    public mutating func counter(_ name: String, _ help: String, _ value: Int) { metric(name, .counter, help, String(value)) }
    public mutating func gauge(_ name: String, _ help: String, _ value: Int) { metric(name, .gauge, help, String(value)) }

    public var text: String { lines.joined(separator: "\n") + "\n" }
}
