import Foundation
import Synchronization
import Locking
import WebSocketTransport

/// Monotonic nanoseconds, for latencies measured inside this process.
@inline(__always) func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Many WebSocket clients on one libwebsockets thread. Every received message goes to `handler`, on that
/// thread: handlers must be quick (they record a time and count).
final class LoadClients: Sendable {
    let pool: WebSocketClientPool
    /// The handler sits in a class because a closure stored directly in a lock (`Mutex`, `Locked`) and read back with
    /// `withLock { $0 }` is written back wrapped in one more reabstraction thunk on every read (Swift 6.3):
    /// calls grow slower without bound and finally overflow the stack. Seen here at 10,000 connections.
    private let handler = Locked<MessageSink?>(nil)
    private let connected = Locked<(open: Set<UInt64>, failed: [UInt64: String])>(([], [:]))
    let port: Int

    init(port: Int) throws {
        self.port = port
        let box = HandlerBox()
        pool = WebSocketClientPool { event in box.deliver(event) }
        try pool.start()
        box.clients.withLock { $0 = self }
    }

    func onMessage(_ body: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        let sink = MessageSink(body)
        handler.withLock { $0 = sink }
    }

    fileprivate func deliver(_ event: WebSocketClientPool.Event) {
        switch event {
        case .message(let id, let bytes): handler.withLock { $0 }?.body(id, bytes)
        case .connected(let id): connected.withLock { _ = $0.open.insert(id) }
        case .failed(let id, let reason): connected.withLock { $0.failed[id] = reason }
        case .closed: break  // no scenario needs to know; a connection that never opened is `.failed`
        }
    }

    /// Opens `count` connections, `batch` at a time (the listen backlog is finite), and waits for them.
    func connect(_ count: Int, batch: Int = 400) async throws -> [UInt64] {
        var ids: [UInt64] = []
        ids.reserveCapacity(count)
        while ids.count < count {
            let wave = (0..<min(batch, count - ids.count)).map { _ in pool.connect(.init(port: port)) }
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
        pool.send(Array(text.utf8), to: connection)
    }

    func stop() { pool.stop() }
}

final class MessageSink: Sendable {
    let body: @Sendable (UInt64, [UInt8]) -> Void

    init(_ body: @escaping @Sendable (UInt64, [UInt8]) -> Void) {
        self.body = body
    }
}

/// Lets the pool's callback reach the `LoadClients` that owns the pool (created after it).
private final class HandlerBox: Sendable {
    let clients = Locked<LoadClients?>(nil)

    func deliver(_ event: WebSocketClientPool.Event) {
        clients.withLock { $0 }?.deliver(event)
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
