import Foundation
import StoryCircleCore
import TransportCore
import StoryCircleServer

extension HTTPResponse {
    static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func json(_ status: HTTPStatus, _ value: some Encodable, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        let body = (try? jsonEncoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(status: status, contentType: "application/json; charset=utf-8", headers: [("cache-control", "no-store")] + headers, body: Array(body) + [0x0A])
    }

    /// `{"error":{"code":...,"message":...,"params":{...}}}` with the status that fits the code.
    static func error(_ error: RoomError, extra: [String: JSONValue] = [:]) -> HTTPResponse {
        var object: [String: JSONValue] = ["code": .string(error.code.rawValue), "message": .string(error.message)]
        // The parameters a page words the code with, as on the WebSocket.
        if let params = error.params { object["params"] = .object(params.mapValues(JSONValue.string)) }
        object.merge(extra) { current, _ in current }
        // A proxy or a script that sees `Retry-After` comes back once another node has taken the room.
        let headers: [(name: String, value: String)] = error.code == .tryAgain ? [("retry-after", "2")] : []
        return json(HTTPStatus(error.code.httpStatus), ["error": JSONValue.object(object)], headers: headers)
    }
}
