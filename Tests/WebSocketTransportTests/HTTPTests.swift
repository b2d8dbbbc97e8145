import Foundation
import Testing
import TransportCore
import WebSocketTransport

@Suite("HTTP over real sockets", .serialized)
struct HTTPTests {
    @Test func headSendsNoBodySoTheNextResponseOnTheConnectionParses() async throws {
        // HEAD on a dynamic route answers without a body: on a keep-alive connection, a body would be read as
        // the start of the next response, which then no longer parses.
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        try await offPool {
            let socket = try RawSocket(port: port)
            for path in ["/healthz", "/api/rooms/123456", "/"] {
                socket.send("HEAD \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let head = try socket.readResponse(bodyless: true)
                #expect(head.status == 200, "\(path)")
                #expect(Int(head.headers["content-length"] ?? "") ?? 0 > 0, "HEAD says how long the GET would be")
                // A body after the head would come before the next status line, and this read would fail.
                socket.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let get = try socket.readResponse()
                #expect(get.status == 200, "\(path)")
                #expect(get.body.count == Int(get.headers["content-length"] ?? ""))
                if path != "/" { #expect(get.json?["method"] as? String == "GET") }
            }
        }
    }

    @Test func unknownMethodsGetAJSON405WithAllow() async throws {
        // Methods no route takes (FOO, TRACE, …) get a JSON 405 with the route's Allow, not libwebsockets'
        // own HTML 403.
        let harness = try TransportHarness()
        defer { harness.stop() }
        let port = harness.port
        try await offPool {
            for (method, path, allowed) in [("FOO", "/", "GET, HEAD"), ("TRACE", "/healthz", "GET, HEAD, POST"), ("CONNECT", "/api/rooms", "GET, HEAD, POST"), ("BREW", "/dashboard", "GET, HEAD")] {
                let socket = try RawSocket(port: port)
                socket.send("\(method) \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try socket.readResponse()
                #expect(response.status == 405, "\(method) \(path)")
                #expect(response.headers["allow"] == allowed, "\(method) \(path)")
                #expect(response.headers["content-type"] == "application/json")
                #expect(response.errorCode == "method_not_allowed")
                #expect(response.headers["x-content-type-options"] == "nosniff", "the usual headers")
                #expect(socket.readToEnd().ended, "and the connection closes")
            }
            // Known methods on a page get the same answer; on a dynamic route they reach the application.
            let socket = try RawSocket(port: port)
            socket.send("DELETE /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try socket.readResponse()
            #expect(response.status == 405 && response.headers["allow"] == "GET, HEAD" && response.errorCode == "method_not_allowed")
            socket.send("DELETE /api/rooms HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try socket.readResponse().json?["method"] as? String == "DELETE", "the keep-alive connection goes on")
        }
        #expect(harness.server.metrics.snapshot.httpRequests >= 5)
    }

    @Test func headersBeyondTheBufferEndTheConnectionAndTheServerGoesOn() async throws {
        // libwebsockets 4.1 closes such a request without an answer (its parser fails before any callback;
        // see docs/protocol.md): what can be checked is that nothing hangs and that the limit is the one set.
        let harness = try TransportHarness { $0.maxHeaderBytes = 8_192 }
        defer { harness.stop() }
        let port = harness.port
        try await offPool {
            let fits = try RawSocket(port: port)
            fits.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 6_000))\r\n\r\n")
            #expect(try fits.readResponse().status == 200)
            let tooBig = try RawSocket(port: port)
            tooBig.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 9_000))\r\n\r\n")
            let (bytes, ended) = tooBig.readToEnd()
            #expect(ended, "closed, not left hanging")
            #expect(bytes.isEmpty, "libwebsockets 4.1 sends no status for it")
            let after = try RawSocket(port: port)
            after.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try after.readResponse().status == 200)
        }
    }

    @Test func theApplicationAnswersFromTheHeadAndTheBodyIsNeverRead() async throws {
        // The application's word from the head (`admitHead`): an answer goes out before any body is sent, the
        // connection then closes, and nothing of the body counts as read; a request it lets through may send
        // the limit it gave, and no more.
        let harness = try TransportHarness { configuration in
            configuration.admitHead = { request in
                request.headers["authorization"] == "Bearer yes"
                    ? .read(bodyLimit: 64) : .answer(HTTPResponse(status: 401, contentType: "application/json", body: Array(#"{"error":{"code":"unauthorized"}}"#.utf8)))
            }
        }
        defer { harness.stop() }
        let port = harness.port
        try await offPool {
            let refused = try RawSocket(port: port)
            refused.send("POST /api/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 8388608\r\n\r\n")
            let answer = try refused.readResponse()
            #expect(answer.status == 401 && answer.headers["connection"] == "close")
            #expect(refused.readToEnd().ended, "closed: the body is not read to find the next request")
            let proved = try RawSocket(port: port)
            proved.send("POST /api/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer yes\r\nContent-Length: 10\r\n\r\n0123456789")
            #expect(try proved.readResponse().json?["path"] as? String == "/api/upload")
            let tooLarge = try RawSocket(port: port)
            tooLarge.send("POST /api/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer yes\r\nContent-Length: 65\r\n\r\n")
            #expect(try tooLarge.readResponse().status == 413)
        }
        let metrics = harness.server.metrics.snapshot
        #expect(metrics.httpBodyBytes == 10 && metrics.httpAnsweredAtHead == 2)
    }

    @Test func anAddressHoldsAtMostItsHTTPConnectionsAndWebSocketsCountApart() async throws {
        let harness = try TransportHarness { $0.maxHTTPConnectionsPerAddress = 2 }
        defer { harness.stop() }
        let port = harness.port
        try await offPool {
            var held: [RawSocket] = []
            for _ in 0..<2 {
                let socket = try RawSocket(port: port)
                socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try socket.readResponse().status == 200)
                held.append(socket)
            }
            let third = try RawSocket(port: port)
            third.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try third.readResponse().status == 429, "a page counts as much as an API call")
            let elsewhere = try RawSocket(port: port, from: "127.0.0.2")
            elsewhere.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try elsewhere.readResponse().status == 200)
            #expect(try RawSocket(port: port).upgrade(port: port).status == 101)
            // The kept-alive connections go on answering: each counted once.
            held[0].send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try held[0].readResponse().status == 200)
        }
        #expect(harness.server.metrics.snapshot.httpRejectedPerAddress == 1)
    }
}
