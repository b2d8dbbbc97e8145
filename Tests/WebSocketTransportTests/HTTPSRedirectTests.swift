import Testing
import WebSocketTransport

/// The redirect port's answer: the same host, path and query over HTTPS, and never a host the certificate
/// does not name or a `Host` that is more than a host.
@Suite("HTTPS redirect")
struct HTTPSRedirectTests {
    private let names: Set<String> = ["localhost", "127.0.0.1", "laptop.school.example", "[::1]"]

    private func location(_ host: String?, _ path: String = "/", _ query: [String] = [], port: Int = 8443) -> String? {
        HTTPSRedirect.location(host: host, path: path, query: query, httpsPort: port) { names.contains($0) }
    }

    @Test func theSameHostPathAndQueryOverHTTPS() {
        #expect(location("localhost:8080", "/", ["room=123456", "lang=en"]) == "https://localhost:8443/?room=123456&lang=en")
        #expect(location("Laptop.School.Example", "/teacher") == "https://laptop.school.example:8443/teacher")
        #expect(location("127.0.0.1", "/stories/edit", port: 443) == "https://127.0.0.1/stories/edit")
        #expect(location("[::1]:80", "/") == "https://[::1]:8443/")
    }

    @Test func whatLwsDecodedIsEncodedAgain() {
        #expect(location("localhost", "/a b/<script>", ["q=x y&z", "#"]) == "https://localhost:8443/a%20b/%3Cscript%3E?q=x%20y%26z&%23")
        #expect(location("localhost", "//evil.example/x") == "https://localhost:8443//evil.example/x", "a path never becomes a host")
        #expect(location("localhost", "evil") == "https://localhost:8443/")
    }

    @Test func aHostThatIsNotOnlyAServedHostIsRefused() {
        for host in [
            nil, "", "evil.example", "localhost.", "localhost/evil", "localhost@evil.example", "evil.example#localhost", "localhost:80:80",
            "localhost:", "localhost:99999", "localhost:8a", "local host", "[::1", "[::1]x", "[evil]", "-localhost", String(repeating: "a", count: 300),
            "localhost\r\nx: y",
        ] {
            #expect(location(host) == nil, "\(host ?? "nil")")
        }
    }

    @Test func hostNamesAreReadWithoutThePort() {
        #expect(HTTPSRedirect.hostName("LOCALHOST:8080") == "localhost")
        #expect(HTTPSRedirect.hostName("[fe80::1]:443") == "[fe80::1]")
        #expect(HTTPSRedirect.hostName("192.168.1.20") == "192.168.1.20")
        #expect(HTTPSRedirect.hostName("a_b.example") == nil)
    }
}
