import Foundation
import Testing
@testable import StoryCircleCore

/// `ClientMessage.decode` (QuickJSON, Foundation when QuickJSON gives up) against the Foundation-only
/// path it replaced: the same message or the same refusal, word for word, for every frame.
@Suite("Client message decoding")
struct ClientMessageDecodingTests {
    private func expectSameAnswer(_ bytes: [UInt8], _ context: @autoclosure () -> String = "") {
        let mine = ClientMessage.decode(bytes)
        let foundation = ClientMessage.decodeWithFoundation(bytes)
        #expect(mine == foundation, "\(context()) \(String(decoding: bytes, as: UTF8.self).debugDescription)")
    }

    @Test func generatedFramesDecodeAsFoundationDecodesThem() {
        var generator = ClientFrameGenerator(seed: 15)
        var quick = 0
        let count = 3_000
        for _ in 0..<count {
            let frame = generator.frame()
            expectSameAnswer(frame)
            if ClientMessage.decodeQuickly(frame) != nil { quick += 1 }
        }
        // The comparison means little if QuickJSON gave every frame to Foundation.
        #expect(quick > count / 2, "QuickJSON read only \(quick) of \(count)")
    }

    /// Every generated frame cut short, and with one byte changed, dropped or doubled.
    @Test func damagedFramesAreRefusedAsFoundationRefusesThem() {
        var generator = ClientFrameGenerator(seed: 16)
        for _ in 0..<150 {
            let frame = generator.frame()
            for end in 0..<frame.count { expectSameAnswer(Array(frame[..<end]), "cut") }
            for _ in 0..<8 {
                var damaged = frame
                let at = Int.random(in: 0..<damaged.count, using: &generator.random)
                switch Int.random(in: 0..<3, using: &generator.random) {
                case 0: damaged[at] = ClientFrameGenerator.hostileBytes.randomElement(using: &generator.random)!
                case 1: damaged.remove(at: at)
                default: damaged.insert(damaged[at], at: at)
                }
                expectSameAnswer(damaged, "damaged")
            }
        }
    }

    /// What QuickJSON leaves to Foundation (and what it must not get wrong when it does not).
    @Test(arguments: [
        "", " ", "null", "true", "1", #""answer""#, "[]", #"[{"type":"ping"}]"#, "{", "}", "{}", " {} ",
        "\u{FEFF}{\"type\":\"ping\"}", #"{"type":"ping",}"#, #"{"type":"ping" "id":1}"#, #"{"type":"ping",,"id":1}"#,
        #"{"type":"ping","type":"answer"}"#, #"{"type":"answer","question":1,"option":2,"option":3}"#,
        #"{'type':'ping'}"#, #"{type:"ping"}"#, #"{"type":"ping"} x"#, #"{"type":"ping"}{}"#,
        #"{"type":"answer","question":01,"option":1}"#, #"{"type":"answer","question":-0,"option":1}"#,
        #"{"type":"answer","question":1,"option":-}"#, #"{"type":"answer","question":1,"option":.5}"#,
        #"{"type":"answer","question":1,"option":1.}"#, #"{"type":"answer","question":1,"option":+1}"#,
        #"{"type":"answer","question":1,"option":2.5}"#, #"{"type":"answer","question":1,"option":18446744073709551616}"#,
        #"{"type":"answer","question":1,"option":9223372036854775807}"#, #"{"type":"answer","question":1,"option":9223372036854775808}"#,
        #"{"type":"answer","question":1,"option":-9223372036854775808}"#, #"{"type":"answer","question":1,"option":1e3}"#,
        #"{"type":"answer","question":1,"option":1E-2}"#, #"{"type":"answer","question":1,"option":1e400}"#,
        #"{"type":"answer","question":1,"option":1e-400}"#, #"{"type":"answer","question":1,"option":NaN}"#,
        #"{"type":"answer","question":1,"option":Infinity}"#, #"{"type":"answer","question":1,"option":0x10}"#,
        #"{"type":"answer","question":-1,"option":0}"#, #"{"type":"answer","question":1.0,"option":2.000}"#,
        #"{"type":"answer","question":1,"option":12345678901234567890123456789012345678901234567890}"#,
        #"{"type":"answer","question":1,"option":0.00000000000000000000000000000000000000000000000001}"#,
        #"{"type":"answer","question":1,"option":true}"#, #"{"type":"answer","question":1,"option":"2"}"#,
        #"{"type":"answer","question":1,"option":null}"#, #"{"type":"answer","question":[1],"option":{}}"#,
        #"{"type":"join","room":"1","nickname":"\ud83d\ude00"}"#, #"{"type":"join","room":"1","nickname":"\ud83d"}"#,
        #"{"type":"join","room":"1","nickname":"\ude00\ud83d"}"#, #"{"type":"join","room":"1","nickname":"\ud83dx"}"#,
        #"{"type":"join","room":"1","nickname":"\u0000\u001f\u2028\/\b\f\n\r\t\"\\"}"#,
        #"{"type":"join","room":"1","nickname":"\x41"}"#, #"{"type":"join","room":"1","nickname":"\u12"}"#,
        #"{"type":"join","room":"1","nickname":"\U0041"}"#, "{\"type\":\"join\",\"room\":\"1\",\"nickname\":\"a\tb\"}",
        "{\"type\":\"join\",\"room\":\"1\",\"nickname\":\"a\nb\"}", "{\"type\":\"join\",\"room\":\"1\",\"nickname\":\"a\u{7F}b\"}",
        #"{"type":"join","room":"1","nickname":"e\u0301","nickname":"\u00e9"}"#, #"{"type":"join","room":"1","e\u0301":1,"\u00e9":2,"nickname":"x"}"#,
        "{\"type\"\u{0B}:\"ping\"}", "{\"type\"\u{A0}:\"ping\"}", "\t\r\n{\t\r\n\"type\"\t\r\n:\t\r\n\"ping\"\t\r\n}\t\r\n",
        #"{"type":"ping","id":1,"clientTime":-0.0,"rtt":-5}"#, #"{"type":"ping","clientTime":1764412800123.456}"#,
        #"{"type":"ping","extra":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
        #"{"type":"ping","extra":{"a":{"b":[true,false,null,{"c":"d"}]}}}"#, #"{"type":"ping","extra":[1,]}"#,
        #"{"type":"command","command":"settings","settings":{"timer":false,"questionSeconds":20}}"#,
        #"{"type":"command","command":"settings","settings":{"questionSeconds":2.5}}"#,
        #"{"type":"command","command":"settings","settings":{"voice":null}}"#, #"{"type":"command","command":"settings","settings":[]}"#,
        #"{"type":"command","command":"settings"}"#, #"{"type":"command","command":"kick","player":"p1"}"#,
        #"{"type":"command","command":"explode"}"#, #"{"type":"dance"}"#, #"{"type":1}"#, #"{"type":null}"#,
        #"{"TYPE":"ping"}"#, #"{"type":"Ping"}"#, #"{"type":"ping\u0000"}"#,
    ])
    func hostileFramesDecodeAsFoundationDecodesThem(_ text: String) {
        expectSameAnswer(Array(text.utf8))
    }

