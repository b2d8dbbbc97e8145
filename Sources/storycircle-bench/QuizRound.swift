import Foundation
import Locking

struct QuizResult: Encodable {
    var scenario = "quiz"
    var rooms: Int
    var children: Int
    /// Measured questions; `warmupQuestions` ran before them (the first opened by the story's end) and
    /// count nowhere.
    var questions: Int
    var warmupQuestions: Int
    var answersPerSecond: Double
    /// The teacher's `next` sent → each child has the question.
    var question: Percentiles
    /// Each answer's intended send time → its `answer.ack` (durable in SQLite before it is sent).
    var acknowledgement: Percentiles
    /// The intended send time of the room's last answer (which makes the server reveal) → each child has
    /// its own `reveal` (one message per child: its outcome, points and standing).
    var reveal: Percentiles
    /// Per room and question: from the first child's reveal to the last child's.
    var revealSpread: Percentiles
    /// Per room and question: the intended send time of the last answer → the first child's reveal (what
    /// the room does before its reveals can leave: the answer's commit, the reveal, the encoding).
    var revealFirst: Percentiles
    /// The teacher's last `next` → each child has its `finished` (the podium and its own standing).
    var finished: Percentiles
    var revealBytes: Double
    var finishedBytes: Double
    /// Scoreboards the dashboards received while the measured questions were open (coalesced by the
    /// server to at most four a second per room).
    var scoreboards: Int
    /// How late the generator sent answers against their intended times.
    var sendLag: Percentiles
    /// The server's cost per message it sent (to children, dashboards and teachers) from the first
    /// measured `next` to the last podium.
    var cost: ServerCost?
}

private struct QuizState {
    var questionAt: [UInt64]
    var ackAt: [UInt64]
    var revealAt: [UInt64]
    var finishedAt: [UInt64]
    var questions = 0, acks = 0, reveals = 0, finishes = 0
    var opensAt = 0.0
    var revealBytes = 0, finishedBytes = 0
    var scoreboards = 0
    var messages = 0
    var errors: [String] = []

    init(total: Int) {
        questionAt = Array(repeating: 0, count: total)
        ackAt = questionAt
        revealAt = questionAt
        finishedAt = questionAt
    }

    mutating func newQuestion() {
        for i in questionAt.indices { questionAt[i] = 0; ackAt[i] = 0; revealAt[i] = 0 }
        questions = 0; acks = 0; reveals = 0; opensAt = 0; revealBytes = 0
    }
}

