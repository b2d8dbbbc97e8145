import Foundation
import Testing
@testable import TLSClient

/// The response parser fed bytes as a socket would hand them, whole or one at a time; no sockets.
struct HTTPResponseParserTests {
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Feeds `text` in pieces of `step` bytes; returns the response once complete, else what `finish` makes.
    private static func parse(_ text: String, step: Int = .max, limits: HTTPResponseParser.Limits = .init(), close: Bool = false) throws(HTTPClientError) -> HTTPResponse {
        var parser = HTTPResponseParser(limits: limits)
        let all = bytes(text)
        var offset = 0
        while offset < all.count {
            let end = min(all.count, offset + step)
            if try parser.feed(all[offset..<end]), !close { return parser.response! }
            offset = end
        }
        return try parser.finish()
    }

    @Test(arguments: [1, 3, 1000])
    func contentLengthBodyEndsAtItsLength(step: Int) throws {
        let response = try Self.parse("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}TRAILING", step: step)
        #expect(response.status == 201)
        #expect(response.header("content-type") == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"a\":\"bcd\"}")
    }

    @Test(arguments: [1, 2, 1000])
    func chunkedBodyIsJoinedAndTrailersSkipped(step: Int) throws {
        let response = try Self.parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n, children\r\n0\r\nX-Trailer: t\r\n\r\n", step: step)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, children")
    }

    @Test func bodyWithoutFramingEndsWithTheConnection() throws {
        var parser = HTTPResponseParser()
        #expect(try parser.feed(Self.bytes("HTTP/1.0 200 OK\r\n\r\nsome ")) == false)
        #expect(try parser.feed(Self.bytes("text")) == false)
        let response = try parser.finish()
        #expect(String(decoding: response.body, as: UTF8.self) == "some text")
    }

    @Test func noContentHasNoBodyAndInterimAnswersAreSkipped() throws {
        #expect(try Self.parse("HTTP/1.1 204 No Content\r\n\r\n").body.isEmpty)
        let response = try Self.parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno")
        #expect(response.status == 404 && response.body == Self.bytes("no"))
    }

    @Test func aTruncatedAnswerIsAnError() {
        #expect(throws: HTTPClientError.self) { try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", close: true) }
        #expect(throws: HTTPClientError.self) { try Self.parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", close: true) }
        #expect(throws: HTTPClientError.malformed("the server closed the connection without answering")) { try Self.parse("", close: true) }
    }

    @Test func oversizedHeadersAndBodiesAreRefusedBeforeTheyArrive() {
        let limits = HTTPResponseParser.Limits(headerBytes: 64, bodyBytes: 16)
        #expect(throws: HTTPClientError.tooLarge("the server's headers are longer than 0 KiB")) {
            try Self.parse("HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 100), limits: limits)
        }
        for text in ["HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n",
                     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n1\r\n",
                     "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "z", count: 17)] {
            #expect(throws: HTTPClientError.tooLarge("the server's answer is larger than 0 MiB"), "\(text)") {
                try Self.parse(text, limits: limits)
            }
        }
    }

    @Test(arguments: [
        "HTTP/2 200\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "SMTP ready\r\n\r\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX0\r\n\r\n",
    ])
    func malformedAnswersAreRefused(text: String) {
        #expect(throws: HTTPClientError.self) { try Self.parse(text, close: true) }
    }

    @Test func requestsCarryLengthAndCloseAndRefuseInjectedLines() throws {
        let target = try HTTPClient.Target(URL(string: "https://[::1]:8443/api/rooms?x=1")!)
        #expect(target.secure && target.host == "::1" && target.port == 8443 && target.hostHeader == "[::1]:8443")
        let request = String(decoding: try HTTPClient.request("POST", target: target, headers: [("Content-Type", "application/json")], body: Data("{}".utf8)), as: UTF8.self)
        #expect(request == "POST /api/rooms?x=1 HTTP/1.1\r\nHost: [::1]:8443\r\nUser-Agent: storycircle\r\nAccept-Encoding: identity\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(throws: HTTPClientError.self) { try HTTPClient.request("GET", target: target, headers: [("Authorization", "Bearer x\r\nX-Evil: 1")], body: nil) }
        #expect(throws: HTTPClientError.self) { try HTTPClient.Target(URL(string: "ftp://example.com/")!) }
        #expect(try HTTPClient.Target(URL(string: "http://localhost")!).hostHeader == "localhost")
    }
}
