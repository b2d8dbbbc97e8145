import Glibc
import OpenIDConnect
import Testing

/// The transport over real sockets on this machine: a provider that is down, or that takes the
/// connection and never answers, is given up on and named unavailable.
@Suite struct TransportTests {
    /// A TCP socket listening on 127.0.0.1 that never accepts: the kernel completes connections to it,
    /// and nothing is ever written back.
    final class SilentListener {
        let descriptor: Int32
        let port: Int

        init() {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    precondition(bind(descriptor, address, length) == 0 && listen(descriptor, 8) == 0)
                    precondition(getsockname(descriptor, address, &length) == 0)
                }
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test func aProviderThatNeverAnswersIsGivenUpOnAtTheDeadline() async {
        let listener = SilentListener()
        let transport = HTTPSOpenIDTransport(stepTimeout: 30, deadline: .milliseconds(300))
        let request = OpenIDRequest(url: "http://127.0.0.1:\(listener.port)/.well-known/openid-configuration", form: nil, headers: [])
        await #expect(throws: OpenIDError.providerUnavailable("no answer in time")) { try await transport.send(request) }
        withExtendedLifetime(listener) {}
    }

    @Test func aProviderThatIsDownIsUnavailable() async {
        let port = SilentListener().port  // closed again at once: nothing listens there now
        let transport = HTTPSOpenIDTransport(stepTimeout: 5, deadline: .seconds(10))
        let request = OpenIDRequest(url: "http://127.0.0.1:\(port)/token", form: [("code", "c")], headers: [])
        await #expect(throws: OpenIDError.providerUnavailable("connection refused")) { try await transport.send(request) }
    }

    @Test func onlyHTTPSOrThisMachineIsAsked() async {
        let transport = HTTPSOpenIDTransport()
        for url in ["http://id.school.example/token", "ftp://127.0.0.1/", "https://user:pw@id.school.example/"] {
            await #expect(throws: OpenIDError.providerNonsense("an endpoint is not an https URL")) {
                try await transport.send(OpenIDRequest(url: url, form: nil, headers: []))
            }
        }
    }
}
