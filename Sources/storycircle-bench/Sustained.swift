import Foundation
import Locking

struct SustainedResult: Encodable {
    var scenario = "sustained"
    var rooms: Int
    var children: Int
    var durationSeconds: Double
    /// Samples whose intended time falls in the first `warmupSeconds` are not counted.
    var warmupSeconds: Double
    /// Every measured message to a child, pooled: each from its intended time (see `byType`).
    var latency: Percentiles
    /// progress: the sentence's `at` (the server's own schedule) → the child has it;
    /// unlock: the instant the story ends (last sentence's `at` + its duration + the gap) → the child has
    ///   `narration.complete`, `quiz.unlock` and the first question;
    /// question: the teacher's intended `next` → the child has the next question;
    /// ack: the intended answer time → `answer.ack`; reveal: the room's last intended answer → `reveal`;
    /// pong: the intended ping time → `pong`.
    var byType: [String: Percentiles]
    /// Messages the server delivered (to children, dashboards, teachers) per second over the window.
    var messagesPerSecond: Double
    var answers: Int
    var pings: Int
    /// Answers and pings sent in the window that had no reply when the run ended (drain included).
    var unanswered: Int
    /// Coalesced scoreboards per dashboard per second, over the window.
    var scoreboardsPerDashboardPerSecond: Double
    /// Times a teacher's `next` reached the room before its reveal (the server was that far behind).
    var stalledRooms: Int
    var sendLag: Percentiles
    /// From the server's /proc (this machine's server only: `--server-pid`).
    var cost: ServerCost?
    /// The same window's CPU as the server reports it on `/metrics`: also from another machine (`--host`).
    var reportedCost: ReportedCost?
}

/// The classroom schedule, in seconds.
struct ClassroomRates {
    var pingInterval = 10.0
    /// How the teacher starts are spread, so rooms are in different phases at any moment (at most a
    /// quarter of the run, so a short run still reaches the quiz).
    var startSpread = 15.0
    /// Answers arrive from 0.3 s after the question opens, most in the first two seconds, the last by 6 s.
    var answerFirst = 0.3
    var answerWindow = 6.0
    /// The teacher moves on this long after the question opened.
    var nextAfter = 9.0
}

private let sampleTypes = ["progress", "unlock", "question", "ack", "reveal", "pong"]

private struct SustainedState {
    var samples: [[UInt64]] = Array(repeating: [], count: sampleTypes.count)
    /// Per child and question: when its answer was meant to go.
    var answerIntended: [[UInt64]]
    /// Per room and question: the room's last intended answer (the one that makes the server reveal).
    var lastAnswer: [[UInt64]]
    /// Per room and question: when the teacher's `next` that opens it was meant to go.
    var nextIntended: [[UInt64]]
    var completeIntended: [UInt64]
    var durations: [[Double]]
    var gapMs: [Double]
    var messages = 0
    var scoreboards = 0
    var answersSent = 0, acks = 0, pingsSent = 0, pongs = 0
    var stalled = 0

    init(rooms: Int, children: Int, questions: Int) {
        answerIntended = Array(repeating: Array(repeating: 0, count: questions), count: children)
        lastAnswer = Array(repeating: Array(repeating: 0, count: questions), count: rooms)
        nextIntended = Array(repeating: Array(repeating: 0, count: questions + 1), count: rooms)
        completeIntended = Array(repeating: 0, count: rooms)
        durations = Array(repeating: [], count: rooms)
        gapMs = Array(repeating: 300, count: rooms)
    }
}

private enum Role {
    case child(room: Int, index: Int)
    case teacher(room: Int)
    case dashboard
}

/// A story of four sentences of about four seconds each (so a `progress` every few seconds) and more
/// questions than a minute can reach.
private var sustainedStory: [String: Any] {
    RoomSetup.story(sentences: [
        "Pip the little robot found a shiny blue gear near the old bridge one morning.",
        "Dot the turtle painted seven golden apples behind the red barn before lunch.",
        "A sleepy owl followed the paper boat along the river until the sun went down.",
        "The whole class built the tallest ladder in town and shared warm bread together.",
    ], questions: sustainedQuestions)
}

private let sustainedQuestions = 20

