import Foundation
import Locking

struct JoinStormResult: Encodable {
    var scenario = "joinstorm"
    var children: Int
    var spreadSeconds: Double
    /// The intended moment a child starts (opens its WebSocket) → its `welcome`: connection, upgrade, the
    /// `join`, storing the child, the answer.
    var welcome: Percentiles
    /// The `join` sent (right as the connection opened) → `welcome`: the server's part alone.
    var joinToWelcome: Percentiles
    /// Children that got no welcome: refused (an error, an HTTP refusal) or still waiting when the run ended.
    var unwelcomed: Int
    var errors: [String]
    var sendLag: Percentiles
    /// The server's cost per message it sent during the storm (welcomes, and the dashboard's lobby).
    var cost: ServerCost?
}

private struct StormState {
    var index: [UInt64: Int] = [:]
    var joinedAt: [UInt64]
    var welcomedAt: [UInt64]
    var welcomes = 0
    var messages = 0
    var errors: [String] = []

    init(children: Int) {
        joinedAt = Array(repeating: 0, count: children)
        welcomedAt = joinedAt
    }
}

/// `children` children join one room within `spread` seconds (evenly, open loop), the way a school
/// assembly does when the code goes up on the projector; a teacher and a dashboard are already there.
func runJoinStorm(port: Int, adminToken: String, children count: Int, spread: Double, serverPID: Int32?) async throws -> JoinStormResult {
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let room = try await RoomSetup(port: port, adminToken: adminToken).create(1, maxPlayers: max(count, 100))[0]
    let screens = try await clients.connect(2)
    let welcomedScreens = Latch(2)
    clients.onMessage { _, data in if messageType(data) == "welcome" { welcomedScreens.countDown() } }
    clients.send(#"{"type":"control","room":"\#(room.code)","token":"\#(room.teacherToken)"}"#, to: screens[0])
    clients.send(#"{"type":"watch","room":"\#(room.code)","token":"\#(room.dashboardToken)"}"#, to: screens[1])
    guard await welcomedScreens.wait(timeout: 10) else { throw BenchError("the storm room's screens got no welcome") }

    let state = Locked(StormState(children: count))
    // The connection's id is known only once `open()` returns; the lock held across it makes the
    // connected handler (on the client thread) wait until the id is filed.
    clients.onConnected { id in
        let i = state.withLock { s -> Int? in
            guard let i = s.index[id] else { return nil }
            s.joinedAt[i] = nanoseconds()
            return i
        }
        if let i { clients.send(#"{"type":"join","room":"\#(room.code)","nickname":"storm \#(i)"}"#, to: id) }
    }
    clients.onMessage { id, data in
        let now = nanoseconds()
        let type = messageType(data)
        state.withLock { s in
            s.messages += 1
            guard let i = s.index[id] else { return }
            if type == "welcome", s.welcomedAt[i] == 0 {
                s.welcomedAt[i] = now
                s.welcomes += 1
            } else if type == "error", s.errors.count < 5 {
                s.errors.append(String(decoding: data, as: UTF8.self))
            }
        }
    }
    let timeline = Timeline()
    let start = nanoseconds() + 200_000_000
    var intended: [UInt64] = []
    for i in 0..<count {
        let due = start + UInt64(Double(i) * spread * 1e9 / Double(count))
        intended.append(due)
        timeline.at(due) {
            state.withLock { s in s.index[clients.open()] = i }
        }
    }
    try await Task.sleep(for: .nanoseconds(Int(start - min(start, nanoseconds()))))
    let meter = try CostMeter(pid: serverPID)
    let deadline = start + UInt64((spread + 30) * 1e9)
    while state.withLock({ $0.welcomes }) < count, nanoseconds() < deadline {
        if clients.failures.count + state.withLock({ $0.errors.count }) > 0, nanoseconds() > start + UInt64((spread + 5) * 1e9) { break }
        try await Task.sleep(for: .milliseconds(5))
    }
    let final = state.withLock { $0 }
    let cost = try meter.finish(messages: final.messages)
    let lag = timeline.stop()
    let failures = clients.failures.values.prefix(5).map { "connection failed: \($0)" }
    var welcome: [UInt64] = [], server: [UInt64] = []
    for i in 0..<count where final.welcomedAt[i] != 0 {
        welcome.append(since(intended[i], final.welcomedAt[i]))
        server.append(since(final.joinedAt[i], final.welcomedAt[i]))
    }
    return JoinStormResult(children: count, spreadSeconds: spread, welcome: Percentiles(nanoseconds: welcome), joinToWelcome: Percentiles(nanoseconds: server),
                           unwelcomed: count - final.welcomes, errors: final.errors + failures, sendLag: lag, cost: cost)
}
