import Dispatch
import Foundation
import Glibc

/// A TCP client on plain POSIX sockets: it can send what a polite client library will not (unmasked frames,
/// broken close frames, unknown HTTP methods) and connect from a chosen loopback address (all of 127/8 is
/// this machine), so one test can be several "devices". Reads block with a timeout; `offPool` keeps them
/// off Swift's cooperative threads.
final class RawSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    /// Bytes read but not yet consumed by a `read…` that stopped early.
    private var pending: [UInt8] = []

    init(port: Int, from source: String = "127.0.0.1", timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, connected == 0 else {
            Glibc.close(fd)
            throw Failure(description: "connect from \(source) to port \(port): errno \(errno)")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Reads until `complete` says the bytes so far are enough (the rest stays for the next read), the
    /// peer closes, or the timeout passes.
    func read(until complete: ([UInt8]) -> Int?) -> (bytes: [UInt8], ended: Bool) {
        var buffer = pending
        pending = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let used = complete(buffer) {
                pending = Array(buffer[used...])
                return (Array(buffer[..<used]), false)
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (buffer, count == 0 || errno == ECONNRESET) }
            buffer += chunk[..<count]
        }
    }

    /// Everything until the peer closes (or the timeout); `ended` is whether it closed.
    func readToEnd() -> (bytes: [UInt8], ended: Bool) {
        read { _ in nil }
    }

    // MARK: HTTP

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
        var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
    }

    /// One response: the head, then `Content-Length` bytes of body unless `bodyless` (a HEAD's answer).
    func readResponse(bodyless: Bool = false) throws -> Response {
        let (bytes, _) = read { buffer in
            guard let end = Self.headEnd(buffer) else { return nil }
            let head = Self.parseHead(Array(buffer[..<end]))
            let length = bodyless ? 0 : Int(head?.headers["content-length"] ?? "0") ?? 0
            return buffer.count >= end + length ? end + length : nil
        }
        guard let end = Self.headEnd(bytes), let head = Self.parseHead(Array(bytes[..<end])) else {
            throw Failure(description: "no HTTP response in \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
        return Response(status: head.status, headers: head.headers, body: Array(bytes[end...]))
    }

    static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    static func parseHead(_ head: [UInt8]) -> (status: Int, headers: [String: String])? {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers)
    }

    // MARK: WebSocket

    /// Sends an upgrade request and reads the answer: 101 (the socket is a WebSocket now) or a refusal.
    func upgrade(port: Int, path: String = "/ws", host: String? = nil, origin: String? = nil, extraHeaders: [String] = []) throws -> Response {
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        for header in extraHeaders { request += header + "\r\n" }
        send(request + "\r\n")
        let response = try readResponse(bodyless: false)
        return response
    }

    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's status.
        var closeStatus: UInt16? {
            opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        }
    }

    /// A client frame; `masked: false` breaks RFC 6455, 5.1 on purpose.
    static func clientFrame(opcode: UInt8, _ payload: [UInt8], masked: Bool = true, final: Bool = true) -> [UInt8] {
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let mask: UInt8 = masked ? 0x80 : 0
        var frame: [UInt8] = [(final ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: frame.append(mask | UInt8(payload.count))
        case ..<65_536: frame += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [mask | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        if masked {
            frame += key
            frame += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        } else {
            frame += payload
        }
        return frame
    }

    /// Server frames until a close frame (included), the end of the connection, or the timeout.
    func readFrames() -> (frames: [Frame], ended: Bool) {
        var frames: [Frame] = []
        var sawClose = false
        let (_, ended) = read { buffer in
            var offset = 0
            frames = []
            sawClose = false
            while let (frame, length) = Self.parseFrame(buffer, at: offset) {
                frames.append(frame)
                offset += length
                if frame.opcode == 8 {
                    sawClose = true
                    return offset
                }
            }
            return nil
        }
        if !sawClose, ended {
            // The connection ended without a close frame: report what did arrive.
            return (frames, true)
        }
        return (frames, ended)
    }

    /// The next server frame, or nil if the connection ended (or the timeout passed) first.
    func nextFrame() -> Frame? {
        var frame: Frame?
        _ = read { buffer in
            guard let (parsed, length) = Self.parseFrame(buffer, at: 0) else { return nil }
            frame = parsed
            return length
        }
        return frame
    }

    static func parseFrame(_ buffer: [UInt8], at offset: Int) -> (Frame, Int)? {
        guard buffer.count - offset >= 2 else { return nil }
        var length = Int(buffer[offset + 1] & 0x7F)
        var header = 2
        if length == 126 {
            guard buffer.count - offset >= 4 else { return nil }
            length = Int(buffer[offset + 2]) << 8 | Int(buffer[offset + 3])
            header = 4
        } else if length == 127 {
            guard buffer.count - offset >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | Int(buffer[offset + 2 + $1]) }
            header = 10
        }
        guard buffer.count - offset >= header + length else { return nil }
        let payload = Array(buffer[(offset + header)..<(offset + header + length)])
        return (Frame(opcode: buffer[offset] & 0x0F, payload: payload), header + length)
    }
}

/// A socket is used by one test at a time, handed between the test and `offPool`'s thread, never shared.
extension RawSocket: @unchecked Sendable {}

/// Runs blocking socket work on a Dispatch thread, so a test never holds one of Swift's few cooperative
/// threads while it waits for the network. For waits of seconds use `onOwnThread`.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// Runs blocking work that waits for seconds (keepalive timing) on a thread of its own: Dispatch's global
/// queue has as few threads as the machine has cores, and holding one for seconds delays every other test's
/// work behind it (long enough for another test's 0.5 s hello timeout to fire first).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
