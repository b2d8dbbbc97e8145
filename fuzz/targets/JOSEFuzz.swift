// libFuzzer target: the ID token parsers (Sources/JOSE, keys through OpenSSL). Any bytes, read as a compact
// JWS, a JWK set or an ID token, are refused with a reason or read, never a crash; a JWS that parses has
// three parts and signs exactly its first two; a key set never holds more keys than its limit.
import JOSE

private let keys = try! JSONWebKeySet(json: Array(#"""
    {"keys":[{"kty":"EC","crv":"P-256","kid":"ec-1","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}
    """#.utf8))
private let expected = IDTokenExpectation(issuer: "https://id.school.example", clientID: "storycircle", nonce: "nonce", now: 1_800_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJOSE(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let jws = try? CompactJWS(text) {
        let input = Array(text.utf8)
        precondition(input.filter { $0 == UInt8(ascii: ".") }.count == 2, "a JWS without three parts")
        precondition(input.starts(with: jws.signingInput) && input[jws.signingInput.count] == UInt8(ascii: "."), "the signing input is not the first two parts")
        _ = try? jws.verify(with: keys)
    }
    if let set = try? JSONWebKeySet(json: bytes) {
        precondition(set.keys.count + set.refused.count <= JOSELimits.keys, "more keys than the limit")
    }
    _ = try? IDToken.verify(text, keys: keys, expecting: expected)
    return 0
}
