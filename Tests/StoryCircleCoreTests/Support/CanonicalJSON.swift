/// JSON text in one canonical form, for comparing two encoders byte for byte where it matters: object
/// members sorted by key (Foundation's `JSONEncoder` writes them in no fixed order), strings decoded and
/// written again one way, and numbers kept exactly as written (`1e+20` is not `100000000000000000000`).
enum CanonicalJSON {
    struct Malformed: Error, CustomStringConvertible {
        var offset: Int
        var description: String { "malformed JSON at byte \(offset)" }
    }

    static func canonical(_ bytes: [UInt8]) throws -> String {
        var parser = Parser(bytes: bytes)
        let text = try parser.value()
        parser.skipSpace()
        guard parser.index == bytes.count else { throw Malformed(offset: parser.index) }
        return text
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw Malformed(offset: index) }
            index += 1
        }

        mutating func value() throws -> String {
            skipSpace()
            guard index < bytes.count else { throw Malformed(offset: index) }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(String, String)] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "}") { index += 1; return "{}" }
                repeat {
                    skipSpace()
                    let key = try string()
                    try expect(UInt8(ascii: ":"))
                    members.append((key, try value()))
                    skipSpace()
                } while try separator(closing: UInt8(ascii: "}"))
                return "{" + members.sorted { $0.0 < $1.0 }.map { "\(quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
            case UInt8(ascii: "["):
                index += 1
                var elements: [String] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "]") { index += 1; return "[]" }
                repeat {
                    elements.append(try value())
                    skipSpace()
                } while try separator(closing: UInt8(ascii: "]"))
                return "[" + elements.joined(separator: ",") + "]"
            case UInt8(ascii: "\""):
                return quoted(try string())
            default:
                // A number or a literal: kept exactly as written.
                let start = index
                while index < bytes.count, !",]} \t\r\n".utf8.contains(bytes[index]) { index += 1 }
                guard index > start else { throw Malformed(offset: index) }
                return String(decoding: bytes[start..<index], as: UTF8.self)
            }
        }

        mutating func separator(closing: UInt8) throws -> Bool {
            guard index < bytes.count else { throw Malformed(offset: index) }
            index += 1
            if bytes[index - 1] == UInt8(ascii: ",") { return true }
            if bytes[index - 1] == closing { return false }
            throw Malformed(offset: index - 1)
        }

        mutating func string() throws -> String {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed(offset: index) }
            index += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw = []
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] == UInt8(ascii: "\\") else {
                    raw.append(bytes[index])
                    index += 1
                    continue
                }
                flush()
                index += 1
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)!
                    index += 4
                    if (0xD800..<0xDC00).contains(code) {
                        let low = UInt32(String(decoding: bytes[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16)!
                        index += 6
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    scalars.append(Unicode.Scalar(code)!)
                default: scalars.append(Unicode.Scalar(escaped))
                }
            }
            flush()
            try expect(UInt8(ascii: "\""))
            return String(scalars)
        }

        /// Strings written one way: every scalar outside printable ASCII as `\u{…}`.
        func quoted(_ text: String) -> String {
            "\"" + text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined() + "\""
        }
    }
}
