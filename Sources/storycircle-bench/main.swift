import Foundation
import Glibc

// storycircle-bench: the load generator. One scenario per run; JSON on stdout, a one-line summary on
// stderr. bench/run.sh runs them all, against StoryCircle and the peers of bench/baseline.
let usage = """
USAGE: storycircle-bench <scenario> --port <port> [options]

SCENARIOS:
  fanout      R rooms × C children; the teacher triggers broadcasts (latency, then throughput and cost)
  lockstep    R rooms × C children; one broadcast per room at a time, the next once every child has the
              last (one frame per child: the classroom's regime), for --seconds; StoryCircle or a peer
  paced       R rooms × C children; the rooms broadcast in turn at --broadcasts-per-second, open loop, for
              --seconds: the classroom's rates, where the server sleeps between frames; StoryCircle or a peer
  quiz        R rooms × C children play a whole quiz: question, answers, reveal, scoreboard, next, podium
  sustained   R rooms × C children for D seconds at classroom rates, open loop
  joinstorm   C children join one room within S seconds, open loop
  idle        N joined, idle children (server memory per connection; needs --server-pid)
  unlock      one room; every child syncs its clock, then the quiz unlocks (display spread)
  narration   a 300-word story on an empty audio cache (started at once, and after a lobby), again cached,
              and cached audio over HTTP

OPTIONS:
  --port <port>            the server              --server-pid <pid>   the server's process (CPU, memory)
  --target <target>        storycircle (default), or a peer (fanout, lockstep; bench/baseline/PROTOCOL.md):
                           baseline-c, baseline-c-batch, baseline-python, baseline-python-batch,
                           baseline-node, baseline-node-cork, baseline-go, baseline-go-batch
  --name <name>            how the results name a StoryCircle target (default storycircle), e.g. a variant
  --syscall-seconds <s>    fanout: perf's window from the burst's start (default 1)
  --admin-token <token>    StoryCircle's admin token
  --tls-ca <file>          wss and https: the server's certificate must chain to this CA (PEM)
  --rooms <n>              (default 250)      --children <n>   children per room (default 40)
  --rounds <n>             fanout: measured latency rounds (default 10)
  --warmup <n>             fanout: rounds, quiz: questions run first and not counted (default 2, 1)
  --burst <n>              fanout: throughput triggers per room (default 20)
  --payload-bytes <n>      fanout: a peer's message size (default 68)
  --phase-file <path>      fanout, quiz, sustained: written as the measured phase starts (for bench/profile.sh)
  --seconds <s>            lockstep, paced: the measured window (default 10); --warmup: lockstep's rounds first
                           (default 20), paced's seconds first (default 3)
  --broadcasts-per-second <n>  paced: broadcasts across all rooms (default 100)
  --questions <n>          quiz: measured questions (default 5)
  --answers-per-second <n> quiz: answer rate across all rooms (default 2000)
  --duration <s>           sustained: seconds (default 60)   --warmup-seconds <s>  not counted (default 5)
  --host <address>         sustained: the server's IPv4 address or name (default 127.0.0.1); on another
                           machine the server's CPU comes from its /metrics (reportedCost), not its /proc
  --spread <s>             joinstorm: seconds over which the children join (default 2)
  --connections <n>        idle connections (default 5000)
  --voice <voice>          narration: the story's voice (default en)   --requests <n>  cached fetches (200)
  --lobby-seconds <s>      narration: the lobby before the room that starts after one (default 3)
"""

func value(_ name: String) -> String? {
    guard let i = CommandLine.arguments.firstIndex(of: "--\(name)"), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

func int(_ name: String, _ fallback: Int) -> Int { value(name).flatMap(Int.init) ?? fallback }
func double(_ name: String, _ fallback: Double) -> Double { value(name).flatMap(Double.init) ?? fallback }

func costSummary(_ cost: ServerCost?) -> String {
    guard let cost else { return "" }
    return String(format: " · server %.2f µs CPU/msg (user %.2f, sys %.2f), %.3f+%.3f ctxsw/msg, server %.0f%% / generator %.0f%% / others %.0f%% of a core",
                  cost.microsecondsPerMessage, cost.userMicrosecondsPerMessage, cost.systemMicrosecondsPerMessage,
                  cost.voluntarySwitchesPerMessage, cost.involuntarySwitchesPerMessage, cost.serverCPUPercent, cost.generatorCPUPercent, cost.otherCPUPercent)
}


func reportedSummary(_ cost: ReportedCost?) -> String {
    guard let cost else { return "" }
    return String(format: " · server's /metrics: %.2f µs CPU/msg, %.2f µs per child-second, server %.0f%% / generator %.0f%% of a core",
                  cost.microsecondsPerMessage, cost.microsecondsPerChildSecond, cost.serverCPUPercent, cost.generatorCPUPercent)
}

func emit(_ result: some Encodable, _ summary: String) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    FileHandle.standardOutput.write((try? encoder.encode(result)) ?? Data())
    FileHandle.standardOutput.write(Data("\n".utf8))
    FileHandle.standardError.write(Data((summary + "\n").utf8))
}