/// Open-loop classroom load: `rooms` rooms of `childrenPerRoom` for `duration` seconds. Teachers start
/// their rooms spread over the first seconds; the story is narrated (the server sends a `progress` at each
/// sentence), the quiz unlocks, children answer each question in a burst, the server reveals and sends
/// dashboards scoreboards (at most 4/s), and the teacher moves on; every child pings every ten seconds
/// (as the pages do). Every send has an intended time fixed in advance, and every latency is measured
/// from it, so a server that falls behind shows it, however late the generator's sends became.
func runSustained(host: String = LoadClients.loopback, port: Int, adminToken: String, rooms: Int, childrenPerRoom: Int, duration: Double, warmup: Double, rates: ClassroomRates = ClassroomRates(), serverPID: Int32?, phaseFile: String? = nil) async throws -> SustainedResult {
    let clients = try LoadClients(host: host, port: port)
    defer { clients.stop() }
    let story = sustainedStory
    let sentences = (story["text"] as! [String]).count
    let classroom = try await Classroom.seat(host: host, port: port, adminToken: adminToken, rooms: rooms, childrenPerRoom: childrenPerRoom, story: story, questionSeconds: 30, dashboards: true, clients: clients)
    try await warmAudioCache(host: host, port: port, adminToken: adminToken, story: story, clients: clients)

    let total = rooms * childrenPerRoom
    var roles: [UInt64: Role] = [:]
    for (r, room) in classroom.children.enumerated() {
        for (i, child) in room.enumerated() { roles[child] = .child(room: r, index: i) }
        roles[classroom.teachers[r]] = .teacher(room: r)
        roles[classroom.dashboards[r]] = .dashboard
    }
    let roleOf = roles
    let state = Locked(SustainedState(rooms: rooms, children: total, questions: sustainedQuestions))
    let clock = ClockMapping()
    let timeline = Timeline()
    let start = nanoseconds() + 1_000_000_000
    let end = start + UInt64(duration * 1e9)
    let counted = (start + UInt64(warmup * 1e9))...end
    let pingInterval = UInt64(rates.pingInterval * 1e9)
    @Sendable func pingTime(_ child: Int, _ k: Int) -> UInt64 { start + UInt64(child) * pingInterval / UInt64(total) + UInt64(k) * pingInterval }
    let seed = Locked(SeededRandom(seed: 14))

    /// Sends a child's ping `k` and schedules its next one.
    @Sendable func ping(_ g: Int, _ k: Int) {
        let due = pingTime(g, k)
        guard due <= end else { return }
        timeline.at(due) {
            clients.send(#"{"type":"ping","id":\#(k)}"#, to: classroom.children[g / childrenPerRoom][g % childrenPerRoom])
            state.withLock { $0.pingsSent += 1 }
            ping(g, k + 1)
        }
    }

    /// Schedules a room's answers to question `q` and the teacher's `next` after it.
    @Sendable func schedule(room r: Int, question q: Int, opensAt: UInt64) {
        var plan: [(Int, UInt64, Int)] = []
        seed.withLock { random in
            for i in 0..<childrenPerRoom {
                let u = random.unit()
                let delay = rates.answerFirst + (rates.answerWindow - rates.answerFirst) * u * u
                let option = random.unit() < 0.7 ? 1 : [0, 2, 3][Int(random.next() % 3)]
                plan.append((i, opensAt + UInt64(delay * 1e9), option))
            }
        }
        let next = opensAt + UInt64(rates.nextAfter * 1e9)
        state.withLock { s in
            s.lastAnswer[r][q] = plan.map(\.1).max() ?? opensAt
            for (i, due, _) in plan { s.answerIntended[r * childrenPerRoom + i][q] = due }
            if next <= end { s.nextIntended[r][q + 1] = next }
        }
        for (i, due, option) in plan where due <= end {
            let child = classroom.children[r][i]
            timeline.at(due) {
                clients.send(#"{"type":"answer","question":\#(q),"option":\#(option)}"#, to: child)
                state.withLock { $0.answersSent += 1 }
            }
        }
        if next <= end {
            timeline.at(next) { clients.send(#"{"type":"command","command":"next"}"#, to: classroom.teachers[r]) }
        }
    }

    clients.onMessage { id, data in
        let now = nanoseconds()
        guard let type = messageType(data), let role = roleOf[id] else { return }
        func record(_ kind: Int, since intended: UInt64, in s: inout SustainedState) {
            guard intended != 0, counted.contains(intended) else { return }
            s.samples[kind].append(since(intended, now))
        }
        switch role {
        case .dashboard:
            state.withLock { s in
                s.messages += 1
                if type == "scoreboard", counted.contains(now) { s.scoreboards += 1 }
            }
        case .teacher(let r):
            var durations: ([Double], Double)?
            if type == "narration.plan", let object = try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any],
               let list = object["sentences"] as? [[String: Any]] {
                durations = (list.map { ($0["durationMs"] as? Double) ?? 0 }, (object["gapMs"] as? Double) ?? 300)
            }
            let progress = type == "progress" ? (numberField(data, "sentence"), numberField(data, "at")) : nil
            let question = type == "question" ? (numberField(data, "index"), numberField(data, "opensAt")) : nil
            let revealed = type == "reveal" ? numberField(data, "question").map { Int($0) } : nil
            let revealedLate = state.withLock { s -> Bool in
                s.messages += 1
                if let durations { s.durations[r] = durations.0; s.gapMs[r] = durations.1 }
                if let (sentence, at) = progress, let sentence, let at, Int(sentence) == sentences - 1, s.durations[r].count == sentences {
                    s.completeIntended[r] = clock.monotonic(wallMilliseconds: at + s.durations[r][sentences - 1] + s.gapMs[r])
                }
                // The `next` meant for after this reveal already went, and the server took it as "reveal now".
                guard let q = revealed, q + 1 < sustainedQuestions else { return false }
                return s.nextIntended[r][q + 1] != 0 && now > s.nextIntended[r][q + 1]
            }
            if let (index, opensAt) = question, let index, let opensAt {
                schedule(room: r, question: Int(index), opensAt: clock.monotonic(wallMilliseconds: opensAt))
            }
            if revealedLate, now <= end {
                state.withLock { $0.stalled += 1 }
                clients.send(#"{"type":"command","command":"next"}"#, to: classroom.teachers[r])
            }
        case .child(let r, let i):
            let g = r * childrenPerRoom + i
            let field: Double? = switch type {
            case "progress": numberField(data, "sentence").flatMap { $0 >= 1 ? numberField(data, "at") : nil }
            case "question": numberField(data, "index")
            case "answer.ack", "reveal": numberField(data, "question")
            case "pong": numberField(data, "id")
            default: nil
            }
            let q = field.map { min(max(Int($0), 0), sustainedQuestions - 1) } ?? 0
            state.withLock { s in
                s.messages += 1
                switch type {
                case "progress": if let at = field { record(0, since: clock.monotonic(wallMilliseconds: at), in: &s) }
                case "narration.complete", "quiz.unlock": record(1, since: s.completeIntended[r], in: &s)
                case "question":
                    if q == 0 { record(1, since: s.completeIntended[r], in: &s) } else { record(2, since: s.nextIntended[r][q], in: &s) }
                case "answer.ack":
                    s.acks += 1
                    record(3, since: s.answerIntended[g][q], in: &s)
                case "reveal": record(4, since: s.lastAnswer[r][q], in: &s)
                case "pong":
                    s.pongs += 1
                    if let k = field { record(5, since: pingTime(g, Int(k)), in: &s) }
                default: break
                }
            }
        }
    }

    for g in 0..<total { ping(g, 0) }
    for (r, teacher) in classroom.teachers.enumerated() {
        timeline.at(start + UInt64(Double(r) / Double(rooms) * min(rates.startSpread, duration / 4) * 1e9)) {
            clients.send(#"{"type":"command","command":"start"}"#, to: teacher)
        }
    }
    let metrics = ReportedCostMeter.url(host: host, port: port)
    await ReportedCostMeter.warm(metrics)
    try await Task.sleep(for: .nanoseconds(Int(start - min(start, nanoseconds()))))
    // The /metrics window holds the /proc window: read first at the start, last at the end.
    let reported = await ReportedCostMeter.start(metrics)
    let meter = try CostMeter(pid: serverPID)
    if let phaseFile { try "window\n".write(toFile: phaseFile, atomically: true, encoding: .utf8) }
    let messagesAtStart = state.withLock { $0.messages }
    try await Task.sleep(for: .nanoseconds(Int(end - min(end, nanoseconds()))))
    let messagesAtEnd = state.withLock { $0.messages }
    let cost = try meter.finish(messages: messagesAtEnd - messagesAtStart)
    let reportedCost = await reported?.finish(messages: messagesAtEnd - messagesAtStart, children: total)
    // Drain: replies to the last sends of the window.
    try await Task.sleep(for: .seconds(3))
    let lag = timeline.stop()
    let final = state.withLock { $0 }
    var byType: [String: Percentiles] = [:]
    for (kind, name) in sampleTypes.enumerated() { byType[name] = Percentiles(nanoseconds: final.samples[kind]) }
    return SustainedResult(
        rooms: rooms, children: total, durationSeconds: duration, warmupSeconds: warmup,
        latency: Percentiles(nanoseconds: final.samples.flatMap { $0 }), byType: byType,
        messagesPerSecond: Double(messagesAtEnd - messagesAtStart) / duration,
        answers: final.answersSent, pings: final.pingsSent,
        unanswered: (final.answersSent - final.acks) + (final.pingsSent - final.pongs),
        scoreboardsPerDashboardPerSecond: Double(final.scoreboards) / Double(rooms) / (duration - warmup),
        stalledRooms: final.stalled, sendLag: lag, cost: cost, reportedCost: reportedCost
    )
}

/// Narrates the story once in a room of its own, so the rooms measured find every sentence in the
/// audio cache: the load measured is the classroom's, not espeak-ng's first synthesis.
private func warmAudioCache(host: String, port: Int, adminToken: String, story: [String: Any], clients: LoadClients) async throws {
    let room = try await RoomSetup(host: host, port: port, adminToken: adminToken).create(1, maxPlayers: 10, story: story)[0]
    let teacher = try await clients.connect(1)[0]
    let welcomed = Latch(1)
    let planned = Latch(1)
    clients.onMessage { id, data in
        guard id == teacher else { return }
        switch messageType(data) {
        case "welcome": welcomed.countDown()
        case "narration.plan": planned.countDown()
        default: break
        }
    }
    clients.send(#"{"type":"control","room":"\#(room.code)","token":"\#(room.teacherToken)"}"#, to: teacher)
    guard await welcomed.wait(timeout: 10) else { throw BenchError("the warm-up room sent no welcome") }
    clients.send(#"{"type":"command","command":"start"}"#, to: teacher)
    guard await planned.wait(timeout: 60) else { throw BenchError("the warm-up room's narration was not ready in 60 s") }
    clients.send(#"{"type":"command","command":"end"}"#, to: teacher)
}
