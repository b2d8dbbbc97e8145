import Foundation
import Testing
import Locking
import Speech
@testable import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer

/// The narrator with a real worker process that misbehaves: a Python script speaking the worker's
/// protocol (scripts/piper-worker.py) that answers one sentence per launch and dies on the next. It never
/// needs Piper itself, so this runs wherever Python does.
@Suite("Natural voice narration")
struct NaturalVoiceNarrationTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-natural-\(UUID().uuidString)")

    /// A voice file that passes the checks (the fake worker never reads it).
    func voice() throws -> VoiceCatalog.NaturalVoice {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = folder.appendingPathComponent("en_US-fake-medium.onnx")
        try Data([0x08, 0x07] + [UInt8](repeating: 1, count: 2_048)).write(to: model)
        try Data(#"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"}, "language": {"code": "en_US"}}"#.utf8)
            .write(to: URL(fileURLWithPath: model.path + ".json"))
        let file = try PiperVoiceFile.inspect(modelPath: model.path).get()
        return VoiceCatalog.NaturalVoice(file: file, digest: ModelDigest(path: model.path, cacheFile: folder.appendingPathComponent("hashes.json")))
    }

    /// Answers its first request with half a second of tone, then exits on the second without answering.
    func flakyWorker() throws -> String {
        let script = folder.appendingPathComponent("flaky-worker.py")
        try Data("""
        import json, math, struct, sys
        out = sys.stdout.buffer
        out.write(b'{"ready": true, "voices": []}\\n'); out.flush()
        for n, line in enumerate(sys.stdin.buffer):
            if n == 1:
                sys.exit(3)
            request = json.loads(line)
            pcm = b"".join(struct.pack("<h", int(8000 * math.sin(i * 0.06))) for i in range(11025))
            out.write(json.dumps({"id": request["id"], "ok": True, "sampleRate": 22050, "bytes": len(pcm)}).encode() + b"\\n" + pcm)
            out.flush()
        """.utf8).write(to: script)
        return script.path
    }

    func narrator(python: String, script: String, voice: VoiceCatalog.NaturalVoice, cache: AudioCache) -> (SpeechNarrator, PiperWorker) {
        var configuration = PiperWorker.Configuration(python: python, script: script, voices: [(voice.file.name, voice.file.modelPath)])
        configuration.limits.restartBudget = 2
        let worker = PiperWorker(configuration: configuration)
        let catalog = VoiceCatalog(espeak: [], natural: [voice], problems: [], piper: .init(python: python, worker: script), piperMissing: nil)
        return (SpeechNarrator(cache: cache, metrics: ServerMetrics(), voices: catalog, piper: worker), worker)
    }

    static let sentences = [
        "Pip was a small robot.", "He lived in a busy workshop.", "Every morning he counted his gears.",
        "One day a gear was missing.", "A mouse had taken it.", "They became friends.",
    ]

    @Test func aWorkerThatKeepsDyingPutsTheWholeStoryOnEspeakNgNeverAMix() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let voice = try voice()
        let cache = try AudioCache(directory: folder.appendingPathComponent("cache"), maxBytes: 64 << 20)
        let (narrator, worker) = narrator(python: "/usr/bin/python3", script: try flakyWorker(), voice: voice, cache: cache)
        let request = NarrationRequest(preparation: 1, sentences: Self.sentences, settings: NarrationSettings(voice: voice.id), questions: nil)
        let plan = try await narrator.prepare(request) { _, _ in }
        #expect(plan.notice == .naturalVoiceFallback)
        #expect(worker.status.givenUp)
        #expect(worker.status.launches == 3, "the first launch and two restarts, then given up")

        // Every sentence is the clip espeak-ng makes for the voice's own espeak-ng voice: the ones the
        // worker did read before it was given up are not in the plan.
        let espeak = SpeechNarrator(cache: cache, metrics: ServerMetrics())
        let reference = try await espeak.prepare(
            NarrationRequest(preparation: 1, sentences: Self.sentences, settings: NarrationSettings(voice: "en-us"), questions: nil)
        ) { _, _ in }
        #expect(plan.sentences.map(\.audio) == reference.sentences.map(\.audio))
        #expect(plan.sentences.map(\.words) == reference.sentences.map(\.words))
    }

    @Test func streamedSentencesOfAVoiceThatFailsMidStoryAreDroppedAndTheStoryStartsAgainInEspeakNg() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let voice = try voice()
        let cache = try AudioCache(directory: folder.appendingPathComponent("cache"), maxBytes: 64 << 20)
        let (narrator, _) = narrator(python: "/usr/bin/python3", script: try flakyWorker(), voice: voice, cache: cache)
        let steps = Locked<[NarrationStep]>([])
        let request = NarrationRequest(preparation: 1, sentences: Self.sentences, settings: NarrationSettings(voice: voice.id), questions: nil)
        let plan = try await narrator.prepare(request) { step in
            if case .progress = step { return }
            steps.withLock { $0.append(step) }
        }
        let reported = steps.withLock { $0 }
        let restart = try #require(reported.firstIndex(of: .restarted), "the natural voice failed part-way: \(reported)")
        let before = reported[..<restart].compactMap { if case .sentence(let s, let notice) = $0 { (s, notice) } else { nil } }
        #expect(!before.isEmpty, "the worker read the first sentence, streamed before it failed")
        #expect(before.map(\.0.index) == Array(0..<before.count) && before.allSatisfy { $0.1 == nil })
        // espeak-ng's plan comes whole: nothing streamed after the restart, and the plan is the story from
        // its first sentence, all of it espeak-ng's, with the teacher's notice.
        #expect(reported.count == restart + 1, "nothing streamed after the restart: \(reported)")
        #expect(plan.notice == .naturalVoiceFallback)
        #expect(plan.sentences.map(\.index) == Array(Self.sentences.indices))

        let espeak = SpeechNarrator(cache: cache, metrics: ServerMetrics())
        let reference = try await espeak.prepare(
            NarrationRequest(preparation: 1, sentences: Self.sentences, settings: NarrationSettings(voice: "en-us"), questions: nil)
        ) { _, _ in }
        #expect(plan.sentences.map(\.audio) == reference.sentences.map(\.audio), "every sentence after the restart is espeak-ng's")
        #expect(!before.contains { reference.sentences.map(\.audio).contains($0.0.audio) }, "and none before it was")
    }

    /// Reads every sentence, and dies (every launch) on a question: the only text with a question mark.
    func workerThatDiesOnQuestions() throws -> String {
        let script = folder.appendingPathComponent("question-worker.py")
        try Data("""
        import json, math, struct, sys
        out = sys.stdout.buffer
        out.write(b'{"ready": true, "voices": []}\\n'); out.flush()
        for line in sys.stdin.buffer:
            request = json.loads(line)
            if "?" in request["text"]:
                sys.exit(3)
            pcm = b"".join(struct.pack("<h", int(8000 * math.sin(i * 0.06))) for i in range(11025))
            out.write(json.dumps({"id": request["id"], "ok": True, "sampleRate": 22050, "bytes": len(pcm)}).encode() + b"\\n" + pcm)
            out.flush()
        """.utf8).write(to: script)
        return script.path
    }

    @Test func aVoiceThatFailsOnAQuestionAfterTheWholeStoryNeverReadsTheStoryAgain() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let voice = try voice()
        let cache = try AudioCache(directory: folder.appendingPathComponent("cache"), maxBytes: 64 << 20)
        let (narrator, worker) = narrator(python: "/usr/bin/python3", script: try workerThatDiesOnQuestions(), voice: voice, cache: cache)
        let questions = ["Who took the gear? … A mouse … A cat", "Where did Pip live? … A workshop … A boat"]
        let steps = Locked<[NarrationStep]>([])
        let request = NarrationRequest(preparation: 1, sentences: Self.sentences, settings: NarrationSettings(voice: voice.id), questions: questions)
        let plan = try await narrator.prepare(request) { step in
            if case .progress = step { return }
            steps.withLock { $0.append(step) }
        }
        let reported = steps.withLock { $0 }
        #expect(!reported.contains(.restarted), "the children heard the whole story: it is not read again: \(reported)")
        let streamed = reported.compactMap { if case .sentence(let s, _) = $0 { s } else { nil } }
        #expect(streamed.map(\.index) == Array(Self.sentences.indices), "every sentence streamed once, in the natural voice")
        #expect(plan.sentences == streamed, "the plan is the story the children heard")
        #expect(plan.sentences.allSatisfy { abs($0.durationMs - 500) < 120 }, "the worker's audio, not espeak-ng's")
        #expect(plan.notice == .naturalVoiceQuestionsFallback)
        #expect(worker.status.launches >= 2, "the question was asked again after a restart before the voice gave up on it")

        // The questions, all of them, are espeak-ng's clips for the voice's own espeak-ng voice.
        let espeak = SpeechNarrator(cache: cache, metrics: ServerMetrics())
        let reference = try await espeak.prepare(
            NarrationRequest(preparation: 1, sentences: Self.sentences, settings: NarrationSettings(voice: "en-us"), questions: questions)
        ) { _, _ in }
        #expect(plan.questionAudio != nil && plan.questionAudio == reference.questionAudio)
    }

    @Test func aWorkerThatAnswersReadsTheStoryWithEstimatedTimings() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let voice = try voice()
        let cache = try AudioCache(directory: folder.appendingPathComponent("cache"), maxBytes: 64 << 20)
        // The same script, with a budget that outlasts one death per sentence.
        var configuration = PiperWorker.Configuration(python: "/usr/bin/python3", script: try flakyWorker(), voices: [(voice.file.name, voice.file.modelPath)])
        configuration.limits.restartBudget = 20
        let worker = PiperWorker(configuration: configuration)
        let catalog = VoiceCatalog(espeak: [], natural: [voice], problems: [], piper: .init(python: "/usr/bin/python3", worker: configuration.script), piperMissing: nil)
        let narrator = SpeechNarrator(cache: cache, metrics: ServerMetrics(), voices: catalog, piper: worker)
        let sentences = Array(Self.sentences.prefix(3))
        let plan = try await narrator.prepare(NarrationRequest(preparation: 1, sentences: sentences, settings: NarrationSettings(voice: voice.id), questions: nil)) { _, _ in }
        #expect(plan.notice == nil)
        for sentence in plan.sentences {
            // Half a second of tone, encoded: the worker's audio, not espeak-ng's.
            #expect(abs(sentence.durationMs - 500) < 120, "\(sentence.durationMs)")
            let starts = sentence.words.map(\.at)
            #expect(!starts.isEmpty && starts == starts.sorted() && starts.allSatisfy { $0 < sentence.durationMs })
        }
        #expect(worker.status.launches >= 2, "it died and was started again")
    }

    /// Reading ahead is owned: `stop` (the server stopping) ends it and returns, even with the worker
    /// reading a sentence it will never finish.
    /// One read-ahead wanted per room: a voice changed in the lobby replaces the room's earlier one (the
    /// caller cancels it, and it is kept until it ends, so that `stop` still waits for it).
    @Test func aRoomsNewReadAheadReplacesItsEarlierOneAndStopStillEndsBoth() async throws {
        var reading = SpeechNarrator.ReadingAhead()
        // The bookkeeping does not look at the tasks: ones with nothing to do stand for read-aheads.
        let task = { Task<Void, Never> {} }
        let (first, second, other) = (task(), task(), task())
        let (firstID, secondID, otherID) = (UUID(), UUID(), UUID())
        guard case .replacing(nil) = reading.keep(first, id: firstID, room: "111111") else { Issue.record("a first read-ahead replaces nothing"); return }
        guard case .replacing(nil) = reading.keep(other, id: otherID, room: "222222") else { Issue.record("another room's is its own"); return }
        guard case .replacing(let replaced?) = reading.keep(second, id: secondID, room: "111111") else { Issue.record("the room's earlier one is replaced"); return }
        #expect(replaced == first)
        #expect(reading.running.count == 3, "the replaced one still runs until it ends")
        // The replaced one ending does not forget the room's current one.
        reading.finished(firstID)
        #expect(reading.rooms["111111"] == secondID)
        // A voice that is not read ahead: the room's current one is handed back to be cancelled.
        #expect(reading.forget(room: "111111") == second)
        #expect(reading.forget(room: "111111") == nil)
        // A read-ahead that ended before it was kept is not the room's: nothing of it stays.
        let quick = UUID()
        reading.finished(quick)
        guard case .replacing(nil) = reading.keep(task(), id: quick, room: "333333") else { Issue.record("nothing to replace"); return }
        #expect(reading.rooms["333333"] == nil && reading.running[quick] == nil && reading.done.isEmpty)
        let stopping = reading.stop()
        #expect(Set(stopping) == [second, other])
        guard case .refused = reading.keep(task(), id: UUID(), room: "111111") else { Issue.record("nothing is kept once stopped"); return }
    }

    @Test func stoppingEndsReadingAheadEvenWhileTheWorkerIsStuck() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let voice = try voice()
        let cache = try AudioCache(directory: folder.appendingPathComponent("cache"), maxBytes: 64 << 20)
        let script = folder.appendingPathComponent("silent-worker.py")
        try Data("""
        import sys
        sys.stdout.buffer.write(b'{"ready": true, "voices": []}\\n'); sys.stdout.buffer.flush()
        for line in sys.stdin.buffer:
            pass
        """.utf8).write(to: script)
        var configuration = PiperWorker.Configuration(python: "/usr/bin/python3", script: script.path, voices: [(voice.file.name, voice.file.modelPath)])
        configuration.limits.requestBaseMs = 600_000
        let worker = PiperWorker(configuration: configuration)
        let catalog = VoiceCatalog(espeak: [], natural: [voice], problems: [], piper: .init(python: "/usr/bin/python3", worker: script.path), piperMissing: nil)
        let narrator = SpeechNarrator(cache: cache, metrics: ServerMetrics(), voices: catalog, piper: worker)
        narrator.readAhead(NarrationRequest(preparation: 0, sentences: Self.sentences, settings: NarrationSettings(voice: voice.id), questions: nil), room: "123456")
        #expect(narrator.readingAheadCount == 1)
        let (stream, sink) = AsyncStream.makeStream(of: Bool.self)
        Task {
            await narrator.stop()
            sink.yield(true)
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(60))
            sink.yield(false)
        }
        var stopped = false
        for await answer in stream {
            stopped = answer
            break
        }
        timer.cancel()
        #expect(stopped, "stop returned")
        #expect(narrator.readingAheadCount == 0)
        #expect(worker.status.lastProblem == "the server is stopping")
        // Nothing is read any more: a room's request fails at once, and its story goes to espeak-ng.
        let failed = await worker.synthesize("One more.", voice: voice.file.name)
        guard case .failure(.unavailable) = failed else {
            Issue.record("after stop: \(failed)")
            return
        }
    }
}
