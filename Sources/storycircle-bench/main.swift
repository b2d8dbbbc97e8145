import Foundation
import Glibc

// storycircle-bench: the load generator. One scenario per run; JSON on stdout, a one-line summary on
// stderr. bench/run.sh runs them all, against StoryCircle and the two baselines.
let usage = """
USAGE: storycircle-bench <scenario> --port <port> [options]

SCENARIOS:
  fanout      R rooms × C children; the teacher triggers broadcasts (latency, then throughput)
  answers     answers spread over one second across rooms (send → durable acknowledgement)
  idle        N joined, idle children (server memory per connection; needs --server-pid)
  unlock      one room; every child syncs its clock, then the quiz unlocks (display spread)
  narration   a 300-word story on an empty audio cache, again cached, and cached audio over HTTP

OPTIONS:
  --port <port>            the server
  --target <target>        storycircle (default), or baseline-c / baseline-python (fanout only)
  --admin-token <token>    StoryCircle's admin token
  --rooms <n>              (default 250)      --children <n>   children per room (default 40)
  --rounds <n>             latency rounds (default 20)       --burst <n>   throughput triggers per room (default 20)
  --payload-bytes <n>      baseline message size (default 68)
  --connections <n>        idle connections (default 5000)   --server-pid <pid>
"""

func value(_ name: String) -> String? {
    guard let i = CommandLine.arguments.firstIndex(of: "--\(name)"), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

func int(_ name: String, _ fallback: Int) -> Int { value(name).flatMap(Int.init) ?? fallback }

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
    do {
        switch scenario {
        case "fanout":
            let targetName = value("target") ?? "storycircle"
            let label = rooms == 1 ? "bigroom" : "fanout"
            let result: FanoutResult
            if targetName == "storycircle" {
                result = try await runFanout(scenario: label, target: StoryCircleTarget(port: port, adminToken: admin), port: port, rooms: rooms, childrenPerRoom: children, rounds: int("rounds", 20), burst: int("burst", 20), serverPID: value("server-pid").flatMap(Int32.init))
            } else {
                result = try await runFanout(scenario: label, target: BaselineTarget(name: targetName, payloadBytes: int("payload-bytes", 68)), port: port, rooms: rooms, childrenPerRoom: children, rounds: int("rounds", 20), burst: int("burst", 20), serverPID: value("server-pid").flatMap(Int32.init))
            }
            let cost = result.serverMicrosecondsPerMessage.map { String(format: " · server %.2f µs CPU/msg", $0) } ?? ""
            emit(result, "\(label) [\(result.target)] \(rooms)×\(children): \(result.latency.summary) · \(Int(result.throughputMessagesPerSecond)) msg/s · \(Int(result.messageBytes)) B/msg\(cost)")
        case "answers":
            let result = try await runAnswers(port: port, adminToken: admin, rooms: rooms, childrenPerRoom: children, spreadSeconds: 1)
            emit(result, "answers: \(result.acknowledged)/\(result.answers) acknowledged · send→ack \(result.acknowledgement.summary)")
        case "idle":
            guard let pid = value("server-pid").flatMap(Int32.init) else { throw BenchError("idle needs --server-pid") }
            let result = try await runIdle(port: port, adminToken: admin, serverPID: pid, connections: int("connections", 5_000), childrenPerRoom: children)
            emit(result, "idle: \(result.connections) joined children · \(Int(result.bytesPerConnection)) bytes of server memory each")
        case "narration":
            let result = try await runNarration(port: port, adminToken: admin, requests: int("requests", 200))
            let timings = String(format: "first sentence %.0f ms cold · whole story %.0f ms cold, %.0f ms cached", result.firstSentenceColdMs, result.wholeStoryColdMs, result.wholeStoryCachedMs)
            emit(result, "narration: \(result.words) words in \(result.sentences) sentences · \(timings) · cached sentence over HTTP \(result.cachedSentenceHTTP.summary)")
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
