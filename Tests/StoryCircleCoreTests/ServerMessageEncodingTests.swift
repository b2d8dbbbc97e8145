import Foundation
import Testing
@testable import StoryCircleCore

/// The hand-written encoder (`ServerMessage.encoded()`) against Foundation's `JSONEncoder`
/// (`encodedByFoundation()`): the same JSON for every kind of message.
@Suite("Server message encoding")
struct ServerMessageEncodingTests {
    private func parsed(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// Both encoders on one message: the same JSON, numbers written the same way (member order aside:
    /// Foundation's varies), and the bytes decode back to the message.
    private func compare(_ message: ServerMessage, _ context: String) throws {
        let mine = message.encoded()
        let foundation = message.encodedByFoundation()
        let shown = "\(context): \(String(decoding: mine, as: UTF8.self)) ≠ \(String(decoding: foundation, as: UTF8.self))"
        try #require(try CanonicalJSON.canonical(mine) == CanonicalJSON.canonical(foundation), "\(shown)")
        try #require(try parsed(mine) == parsed(foundation), "\(shown)")
        try #require(try JSONDecoder().decode(ServerMessage.self, from: Data(mine)) == message, "\(context): does not decode back")
    }

    @Test func everyKindOfMessageEncodesAsFoundationDoes() throws {
        var generator = MessageGenerator(seed: 14)
        for round in 0..<200 {
            for kind in 0..<MessageGenerator.kinds {
                try compare(generator.message(kind: kind), "round \(round), kind \(kind)")
            }
        }
    }

    /// A member the generator never fills would be checked only when absent: every optional member of
    /// every payload must come up present, so a field added later without being written is caught.
    @Test func theGeneratorFillsEveryMember() {
        var generator = MessageGenerator(seed: 7)
        var seen: [String: Bool] = [:]
        func walk(_ value: Any, _ path: String) {
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                if let (_, wrapped) = mirror.children.first {
                    seen[path] = true
                    walk(wrapped, path)
                } else if seen[path] == nil {
                    seen[path] = false
                }
                return
            }
            if mirror.displayStyle == .collection {
                for child in mirror.children { walk(child.value, path + "[]") }
                return
            }
            guard mirror.displayStyle == .struct || mirror.displayStyle == .enum else { return }
            for child in mirror.children {
                let name = child.label ?? "?"
                walk(child.value, "\(path).\(name)")
            }
        }
        for _ in 0..<2_000 { walk(generator.message(), "message") }
        let neverPresent = seen.filter { !$0.value }.keys.sorted()
        #expect(neverPresent.isEmpty, "never generated: \(neverPresent)")
        #expect(seen.keys.contains("message.finished.podiumMore"), "the walk reaches into payloads")
    }

    @Test func aMessageIsNarrowEnoughToHandOverByTheThousand() {
        // A reveal or a podium hands the shell one directive per child, and an enum is as wide as its
        // widest case: a large payload stored inline (a `Welcome` was 880 bytes) is copied and moved with
        // every message of every kind. Large payloads are `indirect`.
        #expect(MemoryLayout<ServerMessage>.size <= 64, "\(MemoryLayout<ServerMessage>.size) bytes")
        #expect(MemoryLayout<RoomDirective>.size <= 128, "\(MemoryLayout<RoomDirective>.size) bytes")
    }

    @Test func everyCharacterThatMustBeEscapedIs() throws {
        let nasty = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined() + "\"\\/\u{7F}\u{2028}\u{2029}é👩‍🚀\r\n"
        let message = ServerMessage.narrationError(NarrationFailure(message: nasty))
        let text = String(decoding: message.encoded(), as: UTF8.self)
        #expect(text == #"{"type":"narration.error","code":"narration_failed","message":"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f\"\\/"# + "\u{7F}" + #"\u2028\u2029"# + "é👩‍🚀" + #"\r\n"}"#)
        #expect(try parsed(message.encoded()) == parsed(message.encodedByFoundation()))
        // The byte E2 that starts U+2028 also starts other characters, which pass unescaped.
        for text in ["\u{2027}", "\u{202A}", "\u{20AC}", "\u{E2}", "x\u{2028}", "\u{2029}x", "\u{2028}\u{2028}"] {
            try compare(.kicked(Notice(code: .kicked, message: text)), text.debugDescription)
        }
    }

