import Foundation
import Locking
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct NarrationResult: Encodable {
    var scenario = "narration"
    /// The story's voice: an espeak-ng one ("en") or a natural one ("piper:en_US-joe-medium").
    var voice: String
    var sentences: Int
    var words: Int
    /// From `start` to the first sentence ready (synthesis + MP3 + cache write): the story's
    /// `narration.plan`, which starts it. The first room's story (the worker cold for a natural voice).
    var firstSentenceColdMs: Double
    /// The same for a second story in the same run (a new text, the worker warm).
    var firstSentenceWarmMs: Double
    /// A natural voice only: the worker killed (SIGKILL) while idle, then a room on a new text created and
    /// started at once: the first sentence waits for the worker to start again (cold).
    var firstSentenceRestartedMs: Double?
    /// A room on a new text started after a lobby of `lobbySeconds` (the children joining), as a class
    /// starts: a natural voice has read its opening ahead meanwhile. The worker warm.
    var firstSentenceAfterLobbyMs: Double
    var lobbySeconds: Double
    /// From `start` to the last sentence (the plan whole), on an empty cache.
    var wholeStoryColdMs: Double
    /// The same story in another room: every sentence from the cache.
    var wholeStoryCachedMs: Double
    /// `GET /audio/<key>.mp3` of a cached sentence, over one keep-alive connection.
    var cachedSentenceHTTP: Percentiles
    var audioBytes: Int
}

/// A story of about 300 words, every sentence different (so nothing repeats in the cache); `variant`
/// makes another story of the same shape.
func benchStory(words: Int, voice: String = "en", variant: Int = 0) -> [String: Any] {
    let subjects = ["Pip", "Dot", "The little cloud", "A brave otter", "The old robot", "Lola the turtle", "A sleepy owl", "The teacher"]
    let verbs = ["found", "painted", "carried", "counted", "followed", "built", "noticed", "shared"]
    let things = ["a shiny blue gear", "seven golden apples", "a map of the river", "the tallest ladder", "a basket of warm bread", "a box of coloured chalk", "the missing key", "a paper boat"]
    let places = ["near the old bridge", "behind the red barn", "before lunch", "under the maple tree", "at the edge of town", "after the storm", "in the busy workshop", "beside the quiet pond"]
    var sentences: [String] = []
    var count = 0
    var i = 0
    while count < words {
        let sentence = "\(subjects[(i + variant) % 8]) \(verbs[(i / 8) % 8]) \(things[(i / 3) % 8]) \(places[(i / 5) % 8]) on day \(i + 1)."
        sentences.append(sentence)
        count += sentence.split(separator: " ").count
        i += 1
    }
    return ["title": "Bench narration", "text": sentences, "narration": ["voice": voice, "rate": 160],
            "quiz": ["question": "Q?", "options": ["A", "B"], "answer": "A"]]
}

