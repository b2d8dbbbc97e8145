import Foundation
import Locking
import WebSocketTransport
import WebSocketTransportTesting
@testable import StoryCircleCore

/// Real WebSocket clients (libwebsockets client mode) for the transport tests: connections, messages and
/// closes are awaitable.
final class SocketClients: Sendable {
    let pool: WebSocketClientPool
    let log = MessageLog()
    private let port: Int
    private struct State {
        var connected: Set<UInt64> = []
        var closed: [UInt64: UInt16?] = [:]
        var waiters: [(UInt64, Bool, CheckedContinuation<UInt16?, Never>)] = []
        /// First messages to send the moment a connection opens, from the pool's own thread.
        var hellos: [UInt64: ClientMessage] = [:]
    }
    private let state = Locked(State())

    init(port: Int) throws {
        self.port = port
        let log = self.log
        let box = StateBox()
        pool = WebSocketClientPool { event in box.handle(event, log) }
        try pool.start()
        box.clients.withLock { $0 = self }
    }

    /// Connects and waits for the upgrade. `hello` goes out as soon as the connection opens, from the
    /// client's own thread: a test racing the server's hello timeout on the real clock must not depend on
    /// when the cooperative pool next runs it (seconds, when the whole suite starts at once).
    func connect(path: String = "/ws", saying hello: ClientMessage? = nil) async -> UInt64? {
        await connect(count: 1, path: path, saying: hello)[0]
    }

    /// Opens `count` connections at once, before waiting for any: whether the server sees them all while
    /// it still holds the earlier ones does not depend on the pool either. Each is nil if refused.
    func connect(count: Int, path: String = "/ws", saying hello: ClientMessage? = nil) async -> [UInt64?] {
        let ids = (0..<count).map { _ in pool.connect(.init(port: port, path: path)) }
        if let hello {
            let open = state.withLock { state in
                ids.filter { id in
                    if state.connected.contains(id) { return true }
                    state.hellos[id] = hello
                    return false
                }
            }
            for id in open { send(hello, from: id) }
        }
        var outcomes: [UInt64?] = []
        for id in ids { outcomes.append(await wait(id, forClose: false) == nil ? id : nil) }
        return outcomes
    }

    func send(_ message: ClientMessage, from connection: UInt64) {
        pool.send(Array(try! JSONEncoder().encode(message)), to: connection)
    }

    func sendRaw(_ text: String, from connection: UInt64) {
        pool.send(Array(text.utf8), to: connection)
    }

    /// Waits until the server closes `connection`; returns the close status it sent.
    func closeStatus(_ connection: UInt64) async -> UInt16? {
        await wait(connection, forClose: true)
    }

    fileprivate func handle(_ event: WebSocketClientPool.Event) {
        var hello: (UInt64, ClientMessage)?
        let ready: [(CheckedContinuation<UInt16?, Never>, UInt16?)] = state.withLock { state in
            switch event {
            case .connected(let id):
                state.connected.insert(id)
                hello = state.hellos.removeValue(forKey: id).map { (id, $0) }
            case .closed(let id, let status, _): state.closed[id] = .some(status)
            case .failed(let id, _): state.closed[id] = .some(nil)
            case .message: return []
            }
            var ready: [(CheckedContinuation<UInt16?, Never>, UInt16?)] = []
            state.waiters.removeAll { id, forClose, continuation in
                if let status = state.closed[id] {
                    ready.append((continuation, forClose ? status : 0))
                    return true
                }
                if !forClose, state.connected.contains(id) {
                    ready.append((continuation, nil))
                    return true
                }
                return false
            }
            return ready
        }
        if let (id, message) = hello { send(message, from: id) }
        ready.forEach { $0.0.resume(returning: $0.1) }
    }

    private func wait(_ id: UInt64, forClose: Bool) async -> UInt16? {
        await withCheckedContinuation { continuation in
            let now: UInt16?? = state.withLock { state in
                if let status = state.closed[id] { return .some(forClose ? status : 0) }
                if !forClose, state.connected.contains(id) { return .some(nil) }
                state.waiters.append((id, forClose, continuation))
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    func stop() { pool.stop() }
}

/// Lets the pool's event handler reach the `SocketClients` that owns the pool, which exists only after
/// the pool does.
private final class StateBox: Sendable {
    let clients = Locked<SocketClients?>(nil)

    func handle(_ event: WebSocketClientPool.Event, _ log: MessageLog) {
        if case .message(let id, let bytes) = event, let message = try? JSONDecoder().decode(ServerMessage.self, from: Data(bytes)) {
            log.record(message, to: [id])
        }
        clients.withLock { $0 }?.handle(event)
    }
}
