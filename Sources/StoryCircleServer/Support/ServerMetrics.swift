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
    public func sentenceSynthesized() { state.withLock { $0.sentencesSynthesized += 1 } }
    public func audioCacheHit() { state.withLock { $0.audioCacheHits += 1 } }

    public var errorsSent: [ErrorCode: Int] { state.withLock { $0.errorsSent } }
    public var answersAccepted: Int { state.withLock { $0.answersAccepted } }
    public var roomsRebuilt: Int { state.withLock { $0.roomsRebuilt } }
    public var storageFailures: Int { state.withLock { $0.storageFailures } }
    public var sentencesSynthesized: Int { state.withLock { $0.sentencesSynthesized } }
    public var audioCacheHits: Int { state.withLock { $0.audioCacheHits } }

    /// Prometheus text lines for these counters.
    package func prometheusLines() -> [String] {
        state.withLock { state in
            var lines = [
                "# HELP storycircle_errors_sent_total Refusals sent to clients, by error code.",
                "# TYPE storycircle_errors_sent_total counter",
            ]
            for code in ErrorCode.allCases where state.errorsSent[code] != nil {
                lines.append("storycircle_errors_sent_total{code=\"\(code.rawValue)\"} \(state.errorsSent[code]!)")
            }
            let counters: [(String, String, Int)] = [
                ("storycircle_answers_accepted_total", "Answers stored and acknowledged.", state.answersAccepted),
                ("storycircle_rooms_created_total", "Rooms created.", state.roomsCreated),
                ("storycircle_rooms_restored_total", "Rooms brought back from storage (after a restart, or when asked for).", state.roomsRestored),
                ("storycircle_storage_failures_total", "Attempts to store a room record that failed (each retry counts).", state.storageFailures),
                ("storycircle_rooms_rebuilt_total", "Rooms rebuilt from storage after giving up on a record.", state.roomsRebuilt),
                ("storycircle_room_leases_lost_total", "Rooms stopped on this node because their lease was lost (another node may run them).", state.roomLeasesLost),
                ("storycircle_narrations_prepared_total", "Narrations prepared.", state.narrationsPrepared),
                ("storycircle_narrations_failed_total", "Narrations that could not be prepared.", state.narrationsFailed),
                ("storycircle_sentences_synthesized_total", "Sentences synthesised by espeak-ng (cache misses).", state.sentencesSynthesized),
                ("storycircle_audio_cache_hits_total", "Sentences found in the audio cache.", state.audioCacheHits),
                ("storycircle_joins_rate_limited_total", "Hellos refused by the per-address rate limit.", state.joinsRateLimited),
            ]
            for (name, help, value) in counters {
                lines += ["# HELP \(name) \(help)", "# TYPE \(name) counter", "\(name) \(value)"]
            }
            return lines
        }
    }
}
