import CCBOR
import Glibc

/// A CBOR data item (RFC 8949) as libcbor decoded it: what WebAuthn's attestation objects, attestation
/// statements and COSE keys are made of. Maps keep their pairs in order; keys are unique.
///
/// Tags and floating-point numbers are refused, not read: CTAP2's canonical CBOR forbids tags and nothing
/// in WebAuthn is a float; libcbor 0.8 refuses to read back some tags it writes itself (6…20 in the head
/// byte), and a NaN is unequal to itself, so neither could be compared or round-tripped faithfully.
public indirect enum CBOR: Sendable, Equatable {
    case unsigned(UInt64)
    /// The integer -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([CBORPair])
    case bool(Bool)
    case null
    case undefined

    public init(_ value: Int) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The integer, when it is one that fits an `Int`.
    public var int: Int? {
        switch self {
        case .unsigned(let n) where n <= UInt64(Int.max): Int(n)
        case .negative(let n) where n <= UInt64(Int.max): -Int(n) - 1
        default: nil
        }
    }

    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    public var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    public var pairs: [CBORPair]? {
        if case .map(let pairs) = self { return pairs }
        return nil
    }

    /// The value under `key` in a map; nil when this is not a map or has no such key.
    public subscript(key: CBOR) -> CBOR? {
        pairs?.first { $0.key == key }?.value
    }

    public subscript(key: Int) -> CBOR? { self[CBOR(key)] }
    public subscript(key: String) -> CBOR? { self[.text(key)] }
}

public struct CBORPair: Sendable, Equatable {
    public var key: CBOR
    public var value: CBOR
    public init(_ key: CBOR, _ value: CBOR) {
        self.key = key
        self.value = value
    }
}

/// Why bytes are not the CBOR we accept.
public enum CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is longer than the caller allows.
    case tooLarge
    /// The input ends inside an item, or declares more items than it has bytes.
    case truncated
    /// libcbor refused the bytes (a reserved value, a malformed head).
    case malformed
    /// Nested deeper than the caller allows.
    case tooDeep
    /// An indefinite-length string, array or map: CTAP2's canonical CBOR has none, and refusing them keeps
    /// every length known before anything is allocated.
    case indefiniteLength
    case duplicateKey
    /// A text string that is not UTF-8.
    case invalidText
    /// Bytes after the one item expected.
    case trailingBytes
    /// A tag or a floating-point number.
    case unsupportedItem
    case outOfMemory

    public var description: String {
        switch self {
        case .tooLarge: "the CBOR is too large"
        case .truncated: "the CBOR ends inside an item"
        case .malformed: "the bytes are not CBOR"
        case .tooDeep: "the CBOR is nested too deeply"
        case .indefiniteLength: "the CBOR has an indefinite length"
        case .duplicateKey: "a CBOR map repeats a key"
        case .invalidText: "a CBOR text string is not UTF-8"
        case .trailingBytes: "bytes follow the CBOR item"
        case .unsupportedItem: "the CBOR has a tag or a floating-point number, which passkeys never use"
        case .outOfMemory: "out of memory decoding CBOR"
        }
    }
}

extension CBOR {
    /// The one item that `bytes` hold, nothing after it.
    public static func decode(_ bytes: [UInt8], maxBytes: Int = 65_536, maxDepth: Int = 16) throws(CBORError) -> CBOR {
        let (item, length) = try decodePrefix(bytes[...], maxBytes: maxBytes, maxDepth: maxDepth)
        guard length == bytes.count else { throw .trailingBytes }
        return item
    }

