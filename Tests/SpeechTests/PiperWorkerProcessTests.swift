import Foundation
import Glibc
import Testing
@testable import Speech

/// `PiperWorker` with a real process: a small Python program that speaks the worker's protocol (ready
/// line, then one answer of silence per request), so the shell's threads are tested against a process
/// that can be stopped and killed, without onnxruntime or a voice.
@Suite("Piper worker process")
struct PiperWorkerProcessTests {
    static let fakeWorker = """
        import json, sys
        out = sys.stdout.buffer
        out.write(b'{"ready": true, "voices": []}\\n'); out.flush()
        for line in sys.stdin.buffer:
            request = json.loads(line)
            out.write(json.dumps({"id": request["id"], "ok": True, "sampleRate": 22050, "bytes": 4}).encode() + b"\\n" + bytes(4))
            out.flush()
        """

    func worker(requestMs: Int) throws -> PiperWorker {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("fake-piper-\(UUID().uuidString).py")
        try Self.fakeWorker.write(to: script, atomically: true, encoding: .utf8)
        var configuration = PiperWorker.Configuration(python: "/usr/bin/python3", script: script.path, voices: [("v", "/none.onnx")])
        configuration.niceness = 0
        configuration.limits.requestBaseMs = requestMs
        configuration.limits.requestPerCharacterMs = 0
        return PiperWorker(configuration: configuration)
    }

    /// The first of `body`'s answer or nil after `seconds`: a shell that is stuck fails the test instead
    /// of hanging it.
    func within<T: Sendable>(_ seconds: Int, _ body: @escaping @Sendable () async -> T) async -> T? {
        let (stream, sink) = AsyncStream.makeStream(of: T?.self)
        let work = Task { sink.yield(await body()) }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            sink.yield(nil)
        }
        var first: T?? = nil
        for await answer in stream {
            first = answer
            break
        }
        timer.cancel()
        _ = work
        return first ?? nil
    }

    /// A stopped worker never reads: a request longer than the pipe holds cannot be written. It is written
    /// by the process's own writer thread, so the supervisor still keeps the deadline, kills the worker,
    /// and starts another for the next request.
    @Test func aStoppedWorkerThatCannotTakeARequestIsKilledAtTheDeadlineAndTheNextRequestIsAnswered() async throws {
        let worker = try worker(requestMs: 1_500)
        let first = await within(60) { await worker.synthesize("Hello.", voice: "v") }
        guard case .success? = first else {
            Issue.record("the fake worker answered \(String(describing: first))")
            return
        }
        let pid = try #require(worker.status.pid)
        #expect(kill(pid, SIGSTOP) == 0)
        let long = String(repeating: "A sentence far too long for a pipe. ", count: 10_000)
        async let stuck = within(60) { await worker.synthesize(long, voice: "v") }
        async let next = within(60) { await worker.synthesize("And the next one.", voice: "v") }
        let (stuckAnswer, nextAnswer) = await (stuck, next)
        guard case .failure(.timedOut)? = stuckAnswer else {
            Issue.record("the supervisor kept the deadline: \(String(describing: stuckAnswer))")
            return
        }
        guard case .success? = nextAnswer else {
            Issue.record("after the kill, a new worker answers: \(String(describing: nextAnswer))")
            return
        }
        #expect(worker.status.pid != pid)
        #expect(worker.status.launches == 2)
        kill(pid, SIGCONT)
    }
}
