import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server's TLS as the generator sees it: `--tls-ca <file>` makes every connection wss and every
/// request https, the server's certificate checked against that authority (the bench's own CA).
enum ServerTLS {
    static let certificateAuthority: String? = value("tls-ca")

    /// `path` on the server under test, over https when `--tls-ca` is given.
    static func url(host: String = LoadClients.loopback, port: Int, _ path: String) -> URL {
        URL(string: "\(certificateAuthority == nil ? "http" : "https")://\(host):\(port)\(path)")!
    }
}

/// One HTTP exchange with the server under test, awaited (the scenarios' room creation, health, audio and
/// `/metrics` requests).
func fetch(_ request: URLRequest, session: URLSession = .shared) async throws -> (Data, URLResponse) {
    if request.url?.scheme == "https", let authority = ServerTLS.certificateAuthority {
        return try await fetchWithCurl(request, certificateAuthority: authority)
    }
    return try await withCheckedThrowingContinuation { continuation in
        session.dataTask(with: request) { data, response, error in
            if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: (data ?? Data(), response!)) }
        }.resume()
    }
}

func fetch(_ url: URL, session: URLSession = .shared) async throws -> (Data, URLResponse) {
    try await fetch(URLRequest(url: url), session: session)
}

/// Over https through the `curl` program: URLSession on Linux (libcurl underneath) offers no way to trust
/// a CA of one's own outside Android. The request goes to curl as a config on its standard input, so the
/// admin token never shows in a process list; the body from a file only this user can read.
private func fetchWithCurl(_ request: URLRequest, certificateAuthority: String) async throws -> (Data, URLResponse) {
    guard let url = request.url else { throw BenchError("a request without a URL") }
    func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
    var config = ["url = \(quoted(url.absoluteString))", "cacert = \(quoted(certificateAuthority))", "silent", "show-error",
                  "request = \(quoted(request.httpMethod ?? "GET"))", "write-out = \"\\n%{http_code}\""]
    for (name, value) in request.allHTTPHeaderFields ?? [:] { config.append("header = \(quoted("\(name): \(value)"))") }
    var bodyFile: URL?
    if let body = request.httpBody {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-bench-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: body, attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("could not write a request body to \(file.path)")
        }
        bodyFile = file
        config.append("data-binary = \(quoted("@" + file.path))")
    }
    defer { if let bodyFile { try? FileManager.default.removeItem(at: bodyFile) } }
    let output = try await Task.detached { () throws -> Data in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--config", "-"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(config.joined(separator: "\n").utf8 + [0x0A]))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("curl \(url.path): exit \(process.terminationStatus)") }
        return data
    }.value
    guard let newline = output.lastIndex(of: 0x0A), let status = Int(String(decoding: output[(newline + 1)...], as: UTF8.self)) else {
        throw BenchError("curl \(url.path): no status in its answer")
    }
    let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
    return (Data(output[..<newline]), response)
}
