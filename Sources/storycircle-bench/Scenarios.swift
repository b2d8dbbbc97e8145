import Foundation
import Locking

/// Wall-clock milliseconds, comparable with the server's times (same machine, same clock).
func wallMilliseconds() -> Double { Date().timeIntervalSince1970 * 1_000 }

struct IdleResult: Encodable {
    var scenario = "idle"
    var connections: Int
    var serverRSSBeforeKiB: Int
    var serverRSSAfterKiB: Int
    var bytesPerConnection: Double
}

/// The server's resident memory per joined, idle child.
func runIdle(port: Int, adminToken: String, serverPID: Int32, connections: Int, childrenPerRoom: Int) async throws -> IdleResult {
    let rooms = max(1, connections / childrenPerRoom)
    let created = try await RoomSetup(port: port, adminToken: adminToken).create(rooms, maxPlayers: childrenPerRoom)
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    // Warm up allocators with one room's worth, then measure from there.
    let before = try residentKiB(serverPID)
    let children = try await clients.connect(rooms * childrenPerRoom)
    let welcomed = Latch(children.count)
    clients.onMessage { _, data in if contains(data, Array(#""type":"welcome""#.utf8)) { welcomed.countDown() } }
    for (i, child) in children.enumerated() {
        clients.send(#"{"type":"join","room":"\#(created[i / childrenPerRoom].code)","nickname":"idle \#(i)"}"#, to: child)
    }
    guard await welcomed.wait(timeout: 120) else { throw BenchError("\(welcomed.count) joins unanswered") }
    try await Task.sleep(for: .seconds(2))
    let after = try residentKiB(serverPID)
    return IdleResult(connections: children.count, serverRSSBeforeKiB: before, serverRSSAfterKiB: after, bytesPerConnection: Double(after - before) * 1_024 / Double(children.count))
}

func residentKiB(_ pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let value = Int(line.split(whereSeparator: \.isWhitespace)[1]) else { throw BenchError("no VmRSS for \(pid)") }
    return value
}

struct UnlockResult: Encodable {
    var scenario = "unlock"
    var children: Int
    /// Max − min of the instant each client would show the question, on one shared local clock.
    var displaySpreadMs: Double
    /// How long before the unlock instant the last question arrived (must be positive).
    var smallestLeadMs: Double
    var roundTrip: Percentiles
}

/// One room; every child syncs its clock with five pings, then the quiz unlocks.
func runUnlock(port: Int, adminToken: String, children count: Int) async throws -> UnlockResult {
    let created = try await RoomSetup(port: port, adminToken: adminToken).create(1, maxPlayers: count)[0]
    let clients = try LoadClients(port: port)
    defer { clients.stop() }
    let teacher = try await clients.connect(1)[0]
    let children = try await clients.connect(count)
    var index: [UInt64: Int] = [:]
    for (i, child) in children.enumerated() { index[child] = i }
    let slots = index
    struct Clocks {
        var sent: [[Double]]
        var best: [(roundTrip: Double, offset: Double)]
        var display: [Double]
        var lead: [Double]
    }
    let clocks = Locked(Clocks(sent: Array(repeating: Array(repeating: 0, count: 5), count: count),
                              best: Array(repeating: (Double.infinity, 0), count: count), display: Array(repeating: 0, count: count), lead: Array(repeating: 0, count: count)))
    let welcomed = Latch(count + 1)
    let pongs = Latch(count * 5)
    let questions = Latch(count)
    clients.onMessage { id, data in
        let now = wallMilliseconds()
        if contains(data, Array(#""type":"welcome""#.utf8)) { welcomed.countDown(); return }
        guard let i = slots[id] else { return }
        if contains(data, Array(#""type":"pong""#.utf8)), let ping = numberField(data, "id"), let server = numberField(data, "serverTime") {
            clocks.withLock { clocks in
                let sent = clocks.sent[i][Int(ping)]
                let roundTrip = now - sent
                if roundTrip < clocks.best[i].roundTrip { clocks.best[i] = (roundTrip, server - (sent + now) / 2) }
            }
            pongs.countDown()
        } else if contains(data, Array(#""type":"question""#.utf8)), let opensAt = numberField(data, "opensAt") {
            clocks.withLock { clocks in
                clocks.display[i] = opensAt - clocks.best[i].offset
                clocks.lead[i] = opensAt - now
            }
            questions.countDown()
        }
    }
    clients.send(#"{"type":"control","room":"\#(created.code)","token":"\#(created.teacherToken)"}"#, to: teacher)
    for (i, child) in children.enumerated() {
        clients.send(#"{"type":"join","room":"\#(created.code)","nickname":"sync \#(i)"}"#, to: child)
    }
    guard await welcomed.wait(timeout: 120) else { throw BenchError("\(welcomed.count) hellos unanswered") }
    // Real pages ping at moments of their own; spread each wave over 400 ms as they would, so a client's
    // best sample is not one that queued behind 1,999 others.
    let wave = 400_000.0 / Double(count)
    for ping in 0..<5 {
        let waveStart = nanoseconds()
        for (i, child) in children.enumerated() {
            let due = waveStart + UInt64(Double(i) * wave * 1_000)
            while nanoseconds() < due { try await Task.sleep(for: .microseconds(50)) }
            let now = wallMilliseconds()
            clocks.withLock { $0.sent[i][ping] = now }
            clients.send(#"{"type":"ping","id":\#(ping),"clientTime":\#(Int(now))}"#, to: child)
        }
    }
    guard await pongs.wait(timeout: 60) else { throw BenchError("\(pongs.count) pongs missing") }
    clients.send(#"{"type":"command","command":"start"}"#, to: teacher)
    clients.send(#"{"type":"command","command":"skip"}"#, to: teacher)
    guard await questions.wait(timeout: 60) else { throw BenchError("\(questions.count) questions missing") }
    let final = clocks.withLock { $0 }
    return UnlockResult(
        children: count, displaySpreadMs: (final.display.max() ?? 0) - (final.display.min() ?? 0),
        smallestLeadMs: final.lead.min() ?? 0, roundTrip: Percentiles(milliseconds: final.best.map(\.roundTrip))
    )
}
