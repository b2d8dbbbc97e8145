import Foundation
import Locking
import TransportCore
import WebSocketTransport

/// A bare `WebSocketServer` on a free loopback port, with a recorder of what it reports and an application
/// that answers every HTTP request with `{"method":…,"path":…}`.
final class TransportHarness: Sendable {
    let server: WebSocketServer
    let port: Int
    let events: EventRecorder

    init(_ configure: (inout WebSocketServerConfiguration) -> Void = { _ in }) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("transport-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "<!doctype html><title>page</title>".write(to: root.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        var configuration = WebSocketServerConfiguration()
        configuration.port = 0
        configuration.staticRoot = root.path
        configuration.dynamicPrefixes = ["/api", "/healthz"]
        // Pings only after 10 minutes unless a test asks sooner: on a loaded machine a test's socket can sit
        // idle past the production 20 s, and a reader expecting the application's frames would be handed a
        // ping. Not off: the keepalive sweep is the loop's once-a-second wake-up, and with it gone some
        // connections' hello timers fired late (ConnectionLimitTests).
        configuration.pingAfterIdleSeconds = 600
        configuration.hangUpAfterIdleSeconds = 1_800
        configure(&configuration)
        let events = EventRecorder()
        let box = Locked<WebSocketServer?>(nil)
        let server = WebSocketServer(configuration: configuration, refusals: PlainRefusals()) { event in
            events.record(event)
            if case .request(let request) = event, let server = box.withLock({ $0 }) {
                let body = #"{"method":"\#(request.method)","path":"\#(request.path)"}"#
                server.respond(to: request.id, with: HTTPResponse(status: 200, contentType: "application/json", body: Array(body.utf8)))
            }
        }
        box.withLock { $0 = server }
        self.server = server
        self.events = events
        port = try server.start()
    }

    func stop() { server.stop() }
}

/// Transport events as they come, awaitable with a timeout.
final class EventRecorder: Sendable {
    private struct State {
        var events: [TransportEvent] = []
        var waiters: [(id: UInt64, condition: @Sendable ([TransportEvent]) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())

    var all: [TransportEvent] { state.withLock { $0.events } }

    var messages: [String] { Self.messages(in: all) }

    static func messages(in events: [TransportEvent]) -> [String] {
        events.compactMap { if case .message(_, let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }
    }

    func record(_ event: TransportEvent) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.events.append(event)
            let events = state.events
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(events) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Waits until `condition` holds for the events so far; false if it still does not after `timeout`.
    /// `condition` runs under the recorder's lock: it must look only at the events it is given. The timeout
    /// only ends a wait that would never end (every caller expects the condition to come): generous, so a
    /// loaded machine (the suite in parallel, or under ThreadSanitizer, on two cores) is never taken for one.
    func wait(timeout: Double = 30, until condition: @escaping @Sendable ([TransportEvent]) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let id: UInt64? = state.withLock { state in
                if condition(state.events) { return nil }
                state.nextWaiter += 1
                state.waiters.append((state.nextWaiter, condition, continuation))
                return state.nextWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: false)
            }
        }
    }
}

/// Refusals in the protocol's shape, without the application's table (that one is tested with the server).
struct PlainRefusals: RefusalEncoder {
    static func code(_ refusal: TransportRefusal) -> (status: HTTPStatus, code: String) {
        switch refusal {
        case .messageTooBig: (413, "message_too_big")
        case .binaryNotSupported: (400, "binary_not_supported")
        case .tooManyMessages: (429, "too_many_messages")
        case .helloTimeout: (400, "hello_timeout")
        case .wrongWebSocketPath: (404, "not_found")
        case .originNotAllowed: (403, "origin_not_allowed")
        case .serverFull: (503, "server_full")
        case .tooManyConnectionsFromAddress: (429, "too_many_connections")
        case .payloadTooLarge: (413, "payload_too_large")
        case .methodNotAllowed: (405, "method_not_allowed")
        }
    }

    func webSocketRefusal(_ refusal: TransportRefusal) -> (close: WebSocketClose, frame: [UInt8]) {
        let code = Self.code(refusal).code
        let status: UInt16 = switch refusal {
        case .messageTooBig: 1009
        case .binaryNotSupported: 1003
        default: 1008
        }
        return (WebSocketClose(status: status, reason: code), Array(#"{"type":"error","code":"\#(code)","message":"refused"}"#.utf8))
    }

    var stopping: WebSocketClose { WebSocketClose(status: 1001, reason: "server_shutting_down") }

    func httpRefusal(_ refusal: TransportRefusal) -> HTTPResponse {
        let (status, code) = Self.code(refusal)
        var headers: [(name: String, value: String)] = []
        if case .methodNotAllowed(let allowed) = refusal { headers.append(("allow", allowed.map(\.rawValue).joined(separator: ", "))) }
        return HTTPResponse(status: status, contentType: "application/json", headers: headers, body: Array(#"{"error":{"code":"\#(code)","message":"refused"}}"#.utf8))
    }
}

extension TransportEvent {
    var isOpened: Bool { if case .opened = self { true } else { false } }
    var isClosed: Bool { if case .closed = self { true } else { false } }
}
