/// A small JSON reader for the messages clients send all the time (`answer`, `ping`, `command`), which
/// `JSONDecoder` took about 10 µs each to read (and up to 30 µs on a busy server).
///
/// It reads only what it is sure of: a top-level object of plain JSON, as RFC 8259 has it. At the first
/// thing it is not sure of — anything malformed, but also a byte-order mark, a trailing comma, a
/// duplicate key, an exponent, a number longer than 40 characters, an escaped lone surrogate, invalid
/// UTF-8, nesting deeper than 32, an object of more than 32 members — it gives up (`nil`), and the
/// caller asks Foundation, whose answer (including its quirks: it accepts trailing commas and a BOM,
/// keeps the first of duplicate keys, refuses numbers that overflow a `Double`) is then the answer. So
/// whatever it returns is what `JSONDecoder` would have read, which `ClientMessageFuzz` checks on every
/// input it makes up.
enum QuickJSON {
    /// The top-level object's members in the order written, keys all different. A client's frame has two to
    /// four of them: reading them as a list costs none of a dictionary's allocation and hashing.
    static func members(_ bytes: UnsafeBufferPointer<UInt8>) -> [(key: String, value: JSONValue)]? {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard let members = reader.members(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.atEnd ? members : nil
    }

    private static let maximumDepth = 32
    private static let maximumNumberLength = 40
    private static let maximumMembers = 32

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// Consumes `byte` (after white space) if it comes next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard peek == byte else { return false }
            index += 1
            return true
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipSpace()
            guard let first = peek else { return nil }
            switch first {
            case UInt8(ascii: "{"):
                return members(depth: depth).map { .object(Dictionary(uniqueKeysWithValues: $0)) }
            case UInt8(ascii: "["):
                guard depth < QuickJSON.maximumDepth else { return nil }
                index += 1
                var array: [JSONValue] = []
                if take(UInt8(ascii: "]")) { return .array(array) }
                repeat {
                    guard let element = value(depth: depth + 1) else { return nil }
                    array.append(element)
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "]")) ? .array(array) : nil
            case UInt8(ascii: "\""):
                return string().map(JSONValue.string)
            case UInt8(ascii: "t"):
                return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"):
                return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"):
                return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return number().map(JSONValue.number)
            default:
                return nil
            }
        }

        /// An object (the reader at its `{`), as its members in the order written.
        mutating func members(depth: Int) -> [(key: String, value: JSONValue)]? {
            guard peek == UInt8(ascii: "{"), depth < QuickJSON.maximumDepth else { return nil }
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            if take(UInt8(ascii: "}")) { return members }
            repeat {
                skipSpace()
                guard peek == UInt8(ascii: "\""), let key = string(), take(UInt8(ascii: ":")), let value = value(depth: depth + 1) else { return nil }
                // Foundation keeps the first of two equal keys; rare enough to leave to it. The check is a
                // walk over the members so far, so an object of more than a few dozen goes to Foundation too.
                guard members.count < QuickJSON.maximumMembers, !members.contains(where: { $0.key == key }) else { return nil }
                members.append((key, value))
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}")) ? members : nil
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let length = word.utf8CodeUnitCount
            guard bytes.count - index >= length else { return false }
            let matches = word.withUTF8Buffer { expected in (0..<length).allSatisfy { bytes[index + $0] == expected[$0] } }
            if matches { index += length }
            return matches
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most 40 characters: such a number is finite, and not so
        /// small that it could round to zero, so Foundation reads it too, to the same `Double` (both round
        /// correctly). Whole numbers of up to 15 digits are read here, exactly; others by the standard
        /// library.
        mutating func number() -> Double? {
            let start = index
            var negative = false
            if peek == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let digitsStart = index
            var whole: Int64 = 0
            while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if index - digitsStart < 15 { whole = whole * 10 + Int64(byte - UInt8(ascii: "0")) }
                index += 1
            }
            let digits = index - digitsStart
            guard digits > 0, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { return nil }
            var fraction = false
            if peek == UInt8(ascii: ".") {
                fraction = true
                index += 1
                let fractionStart = index
                while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
                guard index > fractionStart else { return nil }
            }
            // An exponent (or anything else glued on) is left to Foundation.
            if let byte = peek, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return nil }
            guard index - start <= QuickJSON.maximumNumberLength else { return nil }
            if !fraction, digits <= 15 {
                return negative ? -Double(whole) : Double(whole)
            }
            return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        }

        /// A string, its escapes undone. Control characters must be escaped, and the result must be valid
        /// UTF-8 with no lone surrogate; anything else is left to Foundation.
        mutating func string() -> String? {
            index += 1 // the opening quote
            let start = index
            while let byte = peek, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { return nil }
                index += 1
            }
            guard let stop = peek else { return nil }
            if stop == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            // Escapes: the text is rebuilt byte by byte.
            var utf8 = Array(bytes[start..<index])
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: utf8, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"):
                        guard var code = hex4() else { return nil }
                        if (0xD800..<0xDC00).contains(code) {
                            guard literal("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { return nil }
                        utf8.append(contentsOf: UTF8.encode(scalar)!)
                    default:
                        return nil
                    }
                case 0x00..<0x20:
                    return nil
                default:
                    utf8.append(byte)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                code = code << 4 | UInt32(digit)
                index += 1
            }
            return code
        }
    }
}
