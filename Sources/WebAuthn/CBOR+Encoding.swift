import CCBOR
import Glibc

extension CBOR {
    /// The item serialised by libcbor, integers and lengths in their shortest form (as CTAP2's canonical
    /// CBOR has them); map pairs in the order given. Nil only when libcbor runs out of memory.
    public func encoded() -> [UInt8]? {
        var item = build()
        defer { if item != nil { cbor_decref(&item) } }
        guard let item else { return nil }
        var buffer: UnsafeMutablePointer<UInt8>?
        var capacity = 0
        let length = cbor_serialize_alloc(item, &buffer, &capacity)
        defer { free(buffer) }
        guard length > 0, let buffer else { return nil }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    /// A new libcbor item holding one reference (the caller's).
    private func build() -> UnsafeMutablePointer<cbor_item_t>? {
        switch self {
        case .unsigned(let value):
            return Self.integer(value, cbor_build_uint8, cbor_build_uint16, cbor_build_uint32, cbor_build_uint64)
        case .negative(let value):
            return Self.integer(value, cbor_build_negint8, cbor_build_negint16, cbor_build_negint32, cbor_build_negint64)
        case .bytes(let bytes):
            // An empty array may have no storage; libcbor wants a pointer whatever the length.
            let storage = bytes.isEmpty ? [0] : bytes
            return storage.withUnsafeBufferPointer { cbor_build_bytestring($0.baseAddress, bytes.count) }
        case .text(let text):
            let utf8 = text.utf8.map { CChar(bitPattern: $0) }
            let storage = utf8.isEmpty ? [0] : utf8
            return storage.withUnsafeBufferPointer { cbor_build_stringn($0.baseAddress, utf8.count) }
        case .array(let elements):
            guard let array = cbor_new_definite_array(elements.count) else { return nil }
            for element in elements {
                // cbor_array_push takes a reference of its own; cbor_move hands ours over.
                guard let built = element.build(), cbor_array_push(array, cbor_move(built)) else { return Self.release(array) }
            }
            return array
        case .map(let pairs):
            guard let map = cbor_new_definite_map(pairs.count) else { return nil }
            for pair in pairs {
                guard let key = pair.key.build() else { return Self.release(map) }
                guard let value = pair.value.build() else {
                    _ = Self.release(key)
                    return Self.release(map)
                }
                guard cbor_map_add(map, cbor_pair(key: cbor_move(key), value: cbor_move(value))) else { return Self.release(map) }
            }
            return map
        case .bool(let value):
            return cbor_build_bool(value)
        case .null:
            return cbor_build_ctrl(22)
        case .undefined:
            return cbor_build_ctrl(23)
        }
    }

    private static func release(_ item: UnsafeMutablePointer<cbor_item_t>) -> UnsafeMutablePointer<cbor_item_t>? {
        var item: UnsafeMutablePointer<cbor_item_t>? = item
        cbor_decref(&item)
        return nil
    }

    private static func integer(
        _ value: UInt64,
        _ build8: (UInt8) -> UnsafeMutablePointer<cbor_item_t>?, _ build16: (UInt16) -> UnsafeMutablePointer<cbor_item_t>?,
        _ build32: (UInt32) -> UnsafeMutablePointer<cbor_item_t>?, _ build64: (UInt64) -> UnsafeMutablePointer<cbor_item_t>?
    ) -> UnsafeMutablePointer<cbor_item_t>? {
        if let small = UInt8(exactly: value) { return build8(small) }
        if let medium = UInt16(exactly: value) { return build16(medium) }
        if let large = UInt32(exactly: value) { return build32(large) }
        return build64(value)
    }
}