/// A room created with a natural voice starts reading its story ahead at once; the rooms are started right
/// after they are created (so "cold" still includes the worker's start, the first room of the run), except
/// one started after a lobby of `lobbySeconds`, as a class starts once its children have joined.
func runNarration(port: Int, adminToken: String, requests: Int, voice: String = "en", lobbySeconds: Double = 3) async throws -> NarrationResult {
    let story = benchStory(words: 300, voice: voice)
    let sentences = (story["text"] as! [String])
    let clients = try LoadClients(port: port)
    defer { clients.stop() }

    /// Starts a room on `story` and times its first sentence (the plan that starts the story) and its last
    /// (the plan whole: a plan without `total`, or the streamed sentence that makes it whole).
    func prepare(_ story: [String: Any], lobby: Double = 0) async throws -> (first: Double, whole: Double, audio: String) {
        let room = try await createRoom(port: port, adminToken: adminToken, story: story)
        let teacher = try await clients.connect(1)[0]
        let times = Locked<(first: UInt64, whole: UInt64, audio: String)>((0, 0, ""))
        let welcomed = Latch(1)
        let whole = Latch(1)
        clients.onMessage { _, data in
            let now = nanoseconds()
            if contains(data, Array(#""type":"welcome""#.utf8)) { welcomed.countDown() }
            if contains(data, Array(#""type":"narration.plan""#.utf8)) {
                times.withLock { if $0.first == 0 { $0.first = now; $0.audio = stringField(data, "audio") ?? "" } }
                if !contains(data, Array(#""total":"#.utf8)) {
                    times.withLock { $0.whole = now }
                    whole.countDown()
                }
            }
            if contains(data, Array(#""type":"narration.sentence""#.utf8)), let ready = numberField(data, "ready"), ready == numberField(data, "total") {
                times.withLock { $0.whole = now }
                whole.countDown()
            }
        }
        clients.send(#"{"type":"control","room":"\#(room.code)","token":"\#(room.teacherToken)"}"#, to: teacher)
        guard await welcomed.wait(timeout: 10) else { throw BenchError("no welcome") }
        // The lobby is the scenario's (the time a class takes to join), not a wait for anything.
        if lobby > 0 { try await Task.sleep(nanoseconds: UInt64(lobby * 1e9)) }
        let start = nanoseconds()
        clients.send(#"{"type":"command","command":"start"}"#, to: teacher)
        guard await whole.wait(timeout: 120) else { throw BenchError("the story was not whole in 120 s") }
        let result = times.withLock { $0 }
        guard result.first >= start, result.whole >= result.first else { throw BenchError("no narration plan was seen") }
        return (Double(result.first - start) / 1e6, Double(result.whole - start) / 1e6, result.audio)
    }

    let cold = try await prepare(story)
    let warm = try await prepare(story)
    let warmFirst = try await prepare(benchStory(words: 300, voice: voice, variant: 1))
    let afterLobby = try await prepare(benchStory(words: 300, voice: voice, variant: 3), lobby: lobbySeconds)
    guard !cold.audio.isEmpty else { throw BenchError("the plan carried no audio") }
    var restarted: Double?
    if voice.hasPrefix("piper:") {
        let worker = try await naturalVoiceWorker(port: port)
        guard let pid = worker.pid, worker.state == "ready" else { throw BenchError("the worker is not ready: \(worker)") }
        kill(pid, SIGKILL)
        // Once the server has seen it die (so the restart is the room's, not a request sent into a dead pipe).
        let deadline = nanoseconds() + 10_000_000_000
        while try await naturalVoiceWorker(port: port).pid == pid {
            guard nanoseconds() < deadline else { throw BenchError("the server did not see its worker die") }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        restarted = try await prepare(benchStory(words: 300, voice: voice, variant: 2)).first
    }

    // Cached sentence over HTTP, one keep-alive connection (as a browser fetches the story's clips).
    let session = URLSession(configuration: .ephemeral)
    var latencies: [UInt64] = []
    var bytes = 0
    for _ in 0..<requests {
        let started = nanoseconds()
        let (data, response) = try await fetch(ServerTLS.url(port: port, cold.audio), session: session)
        latencies.append(nanoseconds() - started)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchError("audio answered \(String(describing: response))") }
        bytes = data.count
    }
    let words = sentences.reduce(0) { $0 + $1.split(separator: " ").count }
    return NarrationResult(voice: voice, sentences: sentences.count, words: words, firstSentenceColdMs: cold.first, firstSentenceWarmMs: warmFirst.first, firstSentenceRestartedMs: restarted,
                           firstSentenceAfterLobbyMs: afterLobby.first, lobbySeconds: lobbySeconds, wholeStoryColdMs: cold.whole,
                           wholeStoryCachedMs: warm.whole, cachedSentenceHTTP: Percentiles(nanoseconds: latencies), audioBytes: bytes)
}

/// The natural voice's worker as `/healthz` describes it: its state and process id.
private func naturalVoiceWorker(port: Int) async throws -> (state: String?, pid: Int32?) {
    let (data, _) = try await fetch(ServerTLS.url(port: port, "/healthz"))
    let natural = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["naturalVoice"] as? [String: Any]
    return (natural?["state"] as? String, (natural?["pid"] as? NSNumber)?.int32Value)
}

private func createRoom(port: Int, adminToken: String, story: [String: Any]) async throws -> RoomSetup.Room {
    var request = URLRequest(url: ServerTLS.url(port: port, "/api/rooms"))
    request.httpMethod = "POST"
    // Narration on dashboards: the teacher connection measuring this is a screen, and gets the audio URLs.
    request.httpBody = try JSONSerialization.data(withJSONObject: ["story": story, "settings": ["narration": "dashboard"]])
    request.setValue("Bearer \(adminToken)", forHTTPHeaderField: "Authorization")
    let (data, _) = try await fetch(request)
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let code = object["code"] as? String, let token = object["teacherToken"] as? String else {
        throw BenchError("room creation failed: \(String(decoding: data, as: UTF8.self))")
    }
    return RoomSetup.Room(code: code, teacherToken: token, dashboardToken: object["dashboardToken"] as? String ?? "")
}
