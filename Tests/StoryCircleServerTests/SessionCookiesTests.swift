import Testing
@testable import StoryCircleCore
@testable import StoryCircleServer

/// The session cookie and the CSRF checks, as text.
@Suite("Session cookies")
struct SessionCookiesTests {
    let token = String(repeating: "A", count: 42) + "w"

    @Test func theCookieIsFoundAmongOthersAndOnlyWhenItLooksLikeOurs() {
        #expect(SessionCookies.token(fromCookieHeader: "theme=dark; storycircle_session=\(token); lang=fr") == token)
        #expect(SessionCookies.token(fromCookieHeader: "storycircle_session =  \(token) ") == token)
        #expect(SessionCookies.token(fromCookieHeader: "storycircle_session=short") == nil)
        #expect(SessionCookies.token(fromCookieHeader: "storycircle_session=\(token)!") == nil)
        #expect(SessionCookies.token(fromCookieHeader: "other_session=\(token)") == nil)
        #expect(SessionCookies.token(fromCookieHeader: "storycircle_session=\(String(repeating: "é", count: 43))") == nil)
        #expect(SessionCookies.token(fromCookieHeader: nil) == nil)
        #expect(SessionCookies.token(fromCookieHeader: "") == nil)
    }

    @Test func aHugeCookieHeaderIsReadOnlyAsFarAsItsBound() {
        let many = (0..<SessionCookies.maxCookies).map { "c\($0)=1" }.joined(separator: "; ")
        #expect(SessionCookies.token(fromCookieHeader: many + "; storycircle_session=\(token)") == nil)
        let long = "pad=" + String(repeating: "x", count: SessionCookies.maxHeaderBytes) + "; storycircle_session=\(token)"
        #expect(SessionCookies.token(fromCookieHeader: long) == nil)
    }

    @Test func theCookieIsHttpOnlySecureStrictAndEndsWithTheBrowser() {
        let cookie = SessionCookies.setCookie(token)
        #expect(cookie == "storycircle_session=\(token); HttpOnly; Secure; SameSite=Strict; Path=/")
        #expect(!cookie.contains("Max-Age") && !cookie.contains("Expires"))
        #expect(SessionCookies.clearCookie.hasSuffix("Max-Age=0"))
    }

    @Test func secretsAreRandomAndOnlyTheirDigestIsStored() {
        let tokens = Set((0..<100).map { _ in SessionCookies.newToken() })
        #expect(tokens.count == 100)
        #expect(tokens.allSatisfy { SessionCookies.isWellFormed(Array($0.utf8)) })
        // SHA-256 of "abc", the standard's first test vector.
        #expect(SessionCookies.tokenHash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let (secret, record) = SessionCookies.newSession(accountID: "acc_1", method: "password", now: ServerTime(milliseconds: 1_000))
        #expect(record.tokenHash == SessionCookies.tokenHash(secret))
        #expect(!record.tokenHash.contains(secret))
        #expect(record.csrfToken != secret)
        #expect(record.expiresAt == ServerTime(milliseconds: 1_000 + 12 * 3_600_000))
    }

    @Test func theCSRFTokenMustMatchExactly() {
        #expect(SessionCookies.csrfMatches("abc", expected: "abc"))
        #expect(!SessionCookies.csrfMatches("abd", expected: "abc"))
        #expect(!SessionCookies.csrfMatches("ab", expected: "abc"))
        #expect(!SessionCookies.csrfMatches(nil, expected: "abc"))
    }

    @Test func onlyThisServersOriginPasses() {
        let url = "https://192.0.2.1:8443"
        #expect(SessionCookies.isSameOrigin(nil, host: "192.0.2.1:8443", publicURL: url))
        #expect(SessionCookies.isSameOrigin("https://192.0.2.1:8443", host: "192.0.2.1:8443", publicURL: url))
        #expect(SessionCookies.isSameOrigin("http://localhost:8080", host: "localhost:8080", publicURL: url))
        #expect(SessionCookies.isSameOrigin("https://192.0.2.1:8443", host: "localhost:8443", publicURL: url))
        #expect(SessionCookies.isSameOrigin("https://school.example", host: "school.example", publicURL: "https://school.example/"))
        #expect(!SessionCookies.isSameOrigin("https://evil.example", host: "192.0.2.1:8443", publicURL: url))
        #expect(!SessionCookies.isSameOrigin("https://192.0.2.1:9999", host: "192.0.2.1:8443", publicURL: url))
        #expect(!SessionCookies.isSameOrigin("null", host: "192.0.2.1:8443", publicURL: url))
        #expect(!SessionCookies.isSameOrigin("", host: "192.0.2.1:8443", publicURL: url))
    }

    @Test func aChangeFromAnotherSiteOrWithoutATokenIsToldFromItsHeaders() {
        let url = "https://192.0.2.1:8443"
        let host = "192.0.2.1:8443"
        #expect(SessionCookies.comesFromThisServer(origin: url, fetchSite: "same-origin", host: host, publicURL: url))
        #expect(SessionCookies.comesFromThisServer(origin: nil, fetchSite: nil, host: host, publicURL: url))
        #expect(SessionCookies.comesFromThisServer(origin: nil, fetchSite: "None", host: host, publicURL: url))
        for site in ["cross-site", "same-site", "Cross-Site", ""] {
            #expect(!SessionCookies.comesFromThisServer(origin: url, fetchSite: site, host: host, publicURL: url), "\(site)")
        }
        #expect(!SessionCookies.comesFromThisServer(origin: "https://evil.example", fetchSite: "same-origin", host: host, publicURL: url))
        #expect(SessionCookies.hasCSRFToken(SessionCookies.newToken()))
        #expect(!SessionCookies.hasCSRFToken(nil) && !SessionCookies.hasCSRFToken("") && !SessionCookies.hasCSRFToken("wrong"))
        #expect(!SessionCookies.hasCSRFToken(String(repeating: "+", count: 43)))
    }
}
