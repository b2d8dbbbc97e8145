// libFuzzer target: the HTTP API behind the transport (routing, tokens, JSON bodies, stories, commands),
// on a fresh in-memory server per input. An input is up to eight requests separated by NUL bytes, each
// written as on the wire: "METHOD /path?query", header lines, a blank line, the body. "{admin}", "{code}",
// "{teacher}" and "{dashboard}" stand for the admin token and the last room created, so the fuzzer reaches
// past the token checks. Every answer must be well-formed: a status, JSON that parses, errors in the one
// shape with a known code and the status the code maps to, `Allow` on every 405, and HEAD answered as GET.
import Dispatch
import Foundation
import StoryCircleCore
@testable import StoryCircleApp
@testable import StoryCircleServer
import StoryCircleTesting
import TransportCore
import WebSocketTransport
import WebSocketTransportTesting

private struct NoTransport: MessageTransport {
    func send(_ frame: OutboundFrame, to connections: [UInt64]) {}
    func close(_ connection: UInt64, status: UInt16, reason: String) {}
}

private struct InstantNarrator: NarrationPreparing {
    func prepare(_ request: NarrationRequest, progress: @escaping @Sendable (Int, Int) -> Void) async throws -> NarrationPlan {
        NarrationPlan(sentences: request.sentences.enumerated().map { NarratedSentence(index: $0.offset, text: $0.element, durationMs: 1_000, words: [], audio: nil) })
    }
}

private struct FuzzRequest: Sendable {
    var method: HTTPMethod
    var target: String
    var headers: [String: String]
    var body: [UInt8]

    init?(_ bytes: ArraySlice<UInt8>) {
        let text = Array(bytes)
        guard let firstLineEnd = text.firstIndex(of: 0x0A) ?? (text.isEmpty ? nil : text.endIndex) else { return nil }
        let line = String(decoding: text[..<firstLineEnd], as: UTF8.self).split(separator: " ", maxSplits: 1)
        // Any other method is answered by the transport (405) and never reaches the API.
        guard line.count == 2, let method = HTTPMethod(rawValue: String(line[0])) else { return nil }
        self.method = method
        target = String(line[1]).trimmingCharacters(in: .whitespacesAndNewlines)
        headers = [:]
        var index = firstLineEnd < text.endIndex ? firstLineEnd + 1 : text.endIndex
        while index < text.endIndex {
            let end = text[index...].firstIndex(of: 0x0A) ?? text.endIndex
            let header = String(decoding: text[index..<end], as: UTF8.self)
            index = end < text.endIndex ? end + 1 : end
            if header.isEmpty { break }
            if let colon = header.firstIndex(of: ":") {
                headers[header[..<colon].lowercased()] = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        body = Array(text[index...])
    }
}

private final class Session: @unchecked Sendable {
    // One input runs on one task at a time; `@unchecked` because the tokens change between requests only.
    var code = "000000"
    var teacher = "none"
    var dashboard = "none"
    static let admin = "fuzz-admin-token"

    func fill(_ text: String) -> String {
        text.replacingOccurrences(of: "{admin}", with: Self.admin).replacingOccurrences(of: "{code}", with: code)
            .replacingOccurrences(of: "{teacher}", with: teacher).replacingOccurrences(of: "{dashboard}", with: dashboard)
    }
}

private func check(_ response: HTTPResponse, for request: HTTPRequest) {
    let label = "\(request.method) \(request.path) → \(response.status)"
    precondition((200...599).contains(response.status.code), label)
    if response.status == 405 { precondition(response.header("allow") != nil, "\(label) without Allow") }
    guard response.contentType.hasPrefix("application/json") else { return }
    guard let object = try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed]) else {
        fatalError("\(label): the body is not JSON: \(String(decoding: response.body.prefix(200), as: UTF8.self))")
    }
    guard response.status >= 400 else { return }
    guard let error = (object as? [String: Any])?["error"] as? [String: Any], let raw = error["code"] as? String,
          let code = ErrorCode(rawValue: raw), let message = error["message"] as? String, !message.isEmpty else {
        fatalError("\(label): not an error in the protocol's shape: \(String(decoding: response.body.prefix(300), as: UTF8.self))")
    }
    precondition(code.httpStatus == response.status.code, "\(label): \(raw) maps to \(code.httpStatus)")
}

private func run(_ requests: [FuzzRequest]) async {
    let clock = ManualClock()
    let store = MemoryRoomStore()
    let metrics = ServerMetrics()
    let logger = StoryCircleLog(label: "fuzz", minimumLevel: .error, sink: { _ in })
    let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self)
    let services = RoomServices(
        transport: NoTransport(), storage: store.offers, clock: clock, narrator: InstantNarrator(), lookalikes: LookalikeTable(), metrics: metrics,
        logger: logger
    )
    let registry = RoomRegistry(events: events, services: services)
    let api = APIHandler(
        registry: registry, store: store, clock: clock, metrics: metrics, transportMetrics: nil, adminTokenHash: RoomCredentials.hash(Session.admin),
        publicURL: "http://192.0.2.1:8080", startedAt: clock.now(), audio: nil, qrCodes: true
    )
    let session = Session()
    for fuzzed in requests {
        let target = session.fill(fuzzed.target)
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(keyValue[0])] = keyValue.count > 1 ? String(keyValue[1]) : ""
            }
        }
        let headers = fuzzed.headers.mapValues(session.fill)
        let request = HTTPRequest.testRequest(method: fuzzed.method, path: String(parts.first ?? ""), query: query, headers: headers, body: fuzzed.body)
        // What the transport asks before it reads a body: an answer from the head alone is a refusal in
        // the protocol's shape, and a request it lets through may send at least the default.
        switch APIHandler.router.admitHead(request, with: api, defaultBodyLimit: 256 * 1_024) {
        case .answer(let refusal):
            check(refusal, for: request)
            precondition([401, 403, 429].contains(refusal.status.code), "\(request.path): answered \(refusal.status.code) from its head")
        case .read(let limit):
            precondition(limit >= 256 * 1_024, "\(request.path): a limit below the default")
        }
        let response = await api.handle(request)
        check(response, for: request)
        if fuzzed.method == .get {
            var head = request
            head.method = .head
            let headResponse = await api.handle(head)
            check(headResponse, for: head)
            precondition(headResponse.status == response.status && headResponse.contentType == response.contentType, "HEAD \(request.path) is not GET")
        }
        if response.status == 201, let created = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
           let code = created["code"] as? String, let teacher = created["teacherToken"] as? String, let dashboard = created["dashboardToken"] as? String {
            session.code = code
            session.teacher = teacher
            session.dashboard = dashboard
        }
    }
    sink.finish()
    await registry.shutDown()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPAPI(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let requests = Array(bytes).split(separator: 0, omittingEmptySubsequences: true).prefix(8).compactMap(FuzzRequest.init)
    guard !requests.isEmpty else { return 0 }
    let done = DispatchSemaphore(value: 0)
    Task {
        await run(requests)
        done.signal()
    }
    done.wait()
    return 0
}