/// A whole quiz in `rooms` rooms: for each question the teacher sends `next`, every child answers (open
/// loop, `answersPerSecond` across all rooms, interleaved so every room's answers span the whole window),
/// the last answer makes the server reveal (one message per child), the dashboards get scoreboards; after
/// the last question, the podium. The first `warmup` questions are not measured.
func runQuiz(port: Int, adminToken: String, rooms: Int, childrenPerRoom: Int, questions: Int, warmup: Int, answersPerSecond: Double, serverPID: Int32?, phaseFile: String? = nil) async throws -> QuizResult {
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let warmup = max(1, warmup)
    let story = RoomSetup.story(sentences: ["Pip found a gear."], questions: warmup + questions)
    let classroom = try await Classroom.seat(port: port, adminToken: adminToken, rooms: rooms, childrenPerRoom: childrenPerRoom, story: story, questionSeconds: 20, dashboards: true, clients: clients)
    let total = rooms * childrenPerRoom
    var index: [UInt64: Int] = [:]
    for (g, child) in classroom.allChildren.enumerated() { index[child] = g }
    let slots = index
    let screens = Set(classroom.dashboards)
    let state = Locked(QuizState(total: total))
    // The rooms stand at their first question (a warm-up one) before the quiz's own handler takes over.
    var opensAt = try await classroom.toFirstQuestion(clients: clients)
    clients.onMessage { id, data in
        let now = nanoseconds()
        guard let type = messageType(data) else { return }
        let opensAt = type == "question" ? numberField(data, "opensAt") : nil
        state.withLock { s in
            s.messages += 1
            guard let g = slots[id] else {
                if type == "scoreboard", screens.contains(id) { s.scoreboards += 1 }
                return
            }
            switch type {
            case "question" where s.questionAt[g] == 0:
                s.questionAt[g] = now
                s.questions += 1
                s.opensAt = max(s.opensAt, opensAt ?? 0)
            case "answer.ack" where s.ackAt[g] == 0:
                s.ackAt[g] = now
                s.acks += 1
            case "reveal" where s.revealAt[g] == 0:
                s.revealAt[g] = now
                s.reveals += 1
                s.revealBytes += data.count
            case "finished" where s.finishedAt[g] == 0:
                s.finishedAt[g] = now
                s.finishes += 1
                s.finishedBytes += data.count
            case "error":
                if s.errors.count < 5 { s.errors.append(String(decoding: data, as: UTF8.self)) }
            default:
                break
            }
        }
    }
    func waitFor(_ what: String, timeout: Double, _ done: @escaping (QuizState) -> Bool) async throws {
        let deadline = nanoseconds() + UInt64(timeout * 1e9)
        while !state.withLock({ done($0) }) {
            if nanoseconds() > deadline {
                let errors = state.withLock { $0.errors }
                let counts = state.withLock { "questions \($0.questions), acks \($0.acks), reveals \($0.reveals) of \(total)" }
                throw BenchError("quiz: \(what) missing after \(Int(timeout)) s (\(counts))\(errors.isEmpty ? "" : "; errors: \(errors)")")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    let clock = ClockMapping()
    let timeline = Timeline()
    var random = SeededRandom(seed: 14)
    var questionLatencies: [UInt64] = [], ackLatencies: [UInt64] = [], revealLatencies: [UInt64] = [], spreads: [UInt64] = [], firsts: [UInt64] = []
    var meter: CostMeter?
    var messagesAtStart = 0
    var scoreboardsAtStart = 0
    let window = Double(total) / answersPerSecond

    for q in 0..<(warmup + questions) {
        let measured = q >= warmup
        if q > 0 {
            if q == warmup {
                if let phaseFile { try "measured\n".write(toFile: phaseFile, atomically: true, encoding: .utf8) }
                meter = try CostMeter(pid: serverPID)
                (messagesAtStart, scoreboardsAtStart) = state.withLock { ($0.messages, $0.scoreboards) }
            }
            state.withLock { $0.newQuestion() }
            let sent = nanoseconds()
            for teacher in classroom.teachers { clients.send(#"{"type":"command","command":"next"}"#, to: teacher) }
            try await waitFor("question \(q)", timeout: 60) { $0.questions == total }
            let (arrived, latest) = state.withLock { ($0.questionAt, $0.opensAt) }
            if measured { questionLatencies += arrived.map { since(sent, $0) } }
            opensAt = latest
        }
        // Answers, open loop: every intended time is fixed before the first is due.
        let start = clock.monotonic(wallMilliseconds: opensAt) + 20_000_000
        let interval = 1e9 / answersPerSecond
        var intended = [UInt64](repeating: 0, count: total)
        var lastInRoom = [UInt64](repeating: 0, count: rooms)
        var k = 0
        for i in 0..<childrenPerRoom {
            for r in 0..<rooms {
                let g = r * childrenPerRoom + i
                let due = start + UInt64(Double(k) * interval)
                intended[g] = due
                lastInRoom[r] = max(lastInRoom[r], due)
                let option = random.unit() < 0.7 ? 1 : [0, 2, 3][Int(random.next() % 3)]
                let child = classroom.children[r][i]
                let text = #"{"type":"answer","question":\#(q),"option":\#(option)}"#
                timeline.at(due) { clients.send(text, to: child) }
                k += 1
            }
        }
        try await waitFor("acks and reveals of question \(q)", timeout: window + 60) { $0.acks == total && $0.reveals == total }
        if measured {
            let (acks, reveals) = state.withLock { ($0.ackAt, $0.revealAt) }
            ackLatencies += zip(acks, intended).map { since($1, $0) }
            for r in 0..<rooms {
                let room = reveals[(r * childrenPerRoom)..<((r + 1) * childrenPerRoom)]
                revealLatencies += room.map { since(lastInRoom[r], $0) }
                spreads.append(room.max()! - room.min()!)
                firsts.append(since(lastInRoom[r], room.min()!))
            }
        }
        // The dashboards' coalesced scoreboard follows the reveal within a quarter of a second.
        try await Task.sleep(for: .milliseconds(300))
    }

    let sent = nanoseconds()
    for teacher in classroom.teachers { clients.send(#"{"type":"command","command":"next"}"#, to: teacher) }
    try await waitFor("podiums", timeout: 60) { $0.finishes == total }
    let lag = timeline.stop()
    let final = state.withLock { $0 }
    let cost = try meter?.finish(messages: final.messages - messagesAtStart)
    return QuizResult(
        rooms: rooms, children: total, questions: questions, warmupQuestions: warmup, answersPerSecond: answersPerSecond,
        question: Percentiles(nanoseconds: questionLatencies), acknowledgement: Percentiles(nanoseconds: ackLatencies),
        reveal: Percentiles(nanoseconds: revealLatencies), revealSpread: Percentiles(nanoseconds: spreads), revealFirst: Percentiles(nanoseconds: firsts),
        finished: Percentiles(nanoseconds: final.finishedAt.map { since(sent, $0) }),
        revealBytes: Double(final.revealBytes) / Double(total), finishedBytes: Double(final.finishedBytes) / Double(total),
        scoreboards: final.scoreboards - scoreboardsAtStart, sendLag: lag, cost: cost
    )
}