    /// The item at the start of `bytes` and how many bytes it takes (a COSE key inside authenticator data
    /// is followed by the extensions).
    ///
    /// libcbor's streaming decoder walks the heads first (`Shape`): every declared length is checked against
    /// the bytes left and the nesting against `maxDepth` before `cbor_load` allocates anything, since it
    /// reserves a declared array's slots up front and frees nested items recursively.
    public static func decodePrefix(_ bytes: ArraySlice<UInt8>, maxBytes: Int = 65_536, maxDepth: Int = 16) throws(CBORError) -> (CBOR, Int) {
        guard bytes.count <= maxBytes else { throw .tooLarge }
        guard !bytes.isEmpty else { throw .truncated }
        let contiguous = Array(bytes)
        let outcome = contiguous.withUnsafeBufferPointer { buffer -> Result<(CBOR, Int), CBORError> in
            let base = buffer.baseAddress!
            let length: Int
            switch Shape.measure(base, buffer.count, maxDepth: maxDepth) {
            case .success(let measured): length = measured
            case .failure(let error): return .failure(error)
            }
            var result = cbor_load_result()
            var loaded: UnsafeMutablePointer<cbor_item_t>? = cbor_load(base, length, &result)
            defer { if loaded != nil { cbor_decref(&loaded) } }
            guard let item = loaded else {
                return .failure(result.error.code == CBOR_ERR_MEMERROR ? .outOfMemory : .malformed)
            }
            guard result.read == length else { return .failure(.malformed) }
            return Result { () throws(CBORError) in (try CBOR(item: item), length) }
        }
        return try outcome.get()
    }

    /// libcbor's item as a Swift value (its depth already bounded by `Shape`).
    private init(item: UnsafeMutablePointer<cbor_item_t>) throws(CBORError) {
        switch cbor_typeof(item) {
        case CBOR_TYPE_UINT:
            self = .unsigned(cbor_get_int(item))
        case CBOR_TYPE_NEGINT:
            self = .negative(cbor_get_int(item))
        case CBOR_TYPE_BYTESTRING:
            guard cbor_bytestring_is_definite(item) else { throw .indefiniteLength }
            self = .bytes(Self.copy(cbor_bytestring_handle(item), cbor_bytestring_length(item)))
        case CBOR_TYPE_STRING:
            guard cbor_string_is_definite(item) else { throw .indefiniteLength }
            let raw = Self.copy(cbor_string_handle(item), cbor_string_length(item))
            guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidText }
            self = .text(text)
        case CBOR_TYPE_ARRAY:
            guard cbor_array_is_definite(item) else { throw .indefiniteLength }
            let handle = cbor_array_handle(item)
            var elements: [CBOR] = []
            for index in 0..<cbor_array_size(item) {
                guard let element = handle?[index] else { throw .malformed }
                elements.append(try CBOR(item: element))
            }
            self = .array(elements)
        case CBOR_TYPE_MAP:
            guard cbor_map_is_definite(item) else { throw .indefiniteLength }
            let handle = cbor_map_handle(item)
            var pairs: [CBORPair] = []
            for index in 0..<cbor_map_size(item) {
                guard let pair = handle?[index], let key = pair.key, let value = pair.value else { throw .malformed }
                let decodedKey = try CBOR(item: key)
                guard !pairs.contains(where: { $0.key == decodedKey }) else { throw .duplicateKey }
                pairs.append(CBORPair(decodedKey, try CBOR(item: value)))
            }
            self = .map(pairs)
        case CBOR_TYPE_FLOAT_CTRL where cbor_float_ctrl_is_ctrl(item):
            switch cbor_ctrl_value(item) {
            case 20: self = .bool(false)
            case 21: self = .bool(true)
            case 22: self = .null
            case 23: self = .undefined
            default: throw .unsupportedItem
            }
        default:
            throw .malformed
        }
    }

    private static func copy(_ pointer: UnsafeMutablePointer<UInt8>?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }
}

/// The outline of one CBOR item, from libcbor's streaming decoder: how many bytes it takes, refused when
/// a declared length exceeds the bytes left, the nesting exceeds the limit, a length is indefinite, or the
/// item is a tag or a float.
private final class Shape {
    /// For each open array or map: how many items it still expects (a map's pairs count twice).
    private var open: [UInt64] = []
    private let maxDepth: Int
    /// Bytes from the head being decoded to the end: no declared count can be larger.
    private var left: UInt64 = 0
    private var problem: CBORError?

