import FoundationEssentials
import Sodium

/// The signature algorithms an ID token may use here (RFC 7518 §3.1): RS256 (every provider's default) and
/// ES256. Anything else is refused by name before any key is looked at.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256"
    case es256 = "ES256"

    /// The algorithm named `name`, or the refusal: `none` and HMAC (HS*) are never accepted, since an
    /// unsigned token or one made with the client secret proves nothing about the provider.
    public static func named(_ name: String) throws(JOSEError) -> JWSAlgorithm {
        if let algorithm = JWSAlgorithm(rawValue: name) { return algorithm }
        if name.lowercased() == "none" || name.uppercased().hasPrefix("HS") { throw .algorithmRefused(String(name.prefix(16))) }
        throw .unsupportedAlgorithm(String(name.prefix(16)))
    }
}

/// A JWS in its compact serialization (RFC 7515 §7.1): `header.payload.signature`, each base64url without
/// padding. Parsing reads the header and the parts; nothing in the payload is trusted until `verify`.
public struct CompactJWS: Sendable {
    public struct Header: Sendable, Equatable, Decodable {
        public var alg: String
        public var kid: String?
        public var typ: String?
        public var crit: [String]?
    }

    public let header: Header
    public let algorithm: JWSAlgorithm
    public let payload: [UInt8]
    public let signature: [UInt8]
    /// What was signed: the first two parts as they arrived (ASCII).
    public let signingInput: [UInt8]

    public init(_ text: String) throws(JOSEError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= JOSELimits.token else { throw .tooLarge(field: "token") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a compact JWS has three parts") }
        guard !parts[0].isEmpty, !parts[1].isEmpty else { throw .malformed("an empty part") }
        let headerBytes = try Self.decode(parts[0], "header")
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: Data(headerBytes))
        } catch {
            throw .malformed("the header is not a JSON object with alg")
        }
        algorithm = try JWSAlgorithm.named(header.alg)
        guard header.crit == nil else { throw .criticalHeader }
        if let kid = header.kid, kid.utf8.count > JOSELimits.text { throw .tooLarge(field: "kid") }
        // After the algorithm, so an unsigned token (`alg: none`, no signature) is refused as what it is.
        guard !parts[2].isEmpty else { throw .malformed("an empty part") }
        self.header = header
        payload = try Self.decode(parts[1], "payload")
        signature = try Self.decode(parts[2], "signature")
        signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
    }

    /// The token's signature checked with the key its header names in `keys` (the only key, when the
    /// header names none and the set has one for the algorithm).
    public func verify(with keys: JSONWebKeySet) throws(JOSEError) {
        let key = try keys.key(for: header.kid, algorithm: algorithm)
        let verified = switch algorithm {
        case .rs256: key.key.verify(signature: signature, over: signingInput)
        case .es256: key.key.verify(rawECDSASignature: signature, over: signingInput)
        }
        guard verified else { throw .badSignature }
    }

    /// base64url without padding: only its 64 letters, so padding, whitespace and `+`/`/` are refused.
    static func decode(_ part: ArraySlice<UInt8>, _ name: String) throws(JOSEError) -> [UInt8] {
        guard part.allSatisfy(isBase64URL), let decoded = Base64URL.decode(String(decoding: part, as: UTF8.self)) else {
            throw .malformed("the \(name) is not base64url")
        }
        return decoded
    }

    public static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}
