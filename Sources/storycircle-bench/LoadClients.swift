import Foundation
import Synchronization
import Locking
import WebSocketTransport
import WebSocketTransportTesting

/// Monotonic nanoseconds, for latencies measured inside this process.
@inline(__always) func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Many WebSocket clients, spread over several libwebsockets client threads. Every received message goes
/// to `handler`, on the thread of its connection: handlers must be quick (they record a time and count).
///
/// Why several threads (all on the generator's core): chosen when libwebsockets' default loop called poll()
/// on every socket of its context at each wake-up; 32 contexts of about 300 connections each cut that
/// scanning 32-fold. The pools have since moved to the same libev (epoll) loop as the server, where one
/// context would do; the 32 stay so that figures stay comparable with every run recorded since
/// (`STORYCIRCLE_BENCH_CLIENT_THREADS` changes it: 8 and 64 gave the same quiz latencies within noise).
final class LoadClients: Sendable {
    let pools: [WebSocketClientPool]
    /// The handler sits in a class because a closure stored directly in a lock (`Mutex`, `Locked`) and read back with
    /// `withLock { $0 }` is written back wrapped in one more reabstraction thunk on every read (Swift 6.3):
    /// calls grow slower without bound and finally overflow the stack. Seen here at 10,000 connections.
    private let handler = Locked<MessageSink?>(nil)
    private let connectedHandler = Locked<ConnectedSink?>(nil)
    private let connected = Locked<(open: Set<UInt64>, failed: [UInt64: String])>(([], [:]))
    private let nextPool = Atomic<Int>(0)
    /// The server on this machine.
    static let loopback = "127.0.0.1"
    /// The server's IPv4 address: `loopback`, or another machine's (`--host`).
    let host: String
    let port: Int
    /// The local addresses connections are bound to in turn (STORYCIRCLE_BENCH_SOURCE_ADDRESSES, e.g.
    /// "127.0.0.2 127.0.0.3"); empty: the kernel's choice.
    let sourceAddresses: [String]

    /// A connection's id here: its pool in the top 16 bits, the pool's own id below.
    private static func id(pool: Int, local: UInt64) -> UInt64 { UInt64(pool) << 48 | local }

    init(host: String = LoadClients.loopback, port: Int, threads: Int = LoadClients.defaultThreads, sourceAddresses: [String] = LoadClients.defaultSourceAddresses) throws {
        self.host = host
        self.port = port
        self.sourceAddresses = sourceAddresses
        var pools: [WebSocketClientPool] = []
        var boxes: [HandlerBox] = []
        for index in 0..<max(1, threads) {
            let box = HandlerBox()
            pools.append(WebSocketClientPool(certificateAuthority: ServerTLS.certificateAuthority) { event in box.deliver(event, pool: index) })
            boxes.append(box)
        }
        self.pools = pools
        for (pool, box) in zip(pools, boxes) {
            box.clients.withLock { $0 = self }
            try pool.start()
        }
    }

    /// STORYCIRCLE_BENCH_CLIENT_THREADS, or 32.
    static var defaultThreads: Int {
        ProcessInfo.processInfo.environment["STORYCIRCLE_BENCH_CLIENT_THREADS"].flatMap(Int.init) ?? 32
    }

