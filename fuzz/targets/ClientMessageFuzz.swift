// libFuzzer target: the WebSocket message decoder. Any bytes either decode to a message or give a refusal
// with a code; a decoded message encodes (as a client sends it) and decodes back to itself; and whatever
// QuickJSON reads, it reads as Foundation's JSONDecoder does (same message, or same refusal word for word).
import Foundation
import StoryCircleCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    if let quick = ClientMessage.decodeQuickly(bytes) {
        let foundation = ClientMessage.decodeWithFoundation(bytes)
        precondition(quick == foundation, "QuickJSON read \(quick), Foundation \(foundation)")
    }
    switch ClientMessage.decode(bytes) {
    case .success(let message):
        guard let encoded = try? JSONEncoder().encode(message) else { fatalError("a decoded message does not encode: \(message)") }
        guard case .success(let again) = ClientMessage.decode(Array(encoded)) else {
            fatalError("\(message) encodes to \(String(decoding: encoded, as: UTF8.self)), which does not decode")
        }
        precondition(again == message, "round trip: \(message) became \(again)")
    case .failure(let error):
        precondition(!error.message.isEmpty, "a refusal without a sentence: \(error.code)")
        precondition([.invalidJSON, .invalidMessage, .unknownType, .invalidCommand].contains(error.code), "unexpected code \(error.code)")
    }
    return 0
}
