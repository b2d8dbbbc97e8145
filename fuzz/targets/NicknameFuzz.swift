// libFuzzer target: the nickname normaliser and the look-alike keys (with ICU's data, as the server has
// them). What the normaliser accepts is non-empty, at most 40 characters, trimmed, free of invisible
// characters, shows something, and is its own normal form; its keys are one or two, none empty, and each
// folds to itself (the folding settles within its steps).
import Confusables
import StoryCircleCore

private let lookalikes = try! ICUConfusables()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNickname(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // The transport hands the core valid UTF-8 only (libwebsockets checks it); decoding repairs the rest.
    let raw = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard case .success(let name) = Nickname.normalize(raw) else { return 0 }
    precondition(!name.isEmpty && name.count <= Nickname.maximumLength, "accepted \(name.debugDescription)")
    precondition(name.first?.isWhitespace == false && name.last?.isWhitespace == false, "untrimmed \(name.debugDescription)")
    precondition(!name.contains("  "), "uncollapsed \(name.debugDescription)")
    precondition(Nickname.normalize(name) == .success(name), "not idempotent: \(name.debugDescription)")
    precondition(name.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }, "a control character in \(name.debugDescription)")
    precondition(name.contains { !$0.isWhitespace }, "a blank name \(name.debugDescription)")
    let keys = Nickname.matchingKeys(name, using: lookalikes)
    precondition((1...2).contains(keys.count) && keys.allSatisfy { !$0.isEmpty }, "keys \(keys.debugDescription) of \(name.debugDescription)")
    for key in keys {
        precondition(Nickname.matchingKeys(key, using: lookalikes).first == key, "unsettled key \(key.debugDescription) of \(name.debugDescription)")
    }
    return 0
}