    /// QuickJSON finds a duplicate key by walking the members read so far, so it leaves objects of many
    /// members to Foundation (a frame of thousands of keys must not cost their square); up to the limit it
    /// reads them, at the top and nested, with a duplicate among them or not.
    @Test func objectsOfManyMembersAreLeftToFoundationAndReadTheSame() {
        func frame(_ count: Int, nested: Bool = false, duplicate: Bool = false) -> [UInt8] {
            var members = (0..<count).map { #""k\#($0)":\#($0)"# }
            if duplicate { members.append(#""k0":1"#) }
            let object = "{" + members.joined(separator: ",") + "}"
            let text = nested ? #"{"type":"ping","extra":\#(object)}"# : #"{"type":"ping","id":7,"# + object.dropFirst()
            return Array(text.utf8)
        }
        for count in [29, 30, 31, 32, 33, 200, 5_000] {
            for nested in [false, true] {
                for duplicate in [false, true] {
                    expectSameAnswer(frame(count, nested: nested, duplicate: duplicate), "\(count) nested \(nested) duplicate \(duplicate)")
                }
            }
        }
        #expect(ClientMessage.decodeQuickly(frame(30)) != nil)
        #expect(ClientMessage.decodeQuickly(frame(31, nested: true)) != nil)
        #expect(ClientMessage.decodeQuickly(frame(31)) == nil)
        #expect(ClientMessage.decodeQuickly(frame(33, nested: true)) == nil)
        #expect(ClientMessage.decodeQuickly(frame(5_000)) == nil)
        #expect(ClientMessage.decodeQuickly(frame(20, duplicate: true)) == nil)
    }

    @Test func invalidUTF8AndStrayBytesAreLeftToFoundation() {
        let prefix = Array(#"{"type":"join","room":"1","nickname":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        let strays: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x80], [0x80],
                                 [0xEF, 0xBB, 0xBF], [0xF0, 0x9F, 0x98, 0x80], [0x00]]
        for stray in strays {
            expectSameAnswer(prefix + stray + suffix, "\(stray)")
            expectSameAnswer(stray + Array(#"{"type":"ping"}"#.utf8), "before \(stray)")
            expectSameAnswer(Array(#"{"type":"ping"}"#.utf8) + stray, "after \(stray)")
        }
        // The hot messages do take the quick path.
        for text in [#"{"type":"answer","question":3,"option":2}"#, #"{"type":"ping","id":41,"clientTime":1764412800123.5,"rtt":38}"#,
                     #"{"type":"command","command":"next"}"#, #"{"type":"join","room":"123456","nickname":"Ana \"é\" 👩‍🚀\u2028"}"#] {
            #expect(ClientMessage.decodeQuickly(Array(text.utf8)) != nil, "\(text)")
        }
    }
}

/// Client frames as browsers and less careful clients write them: every message type, fields in any order,
/// with white space, escapes, unknown fields, nulls, wrong types and numbers in every JSON form.
struct ClientFrameGenerator {
    var random: SeededRandom
    private var strings: MessageGenerator

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        strings = MessageGenerator(seed: seed &* 31)
    }

    /// Bytes that break JSON, or break it subtly.
    static let hostileBytes: [UInt8] = Array(#"{}[]":,\ -+.0123456789eEtfnu"#.utf8) + [0x00, 0x09, 0x0A, 0x0B, 0x1F, 0x7F, 0x80, 0xC3, 0xE2, 0xED, 0xFF]

    private mutating func space() -> String {
        random.oneIn(4) ? ["", " ", "\n", "\t", "\r\n  ", "  "].randomElement(using: &random)! : ""
    }

    /// A JSON string, each scalar written raw or escaped one of the ways JSON allows.
    private mutating func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            let escapeAnyway = random.oneIn(8)
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where escapeAnyway: out += "\\/"
            case "\n": out += "\\n"
            case "\t": out += random.oneIn(2) ? "\\t" : "\\u0009"
            case _ where scalar.value < 0x20 || escapeAnyway:
                if scalar.value > 0xFFFF {
                    let value = scalar.value - 0x10000
                    out += String(format: "\\u%04X\\u%04x", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
                } else {
                    out += String(format: random.oneIn(2) ? "\\u%04x" : "\\u%04X", scalar.value)
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A whole number mostly, in one of its JSON spellings; sometimes what is no index at all.
    private mutating func number() -> String {
        let whole = [0, 1, 2, 3, -1, 7, 40, 1_999, Int.max, Int.min].randomElement(using: &random)!
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return "\(whole).0"
        case 1: return "\(whole)e0"
        case 2: return ["2.5", "-0.5", "1e-3", "1.5E2", "18446744073709551616", "9223372036854775808", "-0", "0.0", "1e308", "123456789012345678"].randomElement(using: &random)!
        case 3: return "\(Double.random(in: -1e6...1e15, using: &random))"
        default: return "\(whole)"
        }
    }

    private mutating func anyValue(depth: Int = 0) -> String {
        switch Int.random(in: 0..<(depth > 2 ? 5 : 7), using: &random) {
        case 0: return "null"
        case 1: return random.oneIn(2) ? "true" : "false"
        case 2: return number()
        case 3, 4: return quoted(strings.string())
        case 5: return "[" + (0..<Int.random(in: 0...3, using: &random)).map { _ in space() + anyValue(depth: depth + 1) }.joined(separator: ",") + "]"
        default: return object((0..<Int.random(in: 0...3, using: &random)).map { _ in (strings.string(maxLength: 6), anyValue(depth: depth + 1)) })
        }
    }

    private mutating func object(_ members: [(String, String)]) -> String {
        "{" + space() + members.map { quoted($0.0) + space() + ":" + space() + $0.1 }.joined(separator: space() + "," + space()) + space() + "}"
    }

    /// A field's value: nearly always of the right type, sometimes null or of another type.
    private mutating func value(_ right: String) -> String {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: return "null"
        case 1: return anyValue()
        default: return right
        }
    }

    mutating func frame() -> [UInt8] {
        var members: [(String, String)] = []
        let types = ClientMessage.typeNames + ["dance", ""]
        let type = random.oneIn(30) ? types.last! : types.randomElement(using: &random)!
        if !random.oneIn(40) { members.append(("type", value(quoted(type)))) }
        func add(_ name: String, _ make: (inout ClientFrameGenerator) -> String) {
            if !random.oneIn(15) { members.append((name, value(make(&self)))) }
        }
        switch type {
        case "join":
            add("room") { $0.quoted(String(Int.random(in: 100_000...999_999, using: &$0.random))) }
            add("nickname") { $0.quoted($0.strings.string()) }
        case "rejoin", "watch", "control":
            add("room") { $0.quoted("123456") }
            add("token") { $0.quoted($0.strings.string()) }
        case "answer":
            add("question") { $0.number() }
            add("option") { $0.number() }
        case "ping":
            add("id") { $0.number() }
            add("clientTime") { "\(Double.random(in: 0...2e12, using: &$0.random))" }
            add("rtt") { $0.number() }
        case "command":
            let commands = ["start", "next", "reveal", "pause", "resume", "lock", "unlock", "end", "kick", "block", "settings", "explode"]
            add("command") { $0.quoted(commands.randomElement(using: &$0.random)!) }
            add("player") { $0.quoted("p\(Int.random(in: 1...40, using: &$0.random))") }
            if random.oneIn(2) {
                add("settings") { generator in
                    var settings = [("timer", "false"), ("questionSeconds", generator.number()), ("voice", generator.quoted(generator.strings.string())),
                                    ("speedPoints", generator.anyValue())]
                    settings.removeFirst(Int.random(in: 0...settings.count, using: &generator.random))
                    return generator.object(settings)
                }
            }
        default:
            break
        }
        for _ in 0..<(random.oneIn(4) ? Int.random(in: 1...3, using: &random) : 0) {
            members.append((random.oneIn(5) ? "option" : strings.string(maxLength: 8), anyValue()))
        }
        members.shuffle(using: &random)
        return Array((space() + object(members) + space()).utf8)
    }
}