func raiseFileLimit() {
    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// `text` if it is an IPv4 address, else the first IPv4 address of the name, looked up once here rather
/// than by every one of thousands of connections.
func ipv4Address(_ text: String) -> String? {
    var address = in_addr()
    if inet_pton(AF_INET, text, &address) == 1 { return text }
    var hints = addrinfo()
    hints.ai_family = AF_INET
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var found: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(text, nil, &hints, &found) == 0, let first = found else { return nil }
    defer { freeaddrinfo(first) }
    guard let socketAddress = first.pointee.ai_addr else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
    let ok = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
        var ip = inet.pointee.sin_addr
        return inet_ntop(AF_INET, &ip, &buffer, socklen_t(buffer.count)) != nil
    }
    guard ok else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func main() async -> Int32 {
    guard CommandLine.arguments.count > 1, let port = value("port").flatMap(Int.init) else {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        return 64
    }
    raiseFileLimit()
    let scenario = CommandLine.arguments[1]
    let admin = value("admin-token") ?? ""
    let rooms = int("rooms", 250)
    let children = int("children", 40)
    // Only the sustained scenario measures a server on another machine; anywhere else --host would be
    // ignored and the run would measure whatever listens on this machine's port.
    var host = LoadClients.loopback
    if let given = value("host") {
        guard scenario == "sustained" else {
            FileHandle.standardError.write(Data("Error: --host is for the sustained scenario only\n".utf8))
            return 64
        }
        guard let address = ipv4Address(given) else {
            FileHandle.standardError.write(Data("Error: --host \(given): not an IPv4 address or a name with one\n".utf8))
            return 64
        }
        host = address
    }
    do {
        switch scenario {
        case "fanout":
            let targetName = value("target") ?? "storycircle"
            let label = rooms == 1 ? "bigroom" : "fanout"
            let pid = value("server-pid").flatMap(Int32.init)
            let rounds = int("rounds", 10), warmup = int("warmup", 2), burst = int("burst", 20)
            let result: FanoutResult
            if targetName == "storycircle" {
                result = try await runFanout(scenario: label, target: StoryCircleTarget(port: port, adminToken: admin, name: value("name") ?? "storycircle"), port: port, rooms: rooms, childrenPerRoom: children, rounds: rounds, warmup: warmup, burst: burst, serverPID: pid, syscallSeconds: double("syscall-seconds", 1), phaseFile: value("phase-file"))
            } else {
                result = try await runFanout(scenario: label, target: BaselineTarget(name: targetName, payloadBytes: int("payload-bytes", 68)), port: port, rooms: rooms, childrenPerRoom: children, rounds: rounds, warmup: warmup, burst: burst, serverPID: pid, syscallSeconds: double("syscall-seconds", 1), phaseFile: value("phase-file"))
            }
            emit(result, "\(label) [\(result.target)] \(rooms)×\(children): \(result.latency.summary) · \(Int(result.throughputMessagesPerSecond)) msg/s · \(Int(result.messageBytes)) B/msg\(costSummary(result.cost))")
        case "lockstep":
            let targetName = value("target") ?? "storycircle"
            let pid = value("server-pid").flatMap(Int32.init)
            let warmup = int("warmup", 20), seconds = double("seconds", 10)
            let result: LockStepResult
            if targetName == "storycircle" {
                result = try await runLockStep(target: StoryCircleTarget(port: port, adminToken: admin, name: value("name") ?? "storycircle"), port: port, rooms: rooms, childrenPerRoom: children, warmup: warmup, seconds: seconds, serverPID: pid, phaseFile: value("phase-file"))
            } else {
                result = try await runLockStep(target: BaselineTarget(name: targetName, payloadBytes: int("payload-bytes", 68)), port: port, rooms: rooms, childrenPerRoom: children, warmup: warmup, seconds: seconds, serverPID: pid, phaseFile: value("phase-file"))
            }
            emit(result, result.summary + costSummary(result.cost) + " · saturated: \(result.saturated)")
        case "paced":
            let targetName = value("target") ?? "storycircle"
            let pid = value("server-pid").flatMap(Int32.init)
            let rate = double("broadcasts-per-second", 100), warmup = double("warmup", 3), seconds = double("seconds", 10)
            let result: PacedResult
            if targetName == "storycircle" {
                result = try await runPaced(target: StoryCircleTarget(port: port, adminToken: admin, name: value("name") ?? "storycircle"), port: port, rooms: rooms, childrenPerRoom: children, broadcastsPerSecond: rate, warmup: warmup, seconds: seconds, serverPID: pid)
            } else {
                result = try await runPaced(target: BaselineTarget(name: targetName, payloadBytes: int("payload-bytes", 68)), port: port, rooms: rooms, childrenPerRoom: children, broadcastsPerSecond: rate, warmup: warmup, seconds: seconds, serverPID: pid)
            }
            emit(result, result.summary + costSummary(result.cost) + " · saturated: \(result.saturated)")
        case "quiz":
            let result = try await runQuiz(port: port, adminToken: admin, rooms: rooms, childrenPerRoom: children, questions: int("questions", 5), warmup: int("warmup", 1),
                                           answersPerSecond: double("answers-per-second", 2_000), serverPID: value("server-pid").flatMap(Int32.init),
                                           phaseFile: value("phase-file"))
            emit(result, "quiz \(rooms)×\(children): reveal \(result.reveal.summary) · ack \(result.acknowledgement.summary) · question p99 \(String(format: "%.1f", result.question.p99)) ms · podium p99 \(String(format: "%.1f", result.finished.p99)) ms\(costSummary(result.cost))")
        case "sustained":
            let result = try await runSustained(host: host, port: port, adminToken: admin, rooms: rooms, childrenPerRoom: children, duration: double("duration", 60), warmup: double("warmup-seconds", 5),
                                                serverPID: value("server-pid").flatMap(Int32.init), phaseFile: value("phase-file"))
            let types = result.byType.sorted { $0.key < $1.key }.map { "\($0.key) p99 \(String(format: "%.1f", $0.value.p99)) (n=\($0.value.count))" }.joined(separator: ", ")
            emit(result, "sustained \(rooms)×\(children) for \(Int(result.durationSeconds)) s: \(result.latency.summary) · \(types) · \(Int(result.messagesPerSecond)) msg/s · \(result.unanswered) unanswered\(costSummary(result.cost))\(reportedSummary(result.reportedCost))")
        case "joinstorm":
            let result = try await runJoinStorm(port: port, adminToken: admin, children: int("children", 2_000), spread: double("spread", 2), serverPID: value("server-pid").flatMap(Int32.init))
            emit(result, "joinstorm \(result.children) in \(result.spreadSeconds) s: welcome \(result.welcome.summary) · join→welcome p99 \(String(format: "%.1f", result.joinToWelcome.p99)) ms · \(result.unwelcomed) unwelcomed\(costSummary(result.cost))")
        case "idle":
            guard let pid = value("server-pid").flatMap(Int32.init) else { throw BenchError("idle needs --server-pid") }
            let result = try await runIdle(port: port, adminToken: admin, serverPID: pid, connections: int("connections", 5_000), childrenPerRoom: children)
            emit(result, "idle: \(result.connections) joined children · \(Int(result.bytesPerConnection)) bytes of server memory each")
        case "narration":
            let result = try await runNarration(port: port, adminToken: admin, requests: int("requests", 200), voice: value("voice") ?? "en", lobbySeconds: double("lobby-seconds", 3))
            var timings = String(format: "first sentence %.0f ms cold, %.0f ms warm", result.firstSentenceColdMs, result.firstSentenceWarmMs)
            if let restarted = result.firstSentenceRestartedMs { timings += String(format: ", %.0f ms after kill -9 of the worker", restarted) }
            timings += String(format: ", %.0f ms after a %.0f s lobby", result.firstSentenceAfterLobbyMs, result.lobbySeconds)
            timings += String(format: " · whole story %.0f ms cold, %.0f ms cached", result.wholeStoryColdMs, result.wholeStoryCachedMs)
            emit(result, "narration (\(result.voice)): \(result.words) words in \(result.sentences) sentences · \(timings) · cached sentence over HTTP \(result.cachedSentenceHTTP.summary)")
        case "unlock":
            let result = try await runUnlock(port: port, adminToken: admin, children: int("children", 2_000))
            emit(result, String(format: "unlock: %d children · display spread %.2f ms · questions arrived ≥ %.0f ms ahead", result.children, result.displaySpreadMs, result.smallestLeadMs))
        default:
            FileHandle.standardError.write(Data("unknown scenario \(scenario)\n\(usage)\n".utf8))
            return 64
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("storycircle-bench \(scenario): \(error)\n".utf8))
        return 1
    }
}

exit(await main())