    private init(maxDepth: Int) { self.maxDepth = maxDepth }

    static func measure(_ base: UnsafePointer<UInt8>, _ count: Int, maxDepth: Int) -> Result<Int, CBORError> {
        let shape = Shape(maxDepth: maxDepth)
        var callbacks = Shape.makeCallbacks()
        var offset = 0
        repeat {
            shape.left = UInt64(count - offset)
            let result = withExtendedLifetime(shape) {
                cbor_stream_decode(base + offset, count - offset, &callbacks, Unmanaged.passUnretained(shape).toOpaque())
            }
            if let problem = shape.problem { return .failure(problem) }
            switch result.status {
            case CBOR_DECODER_FINISHED: offset += result.read
            case CBOR_DECODER_NEDATA: return .failure(.truncated)
            default: return .failure(.malformed)
            }
        } while !shape.open.isEmpty
        return .success(offset)
    }

    private func scalar() {
        takeSlot()
        settle()
    }

    private func collection(_ items: UInt64) {
        takeSlot()
        guard items > 0 else { return settle() }
        guard items <= left else { return fail(.truncated) }
        guard open.count < maxDepth else { return fail(.tooDeep) }
        open.append(items)
    }

    private func takeSlot() {
        if !open.isEmpty { open[open.count - 1] -= 1 }
    }

    /// Closes every level whose last item has ended.
    private func settle() {
        while let last = open.last, last == 0 { open.removeLast() }
    }

    private func fail(_ error: CBORError) {
        if problem == nil { problem = error }
    }

    private static func on(_ context: UnsafeMutableRawPointer?, _ body: (Shape) -> Void) {
        guard let context else { return }
        body(Unmanaged<Shape>.fromOpaque(context).takeUnretainedValue())
    }

    private static func makeCallbacks() -> cbor_callbacks {
        var callbacks = cbor_empty_callbacks
        callbacks.uint8 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.uint16 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.uint32 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.uint64 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.negint8 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.negint16 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.negint32 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.negint64 = { context, _ in Shape.on(context) { $0.scalar() } }
        callbacks.byte_string = { context, _, _ in Shape.on(context) { $0.scalar() } }
        callbacks.string = { context, _, _ in Shape.on(context) { $0.scalar() } }
        callbacks.float2 = { context, _ in Shape.on(context) { $0.fail(.unsupportedItem) } }
        callbacks.float4 = { context, _ in Shape.on(context) { $0.fail(.unsupportedItem) } }
        callbacks.float8 = { context, _ in Shape.on(context) { $0.fail(.unsupportedItem) } }
        callbacks.undefined = { context in Shape.on(context) { $0.scalar() } }
        callbacks.null = { context in Shape.on(context) { $0.scalar() } }
        callbacks.boolean = { context, _ in Shape.on(context) { $0.scalar() } }
        // size_t arrives as Int: a declared count of 2^63 or more reads negative, so it is taken by its bits.
        callbacks.array_start = { context, count in Shape.on(context) { $0.collection(UInt64(UInt(bitPattern: count))) } }
        callbacks.map_start = { context, count in
            Shape.on(context) { shape in
                let (items, overflow) = UInt64(UInt(bitPattern: count)).multipliedReportingOverflow(by: 2)
                overflow ? shape.fail(.truncated) : shape.collection(items)
            }
        }
        callbacks.tag = { context, _ in Shape.on(context) { $0.fail(.unsupportedItem) } }
        callbacks.byte_string_start = { context in Shape.on(context) { $0.fail(.indefiniteLength) } }
        callbacks.string_start = { context in Shape.on(context) { $0.fail(.indefiniteLength) } }
        callbacks.indef_array_start = { context in Shape.on(context) { $0.fail(.indefiniteLength) } }
        callbacks.indef_map_start = { context in Shape.on(context) { $0.fail(.indefiniteLength) } }
        callbacks.indef_break = { context in Shape.on(context) { $0.fail(.indefiniteLength) } }
        return callbacks
    }
}
