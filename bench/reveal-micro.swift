// One-off micro-measure of a big room's reveal in the core: the last answer's `RoomState.handle` (the
// answer, the reveal of every child's outcome and standing, the screens' whole board) and the encoding of
// what it returns, as `Room.carryOut` encodes it. Not a test, and not a benchmark of the server: the CPU
// the room spends before the first reveal can leave, without sockets or a store.
//
//   swift build -c release --target StoryCircleCore
//   swiftc -O -parse-as-library -I .build/release/Modules bench/reveal-micro.swift \
//       .build/release/StoryCircleCore.build/*.o -o .build/reveal-micro && taskset -c 1 .build/reveal-micro [children]
//
// Each figure is the median, with the least and the most, of the questions of 7 rooms.
import Foundation
import StoryCircleCore

/// Folds nothing: the measure is of the reveal, not of nickname checks.
struct PlainSkeleton: ConfusableSkeleton {
    func foldCase(_ text: String) -> String { text.lowercased() }
    func skeleton(_ text: String) -> String { text }
}

@main
enum RevealMicro {
    static func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func main() throws {
        let children = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2_000 : 2_000
        let questions = 6
        let story = Story(
            title: "Pip", sentences: ["Pip found a gear."],
            quiz: Quiz(questions: (0..<questions).map { q in
                Question(text: "Question \(q)?", options: ["Red", "Green", "Blue", "Yellow"], answer: q % 4, timeLimit: 60, explanation: "Because the fox was hungry, it went back to the river.")
            })
        )
        var handleTimes: [Double] = [], encodeTimes: [Double] = [], answerTimes: [Double] = []
        var frames = 0, bytes = 0
        for _ in 0..<7 {
            var now = ServerTime(milliseconds: 1_000_000)
            var room = RoomState(code: "123456", story: story, credentials: RoomCredentials(teacherToken: "t", dashboardToken: "d"), lookalikes: PlainSkeleton())
            var connection: UInt64 = 0
            func next() -> ConnectionID { connection += 1; return ConnectionID(connection) }
            var kids: [ConnectionID] = []
            for i in 0..<children {
                let c = next()
                _ = room.handle(.hello(c, .join(nickname: "Child \(i) é", resumeToken: "r\(i)"), at: now))
                kids.append(c)
            }
            _ = room.handle(.hello(next(), .control(token: "t"), at: now))
            _ = room.handle(.hello(next(), .watch(token: "d"), at: now))
            var timers: [(RoomTimer, ServerTime)] = []
            func keep(_ directives: [RoomDirective]) {
                for case .schedule(let timer, let at) in directives { timers.append((timer, at)) }
            }
            func preparation(_ directives: [RoomDirective]) -> NarrationRequest? {
                for case .prepareNarration(let request) in directives { return request }
                return nil
            }
            let started = try room.perform(.start, at: now)
            keep(started)
            let request = preparation(started)!
            keep(room.handle(.narration(.prepared(preparation: request.preparation, NarrationPlan(sentences: [NarratedSentence(index: 0, text: "Pip found a gear.", durationMs: 1_000, words: [], audio: nil)])), at: now)))
            for q in 0..<questions {
                // Fire what is due until the question is open.
                var open = false
                while !open {
                    guard let (timer, at) = timers.min(by: { $0.1 < $1.1 }) else { break }
                    timers.removeAll { $0.0 == timer && $0.1 == at }
                    now = max(now, at)
                    keep(room.handle(.timer(timer, at: now)))
                    open = room.answersToCurrentQuestion == 0 && room.phase.name.rawValue == "question"
                }
                if !open {
                    keep(try room.perform(.next, at: now))
                    while room.phase.name.rawValue != "question" {
                        guard let (timer, at) = timers.min(by: { $0.1 < $1.1 }) else { break }
                        timers.removeAll { $0.0 == timer && $0.1 == at }
                        now = max(now, at)
                        keep(room.handle(.timer(timer, at: now)))
                    }
                }
                now = now + 10_000
                var answerTotal: UInt64 = 0
                for (i, kid) in kids.dropLast().enumerated() {
                    let t0 = nanoseconds()
                    _ = room.handle(.message(kid, .answer(question: q, option: i % 4), at: now))
                    answerTotal += nanoseconds() - t0
                }
                let t0 = nanoseconds()
                let directives = room.handle(.message(kids.last!, .answer(question: q, option: 1), at: now))
                let t1 = nanoseconds()
                var encoder = ServerMessageEncoder()
                for case .send(let message, _) in directives {
                    let encoded = encoder.encode(message)
                    frames += 1
                    bytes += encoded.count
                }
                let t2 = nanoseconds()
                guard directives.count > children else { print("question \(q): no reveal (\(directives.count) directives, phase \(room.phase.name.rawValue))"); continue }
                handleTimes.append(Double(t1 - t0) / 1e6)
                encodeTimes.append(Double(t2 - t1) / 1e6)
                answerTimes.append(Double(answerTotal) / Double(children - 1) / 1e3)
                keep(directives)
            }
        }
        func summary(_ xs: [Double]) -> String {
            let s = xs.sorted()
            return String(format: "%.2f (%.2f–%.2f)", s[s.count / 2], s.first!, s.last!)
        }
        print("\(children) children, \(handleTimes.count) reveals, \(bytes / max(frames, 1)) bytes per frame")
        print("last answer's handle (reveal): \(summary(handleTimes)) ms")
        print("encoding its frames:           \(summary(encodeTimes)) ms")
        print("an ordinary answer's handle:   \(summary(answerTimes)) µs")
    }
}
