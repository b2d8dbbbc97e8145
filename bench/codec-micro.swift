// One-off micro-measure of the wire codec: the hand-written encoder and decoder against Foundation's, in
// one process, on messages as a 40-child quiz sends and receives them. Not a test, and not a benchmark of
// the server: per-message CPU of the codec alone, to say what the hand-written paths save.
//
//   swift build -c release --target StoryCircleCore
//   swiftc -O -parse-as-library -I .build/release/Modules bench/codec-micro.swift \
//       .build/release/StoryCircleCore.build/*.o -o .build/codec-micro && taskset -c 1 .build/codec-micro
//
// Each figure is the best of 7 rounds of N messages (the least disturbed round on a shared machine).
import Foundation
import StoryCircleCore

@main
enum CodecMicro {
    static func entry(_ i: Int, answered: Bool? = nil) -> String {
        let results = (0..<6).map { ["\"correct\"", "\"wrong\"", "\"missed\""][($0 + i) % 3] }.joined(separator: ",")
        let answeredField = answered.map { ",\"answered\":\($0)" } ?? ""
        return #"{"rank":\#(i + 1),"id":"p\#(i)","nickname":"Child \#(i) é","score":\#(5_000 - i * 97),"streak":\#(i % 4),"connected":true\#(answeredField),"results":[\#(results)]}"#
    }
    static let standing = #"{"score":3120,"rank":7,"streak":2,"results":["correct","wrong","correct","correct","missed","correct"],"ahead":{"nickname":"Ana \"the\" Great","points":120}}"#

    static let servers: [(String, String)] = [
        ("answer.ack", #"{"type":"answer.ack","question":3,"option":2}"#),
        ("progress", #"{"type":"progress","sentence":12,"at":1764412800123}"#),
        ("reveal (child)", #"{"type":"reveal","question":5,"correctOption":2,"explanation":"Because the fox was hungry, it went back to the river.","distribution":[4,7,22,7],"you":{"option":2,"outcome":"correct","points":873,"standing":\#(standing)},"top":[\#((0..<5).map { entry($0) }.joined(separator: ","))]}"#),
        ("finished (child)", #"{"type":"finished","podium":[\#((0..<3).map { entry($0) }.joined(separator: ","))],"you":\#(standing)}"#),
        ("scoreboard (40)", #"{"type":"scoreboard","entries":[\#((0..<40).map { entry($0, answered: $0 % 2 == 0) }.joined(separator: ","))],"answers":{"question":5,"answered":20,"total":40}}"#),
    ]

    static let clients: [(String, String)] = [
        ("answer", #"{"type":"answer","question":3,"option":2}"#),
        ("ping", #"{"type":"ping","id":41,"clientTime":1764412800123.5,"rtt":38}"#),
        ("command next", #"{"type":"command","command":"next"}"#),
        ("invalid JSON", #"{"type":"answer","question":3,"#),
    ]

    static func measure(_ count: Int, _ body: () -> Int) -> Double {
        var best = Double.infinity
        var sink = 0
        for _ in 0..<7 {
            let start = ContinuousClock.now
            for _ in 0..<count { sink &+= body() }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            best = min(best, seconds / Double(count) * 1e6)
        }
        if sink == 42 { print("") }
        return best
    }

    static func row(_ name: String, _ bytes: Int, _ before: Double, _ after: Double) {
        print(name.padding(toLength: 24, withPad: " ", startingAt: 0) + String(format: "%5d   %13.2f   %15.2f   %5.1f×", bytes, before, after, before / after))
    }

    static func main() throws {
        print("message                 bytes   Foundation µs   hand-written µs   ratio")
        for (name, text) in servers {
            let message = try JSONDecoder().decode(ServerMessage.self, from: Data(text.utf8))
            precondition(message.encoded().count > 0)
            let count = 20_000
            let before = measure(count) { message.encodedByFoundation().count }
            let after = measure(count) { message.encoded().count }
            row("encode " + name, message.encoded().count, before, after)
        }
        for (name, text) in clients {
            let bytes = Array(text.utf8)
            precondition(ClientMessage.decode(bytes) == ClientMessage.decodeWithFoundation(bytes))
            let count = 50_000
            let before = measure(count) { (try? ClientMessage.decodeWithFoundation(bytes).get()) == nil ? 0 : 1 }
            let after = measure(count) { (try? ClientMessage.decode(bytes).get()) == nil ? 0 : 1 }
            row("decode " + name, bytes.count, before, after)
        }
    }
}