    /// STORYCIRCLE_BENCH_SOURCE_ADDRESSES (separated by spaces or commas), or none.
    static var defaultSourceAddresses: [String] {
        (ProcessInfo.processInfo.environment["STORYCIRCLE_BENCH_SOURCE_ADDRESSES"] ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
    }

    func onMessage(_ body: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        let sink = MessageSink(body)
        handler.withLock { $0 = sink }
    }

    /// Called on the client thread as each connection opens (before `connect` notices it).
    func onConnected(_ body: @escaping @Sendable (UInt64) -> Void) {
        let sink = ConnectedSink(body)
        connectedHandler.withLock { $0 = sink }
    }

    /// Opens one connection without waiting for it (the join storm times each one itself).
    func open() -> UInt64 {
        let n = nextPool.add(1, ordering: .relaxed).oldValue
        let pool = n % pools.count
        let source = sourceAddresses.isEmpty ? nil : sourceAddresses[(n / pools.count) % sourceAddresses.count]
        return Self.id(pool: pool, local: pools[pool].connect(.init(host: host, port: port, sourceAddress: source, secure: ServerTLS.certificateAuthority != nil)))
    }

    /// Connections that could not open, with why.
    var failures: [UInt64: String] { connected.withLock { $0.failed } }

    fileprivate func deliver(_ event: WebSocketClientPool.Event, pool: Int) {
        switch event {
        case .message(let local, let bytes): handler.withLock { $0 }?.body(Self.id(pool: pool, local: local), bytes)
        case .connected(let local):
            let id = Self.id(pool: pool, local: local)
            connected.withLock { _ = $0.open.insert(id) }
            connectedHandler.withLock { $0 }?.body(id)
        case .failed(let local, let reason): connected.withLock { $0.failed[Self.id(pool: pool, local: local)] = reason }
        case .closed: break  // no scenario needs to know; a connection that never opened is `.failed`
        }
    }

    /// Opens `count` connections, `batch` at a time (the listen backlog is finite), and waits for them.
    func connect(_ count: Int, batch: Int = 400) async throws -> [UInt64] {
        var ids: [UInt64] = []
        ids.reserveCapacity(count)
        while ids.count < count {
            let wave = (0..<min(batch, count - ids.count)).map { _ in open() }
            ids += wave
            let deadline = Date().addingTimeInterval(30)
            while true {
                let (open, failed) = connected.withLock { state in (wave.filter { state.open.contains($0) }.count, wave.compactMap { state.failed[$0] }) }
                if let reason = failed.first { throw BenchError("a connection failed: \(reason)") }
                if open == wave.count { break }
                if Date() > deadline { throw BenchError("only \(open) of \(wave.count) connections opened in 30 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        return ids
    }

    func send(_ text: String, to connection: UInt64) {
        pools[Int(connection >> 48)].send(Array(text.utf8), to: connection & 0xFFFF_FFFF_FFFF)
    }

    func stop() { pools.forEach { $0.stop() } }
}

final class MessageSink: Sendable {
    let body: @Sendable (UInt64, [UInt8]) -> Void

    init(_ body: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        self.body = body
    }
}

final class ConnectedSink: Sendable {
    let body: @Sendable (UInt64) -> Void

    init(_ body: @escaping @Sendable (UInt64) -> Void) {
        self.body = body
    }
}

/// Lets the pool's callback reach the `LoadClients` that owns the pool (created after it).
private final class HandlerBox: Sendable {
    let clients = Locked<LoadClients?>(nil)

    func deliver(_ event: WebSocketClientPool.Event, pool: Int) {
        clients.withLock { $0 }?.deliver(event, pool: pool)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Counts down to zero; `wait` returns true when it got there in time.
final class Latch: Sendable {
    private let remaining: Atomic<Int>

    init(_ count: Int) { remaining = Atomic(count) }

    func countDown(_ by: Int = 1) { remaining.subtract(by, ordering: .releasing) }

    var count: Int { remaining.load(ordering: .acquiring) }

    func wait(timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while remaining.load(ordering: .acquiring) > 0 {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .microseconds(500))
        }
        return true
    }
}

/// Whether `bytes` contains `needle` (the generator does not parse JSON on its hot path).
@inline(__always) func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    guard bytes.count >= needle.count, let first = needle.first else { return false }
    var i = 0
    let last = bytes.count - needle.count
    while i <= last {
        if bytes[i] == first {
            var j = 1
            while j < needle.count, bytes[i + j] == needle[j] { j += 1 }
            if j == needle.count { return true }
        }
        i += 1
    }
    return false
}

/// A server message's `type` (the generator does not parse JSON on its hot path). The server's encoder
/// writes keys in no fixed order, so the field is searched for; no payload nests a `type` key.
func messageType(_ bytes: [UInt8]) -> String? {
    let key = messageTypeKey
    guard bytes.count > key.count else { return nil }
    var i = 0
    let last = bytes.count - key.count
    while i <= last {
        if bytes[i] == key[0] {
            var j = 1
            while j < key.count, bytes[i + j] == key[j] { j += 1 }
            if j == key.count {
                var end = i + key.count
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
                return String(decoding: bytes[(i + key.count)..<end], as: UTF8.self)
            }
        }
        i += 1
    }
    return nil
}

private let messageTypeKey = Array(#""type":""#.utf8)

/// A JSON string field's value, found without a parser (`"key":"value"`).
func stringField(_ bytes: [UInt8], _ key: String) -> String? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let range = text.range(of: "\"\(key)\":\"") else { return nil }
    let rest = text[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
}

func numberField(_ bytes: [UInt8], _ key: String) -> Double? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let range = text.range(of: "\"\(key)\":") else { return nil }
    let rest = text[range.upperBound...].prefix { "0123456789.-".contains($0) }
    return Double(rest)
}
