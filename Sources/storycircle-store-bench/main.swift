import Foundation
import Locking
import PostgresStorage
import SQLiteStorage
import StoryCircleCore

// storycircle-store-bench: the room stores alone, without a server in front. Answers are appended at a
// steady rate (2,000 over one second by default) across rooms, and each one's acknowledgement latency is
// measured from the append to its completion, which runs after the COMMIT that made it durable: SQLite
// (WAL, synchronous=FULL) and PostgreSQL (fsync on, synchronous_commit on) in the same run, on the same
// machine. JSON on stdout, a table on stderr.
let usage = """
USAGE: storycircle-store-bench --postgres <url> [options]

  --postgres <url>     a PostgreSQL that may be written to freely (rooms are created and left behind);
                       scripts/postgres-test.sh run <this command> provides a throwaway one
  --answers <n>        answers per run (default 2000)
  --seconds <s>        over this many seconds (default 1)
  --rooms <n>          spread over this many rooms (default 20)
  --runs <n>           measured runs per store, alternating stores (default 3)
"""

func value(_ name: String) -> String? {
    guard let i = CommandLine.arguments.firstIndex(of: "--\(name)"), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

guard let postgresURL = value("postgres"), let postgres = PostgresSettings(database: postgresURL) else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
let answers = value("answers").flatMap(Int.init) ?? 2_000
let duration = value("seconds").flatMap(Double.init) ?? 1
let rooms = value("rooms").flatMap(Int.init) ?? 20
let runs = value("runs").flatMap(Int.init) ?? 3

struct Run: Codable {
    var store: String
    var answers: Int
    var failures: Int
    var seconds: Double
    var commits: Int
    var p50Ms: Double
    var p90Ms: Double
    var p99Ms: Double
    var maxMs: Double
}

struct Report: Codable {
    var answers: Int
    var seconds: Double
    var rooms: Int
    var runs: [Run]
}

extension Duration {
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

/// Waits `duration` on the calling thread: the bench's main thread paces the load as it did before the
/// stores became `async` (a timer's wake-up would blur the intervals of half a millisecond).
func pace(_ duration: Duration) {
    Thread.sleep(forTimeInterval: duration.inSeconds)
}

/// Appends `count` answers at a steady pace over `duration` and waits for every completion.
func measure(_ name: String, _ store: any RoomStore, commits: () -> Int, prefix: String) async throws -> Run {
    let codes = (0..<rooms).map { "\(prefix)\($0)" }
    for code in codes {
        try await store.createRoom(RoomHeader(
            code: code, story: Story(title: "Bench", sentences: ["One."], quiz: Quiz(questions: [Question(text: "Q?", options: ["A", "B"], answer: 0, timeLimit: 30, explanation: "")])),
            settings: RoomSettings(), credentials: RoomCredentials(teacherToken: "t-\(code)", dashboardToken: "d-\(code)"), createdAt: ServerTime(milliseconds: 1)
        ))
    }
    let count = answers
    let latencies = Locked<[Double]>([])
    let failures = Locked(0)
    let finished = DispatchSemaphore(value: 0)
    let commitsBefore = commits()
    let clock = ContinuousClock()
    let start = clock.now
    let interval = Duration.seconds(duration) / answers
    for i in 0..<answers {
        let due = start + interval * i
        let early = due - clock.now
        if early > .zero { pace(early) }
        let sent = clock.now
        let record = RoomRecord.answer(AnswerRecord(
            player: "p\(i)", question: 0, option: i % 2, receivedAt: ServerTime(milliseconds: Int64(i)), elapsedMs: 100, correct: i % 2 == 0, points: 500
        ))
        store.append(record, room: codes[i % codes.count]) { error in
            let elapsed = clock.now - sent
            if error != nil { failures.withLock { $0 += 1 } }
            let done = latencies.withLock { latencies -> Int in
                latencies.append(elapsed.inSeconds * 1_000)
                return latencies.count
            }
            if done == count { finished.signal() }
        }
    }
    finished.wait()
    let total = clock.now - start
    let sorted = latencies.withLock { $0 }.sorted()
    return Run(
        store: name, answers: answers, failures: failures.withLock { $0 },
        seconds: total.inSeconds, commits: commits() - commitsBefore,
        p50Ms: percentile(sorted, 0.5), p90Ms: percentile(sorted, 0.9), p99Ms: percentile(sorted, 0.99), maxMs: sorted.last ?? 0
    )
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-store-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
var results: [Run] = []
do {
    let sqlite = try SQLiteRoomStore(path: folder.appendingPathComponent("rooms.sqlite").path)
    let postgresStore = try PostgresRoomStore(postgres)
    let session = UUID().uuidString.prefix(6)
    // A short warm-up of each (connections, caches, the first fsyncs), not reported.
    for (index, store) in [sqlite as any RoomStore, postgresStore].enumerated() {
        try await store.createRoom(RoomHeader(code: "warm\(session)\(index)", story: Story(title: "Warm-up", sentences: ["One."], quiz: Quiz(questions: [Question(text: "Q?", options: ["A", "B"], answer: 0, timeLimit: 30, explanation: "")])), settings: RoomSettings(), credentials: RoomCredentials(teacherToken: "t", dashboardToken: "d"), createdAt: ServerTime(milliseconds: 1)))
        let done = DispatchSemaphore(value: 0)
        for i in 0..<200 {
            store.append(.answer(AnswerRecord(player: "w\(i)", question: 0, option: 0, receivedAt: ServerTime(milliseconds: 1), elapsedMs: 1, correct: true, points: 1)), room: "warm\(session)\(index)") { _ in
                if i == 199 { done.signal() }
            }
        }
        done.wait()
    }
    for run in 0..<runs {
        results.append(try await measure("sqlite", sqlite, commits: { sqlite.commitCount }, prefix: "s\(session)r\(run)-"))
        results.append(try await measure("postgres", postgresStore, commits: { postgresStore.commitCount }, prefix: "p\(session)r\(run)-"))
    }
    await sqlite.close()
    await postgresStore.close()
} catch {
    FileHandle.standardError.write(Data("storycircle-store-bench: \(error)\n".utf8))
    exit(1)
}

let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
FileHandle.standardOutput.write((try? encoder.encode(Report(answers: answers, seconds: duration, rooms: rooms, runs: results))) ?? Data())
FileHandle.standardOutput.write(Data("\n".utf8))
var table = "store      answers  failures  took s  commits   p50 ms   p90 ms   p99 ms   max ms\n"
for run in results {
    table += String(format: "%-9@ %8d %9d %7.2f %8d %8.2f %8.2f %8.2f %8.2f\n", run.store as NSString, run.answers, run.failures, run.seconds, run.commits, run.p50Ms, run.p90Ms, run.p99Ms, run.maxMs)
}
FileHandle.standardError.write(Data(table.utf8))
