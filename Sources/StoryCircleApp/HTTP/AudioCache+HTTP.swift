import TransportCore
import StoryCircleServer

extension AudioCache {
    /// `GET /audio/<key>.mp3`: immutable content, so it carries its key as ETag and may be cached for a year.
    func response(for file: String, ifNoneMatch: String?) -> HTTPResponse {
        guard file.hasSuffix(".mp3") else { return .error(.init(.notFound, "No such audio.")) }
        let key = String(file.dropLast(4))
        let etag = "\"\(key)\""
        let caching: [(name: String, value: String)] = [("cache-control", "public, max-age=31536000, immutable"), ("etag", etag)]
        guard AudioCache.isKey(key) else { return .error(.init(.notFound, "No such audio.")) }
        if ifNoneMatch?.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) == true {
            return HTTPResponse(status: 304, contentType: "audio/mpeg", headers: caching)
        }
        guard let audio = audio(key) else { return .error(.init(.notFound, "No such audio.")) }
        return HTTPResponse(status: 200, contentType: "audio/mpeg", headers: caching, body: audio)
    }
}
