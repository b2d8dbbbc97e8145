import Foundation
import Locking
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Creates StoryCircle rooms over the HTTP API for a scenario.
struct RoomSetup {
    var host = LoadClients.loopback
    let port: Int
    let adminToken: String

    /// One sentence and one question: the rooms of the fan-out, idle and unlock scenarios.
    static var story: [String: Any] { story(sentences: ["Pip found a gear."], questions: 1) }

    /// A story of `sentences` and `questions` four-option questions (the answer is always the second).
    static func story(sentences: [String], questions: Int) -> [String: Any] {
        [
            "title": "Bench",
            "text": sentences,
            "narration": ["voice": "en", "rate": 160],
            "quiz": ["questions": (0..<questions).map { ["question": "Question \($0 + 1)?", "options": ["A", "B", "C", "D"], "answer": "B"] }],
        ]
    }

    struct Room {
        var code: String
        var teacherToken: String
        var dashboardToken: String
    }

    func create(_ count: Int, maxPlayers: Int, story: [String: Any] = RoomSetup.story, questionSeconds: Int = 300) async throws -> [Room] {
        var rooms: [Room] = []
        for _ in 0..<count {
            let body = try JSONSerialization.data(withJSONObject: ["story": story, "settings": ["narration": "off", "maxPlayers": maxPlayers, "questionSeconds": questionSeconds]])
            var request = URLRequest(url: ServerTLS.url(host: host, port: port, "/api/rooms"))
            request.httpMethod = "POST"
            request.httpBody = body
            request.setValue("Bearer \(adminToken)", forHTTPHeaderField: "Authorization")
            let (data, _) = try await fetch(request)
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let code = object["code"] as? String,
                  let token = object["teacherToken"] as? String, let dashboard = object["dashboardToken"] as? String else {
                throw BenchError("room creation failed: \(String(decoding: data, as: UTF8.self))")
            }
            rooms.append(Room(code: code, teacherToken: token, dashboardToken: dashboard))
        }
        return rooms
    }
}

/// Rooms with everyone in them: a teacher (`control`) per room, optionally a dashboard (`watch`, the
/// projector, which gets the coalesced lobby and scoreboards), and the children (`join`), all welcomed.
struct Classroom {
    var rooms: [RoomSetup.Room]
    var teachers: [UInt64]
    var dashboards: [UInt64]
    var children: [[UInt64]]

    var childrenPerRoom: Int { children.first?.count ?? 0 }
    var allChildren: [UInt64] { children.flatMap { $0 } }

    static func seat(host: String = LoadClients.loopback, port: Int, adminToken: String, rooms count: Int, childrenPerRoom: Int, story: [String: Any] = RoomSetup.story,
                     questionSeconds: Int = 300, dashboards withDashboards: Bool, clients: LoadClients) async throws -> Classroom {
        let rooms = try await RoomSetup(host: host, port: port, adminToken: adminToken).create(count, maxPlayers: max(childrenPerRoom, 100), story: story, questionSeconds: questionSeconds)
        let teachers = try await clients.connect(count)
        let dashboards = withDashboards ? try await clients.connect(count) : []
        let children = try await clients.connect(count * childrenPerRoom)
        // A hello is answered by a welcome or an error; the first refusal is kept, so that a server whose limits
        // turn the children away (joins per address, connections) says so at once instead of after the timeout.
        let welcomed = Latch(teachers.count + dashboards.count + children.count)
        let refused = Locked<(count: Int, first: String?)>((0, nil))
        clients.onMessage { _, data in
            switch messageType(data) {
            case "welcome": welcomed.countDown()
            case "error":
                let reason = "\(stringField(data, "code") ?? "error"): \(stringField(data, "message") ?? "")"
                refused.withLock { state in
                    state.count += 1
                    if state.first == nil { state.first = reason }
                }
                welcomed.countDown()
            default: break
            }
        }
        for (r, room) in rooms.enumerated() {
            clients.send(#"{"type":"control","room":"\#(room.code)","token":"\#(room.teacherToken)"}"#, to: teachers[r])
            if withDashboards { clients.send(#"{"type":"watch","room":"\#(room.code)","token":"\#(room.dashboardToken)"}"#, to: dashboards[r]) }
            for i in 0..<childrenPerRoom {
                clients.send(#"{"type":"join","room":"\#(room.code)","nickname":"kid \#(r)-\#(i)"}"#, to: children[r * childrenPerRoom + i])
            }
        }
        let answered = await welcomed.wait(timeout: 120)
        let (refusals, first) = refused.withLock { ($0.count, $0.first) }
        if let first { throw BenchError("the server refused \(refusals) hellos, the first with \(first)") }
        guard answered else { throw BenchError("\(welcomed.count) hellos unanswered after 120 s") }
        return Classroom(rooms: rooms, teachers: teachers, dashboards: dashboards,
                         children: (0..<count).map { Array(children[($0 * childrenPerRoom)..<(($0 + 1) * childrenPerRoom)]) })
    }

    /// Starts every room and skips the story: the rooms stand at their first question. Returns the latest
    /// `opensAt` (server milliseconds).
    func toFirstQuestion(clients: LoadClients) async throws -> Double {
        let questions = Latch(rooms.count * childrenPerRoom)
        let opensAt = Locked(0.0)
        let everyone = Set(allChildren)
        clients.onMessage { id, data in
            guard messageType(data) == "question" else { return }
            if let value = numberField(data, "opensAt") { opensAt.withLock { $0 = max($0, value) } }
            if everyone.contains(id) { questions.countDown() }
        }
        for teacher in teachers {
            clients.send(#"{"type":"command","command":"start"}"#, to: teacher)
            clients.send(#"{"type":"command","command":"skip"}"#, to: teacher)
        }
        guard await questions.wait(timeout: 120) else { throw BenchError("\(questions.count) children got no question after 120 s") }
        return opensAt.withLock { $0 }
    }
}
