// libFuzzer target: the nickname normaliser. What it accepts is non-empty, at most 30 characters, trimmed,
// free of invisible characters, shows something, and is its own normal form.
import StoryCircleCore

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
    _ = Nickname.uniquenessKey(name)
    return 0
}
