import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

/// What a load balancer and a monitor ask, without a token: `GET /healthz` and `GET /metrics`; and what a
/// child's page asks before a code is typed: `GET /api/join`.
struct HealthRoutes: RouteCollection {
    var routes: [Route] {
        [
            Route(.get, "/healthz", .none) { api, _ in await api.health() },
            Route(.get, "/metrics", .none) { api, _ in await api.prometheus() },
            Route(.get, "/api/join", .none) { api, _ in api.joinInfo() },
        ]
    }
}

extension APIHandler {
    /// How long this server's room codes are, so the child's page knows when a typed code is whole. The
    /// same for every room and every node: it names nothing and reads nothing.
    fileprivate func joinInfo() -> HTTPResponse {
        struct JoinInfo: Encodable {
            var roomCodeDigits: Int
        }
        return .json(200, JoinInfo(roomCodeDigits: registry.directory.codeDigits))
    }

    /// 200 `ok` while the store can write; 503 `degraded`, with the store's reason, while it cannot (a
    /// load balancer or a monitor sees at once that answers are not being stored).
    fileprivate func health() async -> HTTPResponse {
        struct Health: Encodable {
            var status: String
            var reason: String?
            var failingSince: ServerTime?
            var version = StoryCircleVersion.current
            var rooms: Int
            var connections: Int
            var uptimeSeconds: Int
            /// Every voice this node can read with, as stories name them: in a cluster every node
            /// should list the same.
            var voices: [String]?
            var naturalVoice: NaturalVoiceHealth?
        }
        struct NaturalVoiceHealth: Encodable {
            var state: String
            var pid: Int32?
            var launches: Int
            var failures: Int
            var lastProblem: String?
        }
        let connections = transportMetrics?.snapshot.openConnections ?? 0
        var health = Health(status: "ok", rooms: await registry.directory.liveRoomCount, connections: connections, uptimeSeconds: (clock.now() - startedAt) / 1_000)
        if let narrator {
            health.voices = narrator.voices.names
            if let status = narrator.piper?.status {
                health.naturalVoice = NaturalVoiceHealth(state: status.state, pid: status.pid, launches: status.launches, failures: status.failures, lastProblem: status.lastProblem)
            }
        }
        if case .failing(let since, let reason) = store.health {
            health.status = "degraded"
            health.reason = reason
            health.failingSince = since
            return .json(503, health)
        }
        return .json(200, health)
    }

    fileprivate func prometheus() async -> HTTPResponse {
        var text = PrometheusText()
        if let transport = transportMetrics?.snapshot {
            text.gauge("storycircle_connections_open", "Open WebSocket connections.", transport.openConnections)
            if let maxConnections {
                text.gauge("storycircle_connections_max", "The most WebSocket connections accepted at once (maxConnections, lowered to fit the open-file limit).", maxConnections)
            }
            text.counter("storycircle_connections_total", "WebSocket connections accepted.", transport.connectionsTotal)
            text.counter("storycircle_messages_received_total", "Messages received from clients.", transport.messagesReceived)
            text.counter("storycircle_messages_sent_total", "Messages sent to clients.", transport.messagesSent)
            text.counter("storycircle_bytes_sent_total", "Message bytes sent to clients.", transport.bytesSent)
            text.counter("storycircle_protocol_errors_total", "Connections closed for oversize, binary or flooding messages.", transport.protocolErrors)
            text.counter("storycircle_slow_clients_dropped_total", "Connections dropped for falling too far behind.", transport.slowClientsDropped)
            text.counter("storycircle_upgrades_rejected_total", "WebSocket upgrades refused (path, origin, capacity).", transport.rejectedUpgrades)
            text.counter("storycircle_upgrades_rejected_per_address_total", "WebSocket upgrades refused for maxConnectionsPerAddress.", transport.rejectedPerAddress)
            text.counter("storycircle_hello_timeouts_total", "WebSockets closed for saying no hello in time.", transport.helloTimeouts)
            text.counter("storycircle_http_requests_total", "Dynamic HTTP requests.", transport.httpRequests)
            text.counter("storycircle_http_body_bytes_total", "Bytes of HTTP request bodies read.", transport.httpBodyBytes)
            text.counter("storycircle_http_answered_at_head_total", "HTTP requests answered from their headers, their body unread.", transport.httpAnsweredAtHead)
            text.counter("storycircle_http_rejected_per_address_total", "HTTP connections refused for maxHTTPConnectionsPerAddress.", transport.httpRejectedPerAddress)
        }
        var phases: [PhaseName: Int] = [:]
        for room in await registry.directory.liveRooms { phases[await room.phase.name, default: 0] += 1 }
        text.family("storycircle_rooms", .gauge, "Rooms in memory, by phase.", samples: [PhaseName.lobby, .preparing, .error, .narrating, .question, .reveal, .finished].map {
            ("phase=\"\($0.rawValue)\"", phases[$0] ?? 0)
        })
        text.gauge("storycircle_storage_healthy", "1 while the store can write, 0 while writes fail.", store.health.isOK ? 1 : 0)
        metrics.write(to: &text)
        ProcessStatistics.current().write(to: &text)
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", headers: [("cache-control", "no-store")], body: Array(text.text.utf8))
    }
}
