import Testing
import WebSocketTransport

@Suite("Origin policy")
struct OriginPolicyTests {
    @Test func parsesOriginsTheWayBrowsersCompareThem() throws {
        let origin = try #require(OriginPolicy.Origin("HTTP://Class.Example"))
        #expect(origin == OriginPolicy.Origin("http://class.example:80"))
        #expect(OriginPolicy.Origin("https://class.example") == OriginPolicy.Origin("https://class.example:443/join?room=1"))
        #expect(OriginPolicy.Origin("https://class.example") != OriginPolicy.Origin("http://class.example"))
        #expect(OriginPolicy.Origin("http://[::1]:8080")?.host == "[::1]")
        #expect(OriginPolicy.Origin("http://user@192.168.1.20:8080")?.host == "192.168.1.20")
        for broken in ["null", "", "file:///tmp/x.html", "http://", "http://host:", "http://host:99999", "http://host:8a", "ws://host", "http://[::1"] {
            #expect(OriginPolicy.Origin(broken) == nil, "\(broken)")
        }
    }

    @Test func acceptsTheServersOwnAddressesOnly() {
        let policy = OriginPolicy(allowed: ["http://192.168.1.20:8080/", "https://quiz.school.example"], loopbackPort: 8080)
        #expect(policy.allows("http://192.168.1.20:8080"))
        #expect(policy.allows("https://quiz.school.example"))
        #expect(policy.allows("http://127.0.0.1:8080"))
        #expect(policy.allows("http://localhost:8080"))
        #expect(policy.allows("http://[::1]:8080"))
        #expect(policy.allows(nil), "not a browser")
        #expect(policy.allows(""), "not a browser")
        // A DNS-rebinding page sends Host: evil.example and Origin: http://evil.example; neither is ours.
        #expect(!policy.allows("http://evil.example"))
        #expect(!policy.allows("http://evil.example:8080"))
        #expect(!policy.allows("http://192.168.1.20:8081"), "another port on our address is another site")
        #expect(!policy.allows("http://127.0.0.1:3000"), "another program on this machine")
        #expect(!policy.allows("http://localhost.evil.example:8080"))
        #expect(!policy.allows("http://127.0.0.1.evil.example:8080"))
        #expect(!policy.allows("http://quiz.school.example"), "https only, as configured")
        #expect(!policy.allows("null"), "a sandboxed or file page")
    }

    @Test func aStarAllowsEveryOrigin() {
        #expect(OriginPolicy(allowed: ["*"]).allows("http://evil.example"))
        var policy = OriginPolicy(loopbackPort: 80)
        #expect(!policy.allows("http://teacher.local"))
        policy.allow(["http://teacher.local"])
        #expect(policy.allows("http://teacher.local"))
        #expect(policy.allows("http://localhost"), "loopback on port 80, written without it")
    }
}
