import Foundation
import Testing
import Speech
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// Syntheses are counted per narrator, through its own `ServerMetrics`, because the espeak-ng engine is
/// shared with every suite in the process; each test has its own cache folder.
@Suite("Narration and the audio cache")
struct NarrationTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-audio-\(UUID().uuidString)")

    private func request(_ sentences: [String], voice: String = "en", preparation: Int = 1) -> NarrationRequest {
        NarrationRequest(preparation: preparation, sentences: sentences, settings: NarrationSettings(voice: voice), questions: nil)
    }

    @Test func aSecondPreparationOfTheSameStorySynthesisesNothing() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let metrics = ServerMetrics()
        let narrator = SpeechNarrator(cache: try AudioCache(directory: folder, maxBytes: 10_000_000), metrics: metrics)
        let sentences = ["Pip was a small robot \(UUID().uuidString.prefix(4)).", "He lost a gear.", "It was blue."]

        let first = try await narrator.prepare(request(sentences)) { _, _ in }
        #expect(metrics.sentencesSynthesized == 3)
        let second = try await narrator.prepare(request(sentences)) { _, _ in }
        #expect(metrics.sentencesSynthesized == 3, "every sentence came from the cache")
        #expect(metrics.audioCacheHits == 3)
        #expect(second == first)

        // The cache is on disk: a new server process finds it.
        let restartedMetrics = ServerMetrics()
        let restarted = SpeechNarrator(cache: try AudioCache(directory: folder, maxBytes: 10_000_000), metrics: restartedMetrics)
        let third = try await restarted.prepare(request(sentences)) { _, _ in }
        #expect(restartedMetrics.sentencesSynthesized == 0)
        #expect(restartedMetrics.audioCacheHits == 3)
        #expect(third == first)
    }

    @Test func thePlanHasDurationsTimingsAndPlayableAudio() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try AudioCache(directory: folder, maxBytes: 10_000_000)
        let narrator = SpeechNarrator(cache: cache, metrics: ServerMetrics())
        let progress = ProgressLog()
        let plan = try await narrator.prepare(NarrationRequest(preparation: 1, sentences: ["Dot rode her cart all around the workshop.", "The end."], settings: NarrationSettings(voice: "en-gb"), questions: ["What colour? … Red … Blue"])) { ready, total in
            progress.append(ready, total)
        }
        #expect(progress.entries == [[1, 3], [2, 3], [3, 3]])
        #expect(plan.questionAudio?.count == 1)
        for sentence in plan.sentences {
            let key = try #require(sentence.audio?.dropFirst("/audio/".count).dropLast(".mp3".count)).description
            let audio = try #require(cache.audio(key))
            let frames = try #require(MP3Frames.scan(audio))
            #expect(frames.durationMs == sentence.durationMs, "the plan gives the duration the file plays")
            #expect(sentence.words.map(\.at) == sentence.words.map(\.at).sorted())
            #expect(sentence.words.allSatisfy { $0.at >= 40 && $0.at < sentence.durationMs }, "shifted by the encoder delay, inside the clip")
        }
    }

    @Test func anUnknownVoiceGivesAFriendlyMessage() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let narrator = SpeechNarrator(cache: try AudioCache(directory: folder, maxBytes: 1_000_000), metrics: ServerMetrics())
        await #expect(performing: { _ = try await narrator.prepare(request(["Hello."], voice: "xx-nowhere")) { _, _ in } }, throws: { error in
            // A code and the voice for the teacher's page to word; English for the API and the CLI.
            (error as? NarrationError)?.narrationProblem == NarrationProblem(.voiceNotInstalled,
                "The voice \"xx-nowhere\" is not installed on this computer. Choose another voice in Settings, then press Try again.",
                params: ["voice": "xx-nowhere"])
        })
    }

    @Test func theCacheStaysWithinItsBoundByEvictingTheLeastRecentlyUsed() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try AudioCache(directory: folder, maxBytes: 10_000)
        let clip = [UInt8](repeating: 7, count: 4_000)
        let keys = (0..<4).map { AudioCache.key(text: "sentence \($0)", voice: "en", rate: 150, pitch: 50, engineVersion: "test") }
        _ = try cache.store(clip, durationMs: 1, words: [], key: keys[0])
        _ = try cache.store(clip, durationMs: 1, words: [], key: keys[1])
        #expect(cache.clip(keys[0]) != nil, "touching the first makes the second the oldest")
        _ = try cache.store(clip, durationMs: 1, words: [], key: keys[2])
        #expect(cache.totalBytes <= 10_000)
        #expect(cache.clip(keys[1]) == nil)
        #expect(cache.clip(keys[0]) != nil)
        #expect(cache.clip(keys[2]) != nil)
        #expect(!FileManager.default.fileExists(atPath: cache.audioURL(keys[1]).path), "evicted files are deleted")
        let reopened = try AudioCache(directory: folder, maxBytes: 10_000)
        #expect(reopened.count == 2)
    }

    @Test func roomsPreparingTheSameSentenceAtOnceShareOneSynthesis() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let metrics = ServerMetrics()
        let narrator = SpeechNarrator(cache: try AudioCache(directory: folder, maxBytes: 10_000_000), metrics: metrics)
        let sentences = ["A shared sentence \(UUID().uuidString.prefix(6)) for every room."]
        try await withThrowingTaskGroup(of: NarrationPlan.self) { group in
            for _ in 0..<5 { group.addTask { try await narrator.prepare(request(sentences)) { _, _ in } } }
            for try await _ in group {}
        }
        #expect(metrics.sentencesSynthesized == 1)
    }

    @Test func audioIsServedWithCachingHeaders() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try AudioCache(directory: folder, maxBytes: 1_000_000)
        let key = AudioCache.key(text: "x", voice: "en", rate: 150, pitch: 50, engineVersion: "test")
        _ = try cache.store([1, 2, 3], durationMs: 1, words: [], key: key)
        let ok = cache.response(for: "\(key).mp3", ifNoneMatch: nil)
        #expect(ok.status == 200)
        #expect(ok.contentType == "audio/mpeg")
        #expect(ok.body == [1, 2, 3])
        #expect(ok.header("etag") == "\"\(key)\"")
        #expect(ok.header("cache-control") == "public, max-age=31536000, immutable")
        #expect(cache.response(for: "\(key).mp3", ifNoneMatch: "\"\(key)\"").status == 304)
        #expect(cache.response(for: "../../etc/passwd", ifNoneMatch: nil).status == 404)
        #expect(cache.response(for: "\(String(repeating: "0", count: 64)).mp3", ifNoneMatch: nil).status == 404)
    }
}

final class ProgressLog: @unchecked Sendable {
    // `@unchecked Sendable`: guarded by `lock`.
    private let lock = NSLock()
    private var log: [[Int]] = []

    func append(_ ready: Int, _ total: Int) {
        lock.lock(); log.append([ready, total]); lock.unlock()
    }

    var entries: [[Int]] {
        lock.lock(); defer { lock.unlock() }
        return log
    }
}
