/// An HTTP/1.1 response read from bytes as they arrive: the status line, the headers, then a body framed by
/// Content-Length, by chunks, or by the end of the connection. Every part is bounded, so a server cannot
/// make the CLI hold more than `limits` allow. No sockets: the connection feeds it.
public struct HTTPResponseParser: Sendable {
    public struct Limits: Sendable {
        public var headerBytes: Int
        public var bodyBytes: Int
        public init(headerBytes: Int = 64 * 1024, bodyBytes: Int = 64 * 1024 * 1024) {
            self.headerBytes = headerBytes
            self.bodyBytes = bodyBytes
        }
    }

    private enum State: Sendable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        case trailers
        case untilClose
        case done
    }

    private let limits: Limits
    private var state = State.head
    private var buffer: [UInt8] = []
    private var status = 0
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The response once it is complete, else nil.
    public var response: HTTPResponse? {
        if case .done = state { return HTTPResponse(status: status, headers: headers, body: body) }
        return nil
    }

    /// Takes the next bytes; returns true once the response is complete (bytes after it are ignored).
    @discardableResult
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(HTTPClientError) -> Bool {
        if case .done = state { return true }
        buffer.append(contentsOf: bytes)
        try advance()
        if case .done = state { return true }
        return false
    }

    /// The connection ended: the response, if what came was whole (a body without framing ends here).
    public mutating func finish() throws(HTTPClientError) -> HTTPResponse {
        if case .untilClose = state {
            body.append(contentsOf: buffer)
            buffer.removeAll()
            state = .done
        }
        guard let response else {
            if case .head = state, buffer.isEmpty { throw .malformed("the server closed the connection without answering") }
            throw .malformed("the server closed the connection in the middle of its answer")
        }
        return response
    }

    private mutating func advance() throws(HTTPClientError) {
        while true {
            switch state {
            case .head:
                guard let end = Self.find([13, 10, 13, 10], in: buffer) else {
                    if buffer.count > limits.headerBytes { throw .tooLarge("the server's headers are longer than \(limits.headerBytes / 1024) KiB") }
                    return
                }
                guard end + 4 <= limits.headerBytes else { throw .tooLarge("the server's headers are longer than \(limits.headerBytes / 1024) KiB") }
                let head = Array(buffer[..<end])
                buffer.removeFirst(end + 4)
                try readHead(head)
            case .fixed(let remaining):
                let count = min(remaining, buffer.count)
                body.append(contentsOf: buffer[..<count])
                buffer.removeFirst(count)
                guard count == remaining else {
                    state = .fixed(remaining: remaining - count)
                    return
                }
                state = .done
            case .chunkSize:
                guard let line = try takeLine(limit: 1024) else { return }
                let digits = line.prefix { $0 != ";" }.trimmed(of: " \t")
                guard !digits.isEmpty, digits.count <= 16, let size = Int(digits, radix: 16), size >= 0 else {
                    throw .malformed("the server sent a malformed chunk size")
                }
                guard size <= limits.bodyBytes - body.count else { throw Self.bodyTooLarge(limits) }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let count = min(remaining, buffer.count)
                body.append(contentsOf: buffer[..<count])
                buffer.removeFirst(count)
                guard count == remaining else {
                    state = .chunkData(remaining: remaining - count)
                    return
                }
                state = .chunkEnd
            case .chunkEnd:
                guard buffer.count >= 2 else { return }
                guard buffer[0] == 13, buffer[1] == 10 else { throw .malformed("the server sent a chunk without its line end") }
                buffer.removeFirst(2)
                state = .chunkSize
            case .trailers:
                guard let line = try takeLine(limit: limits.headerBytes) else { return }
                if line.isEmpty { state = .done }
            case .untilClose:
                guard body.count + buffer.count <= limits.bodyBytes else { throw Self.bodyTooLarge(limits) }
                return
            case .done:
                return
            }
        }
    }

    private mutating func readHead(_ head: [UInt8]) throws(HTTPClientError) {
        guard let text = String(validating: head, as: UTF8.self) else { throw .malformed("the server's headers are not text") }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1" || statusLine[0] == "HTTP/1.0",
              statusLine[1].count == 3, let code = Int(statusLine[1]), (100...599).contains(code) else {
            throw .malformed("the server did not answer in HTTP/1.1")
        }
        var parsed: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                throw .malformed("the server sent a malformed header")
            }
            parsed.append((String(line[..<colon]).lowercased(), String(line[line.index(after: colon)...]).trimmed(of: " \t")))
        }
        // An interim answer (100 Continue): the real one follows.
        if (100..<200).contains(code) { return }
        status = code
        headers = parsed
        let encodings = parsed.filter { $0.name == "transfer-encoding" }.map { $0.value.lowercased() }
        let lengths = Set(parsed.filter { $0.name == "content-length" }.map(\.value))
        if code == 204 || code == 304 {
            state = .done
        } else if !encodings.isEmpty {
            guard encodings.joined(separator: ",").split(separator: ",").last?.trimmed(of: " \t") == "chunked" else {
                throw .malformed("the server used a transfer encoding the CLI does not read")
            }
            state = .chunkSize
        } else if !lengths.isEmpty {
            guard lengths.count == 1, let text = lengths.first, !text.isEmpty, text.count <= 18,
                  text.allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(text) else {
                throw .malformed("the server sent a malformed Content-Length")
            }
            guard length <= limits.bodyBytes else { throw Self.bodyTooLarge(limits) }
            state = .fixed(remaining: length)
        } else {
            state = .untilClose
        }
    }

    /// One CRLF-ended line as text, or nil until it has all arrived.
    private mutating func takeLine(limit: Int) throws(HTTPClientError) -> String? {
        guard let end = Self.find([13, 10], in: buffer) else {
            if buffer.count > limit { throw .tooLarge("the server sent a line longer than \(limit) bytes") }
            return nil
        }
        guard end <= limit, let line = String(validating: buffer[..<end], as: UTF8.self) else {
            throw .malformed("the server sent a malformed line")
        }
        buffer.removeFirst(end + 2)
        return line
    }

    private static func bodyTooLarge(_ limits: Limits) -> HTTPClientError {
        .tooLarge("the server's answer is larger than \(limits.bodyBytes / (1024 * 1024)) MiB")
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}

/// A whole response: its status, its headers (names in lower case, in order) and its body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name == name }?.value
    }
}

extension StringProtocol {
    func trimmed(of characters: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice.removeFirst() }
        while let last = slice.last, characters.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