    @Test func numbersAreWrittenAsFoundationWritesThem() throws {
        for time in [Int64.min, -1, 0, 7, 1_764_412_800_123, Int64.max] {
            try compare(.progress(SentenceProgress(sentence: Int(truncatingIfNeeded: time), at: ServerTime(milliseconds: time))), "\(time)")
        }
        for clientTime in [0.0, -0.0, 1, 0.1, 1.5, 100, 1e15, 1e16, 1e20, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 12_345.600000000093, 1_764_412_800_123.4] {
            try compare(.pong(Pong(id: 1, clientTime: clientTime, serverTime: ServerTime(milliseconds: 5))), "\(clientTime)")
        }
    }

    @Test func aNumberWithNoJSONFormFallsBackToFoundationsAnswer() {
        for clientTime in [Double.nan, .infinity, -.infinity] {
            let message = ServerMessage.pong(Pong(id: 1, clientTime: clientTime, serverTime: ServerTime(milliseconds: 5)))
            #expect(message.encoded() == message.encodedByFoundation())
        }
    }

    @Test func theMessagesOfARealRoomEncodeAsFoundationDoes() throws {
        // A room played through, nicknames with quotes and line separators: every message sent.
        var room = RoomDriver(settings: RoomSettings(answerGrid: true))
        let kids = try ["Ana \"the\" Great", "Ben / Two", "<b>Cat</b>", "Dan\\", "Émile 👩‍🚀"].map { try room.child($0) }
        _ = room.dashboard()
        _ = room.teacher()
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        for (question, answer) in [2, 0, 1].enumerated() {
            if question > 0 { try room.command(.next); room.waitForOpening() }
            for (i, kid) in kids.enumerated() { room.advance(by: 300); room.answer(kid, question: question, option: (answer + i) % 4) }
        }
        try room.command(.next)
        var count = 0
        for case .send(let message, _) in room.log {
            try compare(message, "\(message.type)")
            count += 1
        }
        #expect(count > 40)
    }

    /// The room's encoder, which writes what a run of reveals or podiums shares once, writes the same bytes
    /// as `encoded()` for every message a real room sends, in the order it sends them: runs that start,
    /// break and start again, screens' reveals (no `you`) among the children's, and the podium.
    @Test func theRoomsEncoderWritesWhatEncodedWritesInARealRoom() throws {
        var room = RoomDriver(settings: RoomSettings(answerGrid: true))
        let kids = try ["Ana \"the\" Great", "Ben / Two", "<b>Cat</b>", "Dan\\", "Émile 👩‍🚀", "Fay"].map { try room.child($0) }
        _ = room.dashboard()
        _ = room.teacher()
        try room.startAndPrepare()
        room.narrateToFirstQuestion()
        for question in 0..<3 {
            if question > 0 { try room.command(.next); room.waitForOpening() }
            for (i, kid) in kids.enumerated() { room.advance(by: 300); room.answer(kid, question: question, option: (question + i) % 4) }
        }
        try room.command(.next)
        var encoder = ServerMessageEncoder()
        var personalised = 0
        for case .send(let message, _) in room.log {
            #expect(String(decoding: encoder.encode(message), as: UTF8.self) == String(decoding: message.encoded(), as: UTF8.self))
            switch message {
            case .reveal(let reveal) where reveal.you != nil: personalised += 1
            case .finished(let finished) where finished.you != nil: personalised += 1
            default: break
            }
        }
        #expect(personalised == kids.count * 4)
        #expect(encoder.reused == (kids.count - 1) * 4, "after the first of each run, every child's reveal and podium came from the shared part")
    }

    @Test func aRunBreaksWhenTheSharedPartChanges() {
        func reveal(_ question: Int, points: Int, top: [ScoreboardEntry]) -> ServerMessage {
            .reveal(Reveal(question: question, correctOption: 1, explanation: "Because.", distribution: [1, 2, 0, 0],
                           you: PlayerResult(option: 1, outcome: .correct, points: points, standing: PlayerStanding(score: points, rank: 1, streak: 1, results: [.correct])), top: top))
        }
        let top = [ScoreboardEntry(rank: 1, id: "p1", nickname: "Ana", score: 900, streak: 1, connected: true, results: [.correct])]
        var other = top
        other[0].score = 950
        var encoder = ServerMessageEncoder()
        for message in [reveal(0, points: 900, top: top), reveal(0, points: 0, top: top), reveal(0, points: 5, top: other), reveal(1, points: 5, top: other), reveal(1, points: 7, top: other)] {
            #expect(String(decoding: encoder.encode(message), as: UTF8.self) == String(decoding: message.encoded(), as: UTF8.self))
        }
    }
}

