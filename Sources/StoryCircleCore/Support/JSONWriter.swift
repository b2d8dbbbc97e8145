/// JSON written straight into bytes, for the server's messages (`ServerMessage.encoded()`).
///
/// Foundation's `JSONEncoder` builds a tree of boxed values and a dictionary per object before it writes a
/// byte; for a reveal or a podium that is one encoder per child. This writes each value as it goes. Its
/// output means exactly what `JSONEncoder` (with `.withoutEscapingSlashes`) writes for the same value: the
/// same members (in declaration order; Foundation's order is its own), numbers written the same way,
/// strings escaped the same way except that U+2028 and U+2029 are escaped too (legal in JSON, but not in
/// JavaScript source before ES2019). `ServerMessageEncodingTests` compares the two as canonical JSON.
struct JSONWriter {
    /// The bytes so far, in memory of its own: `Array`'s append checks uniqueness and capacity and goes
    /// through a generic copy for every piece, which was a third of writing a 40-child scoreboard.
    private final class Buffer {
        var start: UnsafeMutablePointer<UInt8>
        var capacity: Int
        var count = 0

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            start = .allocate(capacity: self.capacity)
        }

        deinit { start.deallocate() }

        @inline(__always) func reserve(_ more: Int) {
            guard count + more > capacity else { return }
            var grown = capacity * 2
            while grown < count + more { grown *= 2 }
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: start, count: count)
            start.deallocate()
            start = moved
            capacity = grown
        }

        @inline(__always) func append(_ byte: UInt8) {
            reserve(1)
            start[count] = byte
            count += 1
        }

        @inline(__always) func append(_ piece: UnsafeBufferPointer<UInt8>) {
            guard let base = piece.baseAddress, piece.count > 0 else { return }
            reserve(piece.count)
            (start + count).update(from: base, count: piece.count)
            count += piece.count
        }
    }

    /// One writer per message, used in place (`inout`): copies of it would share the bytes.
    private let buffer: Buffer
    /// Set when a value has no JSON form (a non-finite number): the caller falls back to `JSONEncoder`,
    /// which refuses such values the way it always has.
    private(set) var failed = false

    init(capacity: Int) {
        buffer = Buffer(capacity: capacity)
    }

    /// Goes on from `prefix`, bytes an earlier writer wrote (the shared start of a child's reveal).
    init(continuing prefix: [UInt8], capacity: Int) {
        buffer = Buffer(capacity: max(capacity, prefix.count))
        append(written: prefix)
    }

    /// The bytes written so far.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: buffer.start, count: buffer.count)) }

    /// How many bytes are written so far.
    var count: Int { buffer.count }

    /// Bytes `range` of what is written so far.
    func bytes(_ range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "outside what was written")
        return Array(UnsafeBufferPointer(start: buffer.start + range.lowerBound, count: range.count))
    }

    /// Appends bytes an earlier writer wrote, as they are.
    mutating func append(written: [UInt8]) {
        written.withUnsafeBufferPointer { buffer.append($0) }
    }

    // MARK: - Structure

    /// Commas go before a member or element unless it is the first in its object or array, which the
    /// byte before says: values never end in `{` or `[`.
    private func separate(after opening: UInt8) {
        guard buffer.count > 0 else { return }
        let last = buffer.start[buffer.count - 1]
        if last != opening, last != UInt8(ascii: ":") { buffer.append(UInt8(ascii: ",")) }
    }

    mutating func beginObject() {
        buffer.append(UInt8(ascii: "{"))
    }

    mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
    }

    /// `"name":`. Keys are the payloads' property names: ASCII letters, nothing to escape.
    ///
    /// Written with one capacity check, straight from the literal's bytes: a 40-child scoreboard writes
    /// hundreds of keys, and the closure of `withUTF8Buffer` and a check per byte were most of its time.
    mutating func key(_ name: StaticString) {
        guard name.hasPointerRepresentation else {
            separate(after: UInt8(ascii: "{"))
            buffer.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { buffer.append($0) }
            buffer.append(UInt8(ascii: "\""))
            buffer.append(UInt8(ascii: ":"))
            return
        }
        let length = name.utf8CodeUnitCount
        buffer.reserve(length + 4)
        var position = buffer.start + buffer.count
        if buffer.count > 0 {
            let last = buffer.start[buffer.count - 1]
            if last != UInt8(ascii: "{"), last != UInt8(ascii: ":") {
                position.pointee = UInt8(ascii: ",")
                position += 1
            }
        }
        position.pointee = UInt8(ascii: "\"")
        (position + 1).update(from: name.utf8Start, count: length)
        position += 1 + length
        position[0] = UInt8(ascii: "\"")
        position[1] = UInt8(ascii: ":")
        buffer.count = position + 2 - buffer.start
    }

    mutating func array<Element: JSONWritable>(_ elements: [Element]) {
        buffer.append(UInt8(ascii: "["))
        for element in elements {
            separate(after: UInt8(ascii: "["))
            element.write(to: &self)
        }
        buffer.append(UInt8(ascii: "]"))
    }

    /// A JSON object of strings, its keys sorted (a refusal's parameters). Keys are escaped like values.
    mutating func stringObject(_ members: [String: String]) {
        beginObject()
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            separate(after: UInt8(ascii: "{"))
            string(name)
            buffer.append(UInt8(ascii: ":"))
            string(value)
        }
        endObject()
    }

    // MARK: - Members

    mutating func field<Value: JSONWritable>(_ name: StaticString, _ value: Value) {
        key(name)
        value.write(to: &self)
    }

    /// Absent when `nil`, as `encodeIfPresent` (what Codable synthesises for optionals) leaves it.
    mutating func field<Value: JSONWritable>(_ name: StaticString, _ value: Value?) {
        guard let value else { return }
        field(name, value)
    }

    mutating func field<Element: JSONWritable>(_ name: StaticString, _ elements: [Element]) {
        key(name)
        array(elements)
    }

    mutating func field<Element: JSONWritable>(_ name: StaticString, _ elements: [Element]?) {
        guard let elements else { return }
        field(name, elements)
    }

    // MARK: - Values

    mutating func integer(_ value: Int64) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 { digits += 1; rest /= 10 }
        buffer.reserve(digits)
        var position = buffer.count + digits
        repeat {
            position -= 1
            buffer.start[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        buffer.count += digits
    }

    /// As `JSONEncoder` writes a `Double`: its shortest round-trip form (`description`), less a trailing
    /// ".0" ("1e+20", "0.1", "100").
    mutating func number(_ value: Double) {
        guard value.isFinite else {
            failed = true
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        append(written: Array(text.utf8))
    }

    /// `"name":value`, or `"name":null` when there is none (a field a client reads as "none", not absent).
    mutating func fieldOrNull<Value: JSONWritable>(_ name: StaticString, _ value: Value?) {
        key(name)
        if let value { value.write(to: &self) } else { append(written: Self.nullBytes) }
    }

    private static let nullBytes = Array("null".utf8)

    mutating func boolean(_ value: Bool) {
        append(written: value ? Self.trueBytes : Self.falseBytes)
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string. Escaped: `"` and `\`, every control character below U+0020 (`\n`, `\r`, `\t`, `\b`,
    /// `\f` by name, the rest as `\u00XX`), and U+2028 and U+2029. Everything else goes as UTF-8, `/`
    /// included. (A Swift string holds whole scalars only, so there is no lone surrogate to worry about.)
    mutating func string(_ value: String) {
        buffer.append(UInt8(ascii: "\""))
        if value.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
            var value = value
            value.withUTF8 { escaped($0) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var copied = 0
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte != 0xE2 {
                index += 1
                continue
            }
            var escape: (bytes: [UInt8], length: Int)?
            switch byte {
            case UInt8(ascii: "\""): escape = (Self.escapedQuote, 1)
            case UInt8(ascii: "\\"): escape = (Self.escapedBackslash, 1)
            case 0x00..<0x20: escape = (Self.escapedControls[Int(byte)], 1)
            case 0xE2 where index + 2 < utf8.count && utf8[index + 1] == 0x80 && (utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9):
                escape = (utf8[index + 2] == 0xA8 ? Self.escapedLineSeparator : Self.escapedParagraphSeparator, 3)
            default:
                break
            }
            guard let (replacement, length) = escape else {
                index += 1
                continue
            }
            buffer.append(UnsafeBufferPointer(rebasing: utf8[copied..<index]))
            replacement.withUnsafeBufferPointer { buffer.append($0) }
            index += length
            copied = index
        }
        buffer.append(UnsafeBufferPointer(rebasing: utf8[copied..<utf8.count]))
    }

    private static let escapedQuote = Array(#"\""#.utf8)
    private static let escapedBackslash = Array(#"\\"#.utf8)
    private static let escapedLineSeparator = Array(#"\u2028"#.utf8)
    private static let escapedParagraphSeparator = Array(#"\u2029"#.utf8)
    private static let escapedControls: [[UInt8]] = (0..<0x20).map { (code: Int) -> [UInt8] in
        switch code {
        case 0x08: return Array(#"\b"#.utf8)
        case 0x09: return Array(#"\t"#.utf8)
        case 0x0A: return Array(#"\n"#.utf8)
        case 0x0C: return Array(#"\f"#.utf8)
        case 0x0D: return Array(#"\r"#.utf8)
        default: return Array(#"\u00"#.utf8) + [hexDigits[code >> 4], hexDigits[code & 0xF]]
        }
    }
}

/// A value `JSONWriter` can write.
protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

/// A value written as a JSON object: its members, between braces (a message writes its payload's
/// members after its own `type`).
protocol JSONObjectWritable: JSONWritable {
    func writeMembers(to writer: inout JSONWriter)
}

extension JSONObjectWritable {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writeMembers(to: &writer)
        writer.endObject()
    }
}

extension Int: JSONWritable {
    func write(to writer: inout JSONWriter) { writer.integer(Int64(self)) }
}

extension Double: JSONWritable {
    func write(to writer: inout JSONWriter) { writer.number(self) }
}

extension Bool: JSONWritable {
    func write(to writer: inout JSONWriter) { writer.boolean(self) }
}

extension String: JSONWritable {
    func write(to writer: inout JSONWriter) { writer.string(self) }
}

extension ServerTime: JSONWritable {
    func write(to writer: inout JSONWriter) { writer.integer(milliseconds) }
}

/// Enums that are their raw string on the wire.
extension JSONWritable where Self: RawRepresentable, RawValue == String {
    func write(to writer: inout JSONWriter) { writer.string(rawValue) }
}
