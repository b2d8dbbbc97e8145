import Foundation
import Sodium
import StoryCircleCore

/// The session cookie and its CSRF defence, as text: what a browser is given, what it sends back, and the
/// checks a state-changing request passes. Pure functions; the router (`APIHandler.admit`) applies them.
///
/// The one documented choice (docs/operations.md, "Signing in"): a signed-in browser holds
/// `storycircle_session=<32 random bytes, base64url>; HttpOnly; Secure; SameSite=Strict; Path=/` with no
/// `Max-Age` (it ends with the browser; the server ends it after `lifetimeMilliseconds` whatever the browser
/// does). The store keeps only the SHA-256 of the value. Every request that the cookie authenticates other
/// than GET and HEAD must echo the session's CSRF token in `X-CSRF-Token` and must not come from another
/// origin; requests with a bearer token are exempt (a browser never adds one on its own).
public enum SessionCookies {
    public static let name = "storycircle_session"
    /// How long a session lasts from sign-in: a school day and then some, never a week on a shared computer.
    public static let lifetimeMilliseconds = 12 * 3_600_000
    /// The header a state-changing request carries the session's CSRF token in.
    public static let csrfHeader = "x-csrf-token"

    /// The most of a `Cookie` header looked at, and the most cookies in it: enough for any page of ours and
    /// whatever else a browser keeps for the host, and no more work than that for a hostile one.
    public static let maxHeaderBytes = 8_192
    public static let maxCookies = 64

    /// A new secret: 32 bytes of libsodium's generator, base64url without padding (43 characters).
    public static func newToken() -> String { Base64URL.encode(Sodium.randomBytes(32)) }

    /// The stored form of a session's secret (`SessionRecord.tokenHash`).
    public static func tokenHash(_ token: String) -> String { Sodium.sha256Hex(Array(token.utf8)) }

    /// The `Set-Cookie` value that signs a browser in.
    public static func setCookie(_ token: String) -> String {
        "\(name)=\(token); HttpOnly; Secure; SameSite=Strict; Path=/"
    }

    /// The `Set-Cookie` value that makes the browser forget the session.
    public static let clearCookie = "\(name)=; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=0"

    /// A new session for `accountID`, begun `now` by `method`, and the secret its cookie carries.
    public static func newSession(accountID: String, method: String, now: ServerTime) -> (token: String, record: SessionRecord) {
        let token = newToken()
        let record = SessionRecord(
            tokenHash: tokenHash(token), accountID: accountID, csrfToken: newToken(), createdAt: now, expiresAt: now + lifetimeMilliseconds, method: method
        )
        return (token, record)
    }

    /// The session's secret in a `Cookie` header, if one is there and looks like ours (43 characters of
    /// base64url); nil otherwise. Only the first `maxHeaderBytes` and `maxCookies` are read.
    public static func token(fromCookieHeader header: String?) -> String? {
        guard let header else { return nil }
        let bounded = header.utf8.prefix(maxHeaderBytes)
        var seen = 0
        for part in bounded.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
            seen += 1
            if seen > maxCookies { return nil }
            guard let equals = part.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = trimmed(part[part.startIndex..<equals])
            guard key.elementsEqual(name.utf8) else { continue }
            let value = trimmed(part[part.index(after: equals)...])
            if isWellFormed(value) { return String(decoding: value, as: UTF8.self) }
        }
        return nil
    }

    /// Whether `value` could be a secret of ours: 43 characters of base64url.
    public static func isWellFormed<Bytes: Collection>(_ value: Bytes) -> Bool where Bytes.Element == UInt8 {
        value.count == 43 && value.allSatisfy(isBase64url)
    }

    /// Whether the header carries the session's CSRF token, compared in constant time.
    public static func csrfMatches(_ header: String?, expected: String) -> Bool {
        guard let header, header.utf8.count == expected.utf8.count else { return false }
        return Sodium.constantTimeEquals(Array(header.utf8), Array(expected.utf8))
    }

    /// Whether an `Origin` header names this server: absent (not a browser's cross-site request: browsers
    /// send it with every one), or the same host and port as the request's `Host` or the server's public
    /// URL. `null` (a sandboxed frame, a redirect across sites) and anything else are another origin.
    public static func isSameOrigin(_ origin: String?, host: String?, publicURL: String) -> Bool {
        guard let origin else { return true }
        guard let asked = authority(ofURL: origin) else { return false }
        if let host, asked == host.lowercased() { return true }
        return authority(ofURL: publicURL) == asked
    }

    /// Whether a request that changes something came from a page of this server, as far as its headers
    /// tell before anything is looked up: its `Origin` names this server (`isSameOrigin`) and its
    /// `Sec-Fetch-Site`, when a browser sent one, says the same origin (`cross-site` and `same-site`, a
    /// sibling host, are another origin; `none` is the person's own navigation).
    public static func comesFromThisServer(origin: String?, fetchSite: String?, host: String?, publicURL: String) -> Bool {
        if let fetchSite, !["same-origin", "none"].contains(fetchSite.lowercased()) { return false }
        return isSameOrigin(origin, host: host, publicURL: publicURL)
    }

    /// Whether a state-changing request's `X-CSRF-Token` could be a session's (43 characters of base64url):
    /// one that is missing or malformed is refused before the session is looked up; its value is compared
    /// with the session's afterwards (`csrfMatches`).
    public static func hasCSRFToken(_ header: String?) -> Bool {
        header.map { isWellFormed($0.utf8) } ?? false
    }

    /// `host[:port]` of `scheme://host[:port][/…]`, lowercased, with the default port of the scheme left out.
    static func authority(ofURL text: String) -> String? {
        guard text.utf8.count <= 512, let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = components.port, port != (scheme == "https" ? 443 : 80) else { return bracketed }
        return "\(bracketed):\(port)"
    }

    private static func isBase64url(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var part = bytes
        while let first = part.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { part = part.dropFirst() }
        while let last = part.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { part = part.dropLast() }
        return part
    }
}
