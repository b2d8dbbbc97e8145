import Foundation
import Pictures
import RoomStoreSupport
import StoryCircleCore
import TransportCore

/// Pictures over HTTP (`docs/protocol.md`, "Pictures"):
/// - `POST /api/pictures` (admin token; the body is the picture file itself): checked by decoding,
///   cleaned, stored by content hash; answers its id.
/// - `GET /pictures/<id>` (`?size=phone` for the copy for phones, `?room=` for the proxy to route it to
///   the room's node): immutable, so it carries its hash as ETag and may be cached for a year.
struct PictureRoutes: RouteCollection {
    var routes: [Route] {
        [
            // The picture's byte limit and room for nothing else, read only for a request with a token.
            Route(.post, "/api/pictures", .teaching, bodyLimit: PictureLimits.standard.maxBytes, refusal: .unauthorized("Uploading a picture needs a signed-in teacher or the admin token (Authorization: Bearer …).")) {
                try await $0.uploadPicture($1)
            },
            Route(.get, "/pictures/:id", .none) { try await $0.servePicture($1) },
        ]
    }
}

extension APIHandler {
    /// Cleaning decodes and re-encodes whole pictures: seconds of CPU for a large photo in a debug build,
    /// so never on Swift's cooperative pool. One thread: uploads come one story at a time.
    static let pictureThreads = StoreThreads(name: "picture-cleaner", count: 1)

    fileprivate func uploadPicture(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let pictures else {
            throw HTTPError(.internalError, "This server's store keeps no pictures.")
        }
        let body = request.body
        let now = clock.now()
        let owner = request.newOwner
        let outcome: Result<StoredPicture, PictureError>
        do {
            outcome = try await Self.pictureThreads.run {
                Result { () throws(PictureError) -> StoredPicture in
                    let clean = try PictureCleaner.clean(body)
                    return StoredPicture(large: Self.rendition(clean.large), phone: clean.phone.map(Self.rendition), createdAt: now, owner: owner)
                }
            }
        } catch {
            throw HTTPError(.serverShuttingDown, "The server is stopping.")
        }
        let picture: StoredPicture
        switch outcome {
        case .failure(let refusal):
            var params = ["reason": refusal.code]
            if case .tooManyBytes(_, let limit) = refusal { params["limit"] = String(limit) }
            if case .tooManyPixels(let width, let height, let limit, let side) = refusal {
                params.merge(["width": String(width), "height": String(height), "limit": String(limit), "side": String(side)]) { $1 }
            }
            throw HTTPError(.pictureRefused, refusal.message, params: params, extra: [
                "reason": .string(refusal.code), "params": .object(params.mapValues(JSONValue.string)),
            ])
        case .success(let cleaned):
            picture = cleaned
        }
        do {
            try await pictures.storePicture(picture)
        } catch {
            throw HTTPError(.storageUnavailable, "The picture could not be stored (\(StoreFailure.from(error, record: "picture").reason)).")
        }
        return .json(201, UploadedPicture(picture))
    }

    fileprivate func servePicture(_ request: RouteRequest) async throws -> HTTPResponse {
        let id = request[parameter: "id"]
        let missing = HTTPError(.notFound, "No such picture.")
        guard PictureReference.isPictureID(id), let pictures else { throw missing }
        let size = request.query["size"] == "phone" ? PictureSize.phone : .large
        let etag = size == .phone ? "\"\(id)-phone\"" : "\"\(id)\""
        let caching: [(name: String, value: String)] = [
            ("cache-control", "public, max-age=31536000, immutable"), ("etag", etag), ("x-content-type-options", "nosniff"),
        ]
        if request.http.headers["if-none-match"]?.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) == true {
            return HTTPResponse(status: 304, contentType: "application/octet-stream", headers: caching)
        }
        let rendition: PictureRendition?
        do {
            rendition = try await pictures.picture(id: id, size: size)
        } catch {
            throw HTTPError(.storageUnavailable, "The picture cannot be read from storage just now.")
        }
        guard let rendition else { throw missing }
        return HTTPResponse(status: 200, contentType: rendition.mimeType, headers: caching, body: request.http.method == .head ? [] : rendition.bytes)
    }

    /// A room is made only from a story whose pictures are all stored: a file path means the picture was
    /// never uploaded (the CLI uploads them), an unknown id that it is not in this store.
    func refusePictures(of story: Story) async throws {
        let references = story.pictureReferences
        guard !references.isEmpty else { return }
        guard let pictures else {
            throw HTTPError(.invalidStory, "This server's store keeps no pictures.")
        }
        var issues: [ValidationIssue] = []
        let ids = references.compactMap(\.storedID)
        for reference in references {
            if case .file(let path) = reference.source {
                issues.append(ValidationIssue(.error, at: "", .pictureNotUploaded, ["file": path], "the picture \(path) was not uploaded: send it to POST /api/pictures and name it by its id (storycircle does this)"))
            }
        }
        let stored: Set<String>
        do {
            stored = try await pictures.storedPictureIDs(among: ids)
        } catch {
            throw HTTPError(.storageUnavailable, "The story's pictures cannot be checked in storage just now.")
        }
        for id in ids where !stored.contains(id) {
            issues.append(ValidationIssue(.error, at: "", .pictureNotStored, ["id": id], "there is no stored picture \(id)"))
        }
        guard !issues.isEmpty else { return }
        throw HTTPError(.invalidStory, "The story has problems: \(issues.map(\.description).joined(separator: "; "))", extra: ["issues": issuesJSON(issues)])
    }

    static func rendition(_ rendition: CleanPicture.Rendition) -> PictureRendition {
        PictureRendition(mimeType: rendition.format.mimeType, width: rendition.width, height: rendition.height, bytes: rendition.bytes)
    }
}

/// The answer to `POST /api/pictures`.
struct UploadedPicture: Encodable {
    struct Size: Encodable {
        var width: Int
        var height: Int
        var bytes: Int
    }

    var id: String
    var type: String
    var width: Int
    var height: Int
    var bytes: Int
    var phone: Size?

    init(_ picture: StoredPicture) {
        id = picture.id
        type = picture.large.mimeType
        width = picture.large.width
        height = picture.large.height
        bytes = picture.large.bytes.count
        phone = picture.phone.map { Size(width: $0.width, height: $0.height, bytes: $0.bytes.count) }
    }
}
