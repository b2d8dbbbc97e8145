import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Creates StoryCircle rooms over the HTTP API for a scenario.
struct RoomSetup {
    let port: Int
    let adminToken: String

    static var story: [String: Any] {
        [
        "title": "Bench",
        "text": "Pip found a gear.",
        "narration": ["voice": "en", "rate": 400],
        "quiz": ["questions": [["question": "Which?", "options": ["A", "B", "C", "D"], "answer": "B", "time": 300]]],
        ]
    }

    struct Room {
        var code: String
        var teacherToken: String
    }

    func create(_ count: Int, maxPlayers: Int) async throws -> [Room] {
        var rooms: [Room] = []
        for _ in 0..<count {
            let body = try JSONSerialization.data(withJSONObject: ["story": Self.story, "settings": ["narration": "off", "maxPlayers": maxPlayers, "questionSeconds": 300]])
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/api/rooms")!)
            request.httpMethod = "POST"
            request.httpBody = body
            request.setValue("Bearer \(adminToken)", forHTTPHeaderField: "Authorization")
            let data: Data = try await withCheckedThrowingContinuation { continuation in
                URLSession.shared.dataTask(with: request) { data, response, error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data ?? Data()) }
                }.resume()
            }
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let code = object["code"] as? String,
                  let token = object["teacherToken"] as? String else {
                throw BenchError("room creation failed: \(String(decoding: data, as: UTF8.self))")
            }
            rooms.append(Room(code: code, teacherToken: token))
        }
        return rooms
    }
}
