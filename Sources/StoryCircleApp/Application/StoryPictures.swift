import Foundation
import Pictures
import StoryCircleCore

/// A story file's pictures on their way to the room store: read from disk next to the story file (paths
/// are relative to it), checked and cleaned exactly as the server does, and replaced in the story by the
/// ids they are stored under.
public enum StoryPictures {
    /// The file a picture path names: relative to the story file's folder, and, symlinks resolved, inside
    /// it (a story file from somewhere else must not read, and upload, any file this account can read).
    public static func resolve(_ file: String, storyPath: String) throws(StoryPictureFailure) -> String {
        guard !file.hasPrefix("/") else {
            throw StoryPictureFailure(description: "a picture's path must be relative to the story file's folder, not absolute")
        }
        let folderURL = URL(fileURLWithPath: storyPath).deletingLastPathComponent()
        let folder = realPath(folderURL.path) ?? folderURL.standardizedFileURL.path
        let named = URL(fileURLWithPath: folder).appendingPathComponent(file).standardizedFileURL.path
        // A file that does not exist is judged by its path; reading it then says it is missing.
        let located = realPath(named) ?? named
        guard located.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/") else {
            throw StoryPictureFailure(description: "the picture must be in the story file's folder or a folder inside it; this path leads outside it")
        }
        return located
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Every problem with the pictures of the story at `storyPath` (already loaded as `document`): a
    /// path leading outside the story's folder, a missing or unreadable file, a file that is not a usable
    /// picture, a story whose pictures are over the limits together. Each with the path of the field that
    /// names the file. The files are read and decoded on the picture threads, off Swift's pool.
    public static func problems(document: JSONValue, storyPath: String, limits: PictureLimits = .standard) async -> [ValidationIssue] {
        do {
            return try await APIHandler.pictureThreads.run { checkedNow(document: document, storyPath: storyPath, limits: limits) }
        } catch {
            return [ValidationIssue(.error, at: "", .picturesUnchecked, "the pictures could not be checked: \(error)")]
        }
    }

    /// `problems`, on the calling thread: blocking file reads and decoding.
    static func checkedNow(document: JSONValue, storyPath: String, limits: PictureLimits) -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        var checked: [String: Int?] = [:]  // file -> stored bytes (nil when refused)
        var total = 0
        for (path, file) in Story.pictureFileLocations(in: document) {
            let resolved: String
            do {
                resolved = try resolve(file, storyPath: storyPath)
            } catch {
                issues.append(ValidationIssue(.error, at: path, .pictureUnusable, ["file": file], "\(file): \(error.description)"))
                continue
            }
            if let earlier = checked[resolved] {
                if earlier == nil { issues.append(ValidationIssue(.error, at: path, .pictureUnusable, ["file": file], "\(file): see above")) }
                continue
            }
            do {
                let bytes = try PictureFile.read(path: resolved, limits: limits)
                let clean = try PictureCleaner.clean(bytes, limits: limits)
                checked[resolved] = clean.storedBytes
                total += clean.storedBytes
            } catch {
                checked[resolved] = .some(nil)
                issues.append(ValidationIssue(.error, at: path, .pictureUnusable, ["file": file], "\(file): \(describe(error))"))
            }
        }
        if checked.count > limits.maxPerStory {
            issues.append(ValidationIssue(.error, at: "", .tooManyPictures, ["count": String(checked.count), "limit": String(limits.maxPerStory)], "the story has \(checked.count) pictures; the limit is \(limits.maxPerStory)"))
        }
        if total > limits.maxStoredBytesPerStory {
            issues.append(ValidationIssue(.error, at: "", .picturesTooLarge, ["bytes": String(total), "limit": String(limits.maxStoredBytesPerStory)], "the story's pictures come to \(total) bytes once cleaned; the limit is \(limits.maxStoredBytesPerStory)"))
        }
        return issues
    }

    /// Sends each distinct picture file of `story` to `store` (which answers its id and stored size) and
    /// answers the story naming its pictures by id. Throws the first problem, with the file's name.
    public static func storing(
        _ story: Story, storyPath: String, limits: PictureLimits = .standard,
        store: (_ bytes: [UInt8]) async throws -> (id: String, storedBytes: Int)
    ) async throws -> Story {
        var ids: [String: String] = [:]
        var total = 0
        for reference in story.pictureReferences {
            guard case .file(let file) = reference.source, ids[file] == nil else { continue }
            let located: String
            do {
                located = try resolve(file, storyPath: storyPath)
            } catch {
                throw StoryPictureFailure(description: "\(file): \(error.description)")
            }
            // A blocking read: on the picture threads, off Swift's pool.
            let read = try await APIHandler.pictureThreads.run {
                Result { () throws(PictureFile.ReadError) -> [UInt8] in try PictureFile.read(path: located, limits: limits) }
            }
            let bytes: [UInt8]
            switch read {
            case .success(let content): bytes = content
            case .failure(let error): throw StoryPictureFailure(description: "\(file): \(describe(error))")
            }
            let stored: (id: String, storedBytes: Int)
            do {
                stored = try await store(bytes)
            } catch let failure as StoryPictureFailure {
                throw StoryPictureFailure(description: "\(file): \(failure.description)")
            }
            total += stored.storedBytes
            if total > limits.maxStoredBytesPerStory {
                throw StoryPictureFailure(description: "the story's pictures come to more than \(limits.maxStoredBytesPerStory) bytes once cleaned")
            }
            ids[file] = stored.id
        }
        return story.replacingPictureSources { source in
            if case .file(let file) = source, let id = ids[file] { return .stored(id: id) }
            return source
        }
    }

    public struct StoryPictureFailure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as PictureError: return error.message
        case PictureFile.ReadError.missing: return "there is no such file"
        case PictureFile.ReadError.unreadable(_, let reason): return "it cannot be read (\(reason))"
        case PictureFile.ReadError.picture(let error): return error.message
        default: return String(describing: error)
        }
    }
}

extension StoryPictures {
    /// Stores the pictures of `story` (read next to `storyPath`) in `pictures`, as an upload to
    /// `POST /api/pictures` would (cleaned on the picture threads), and answers the story naming them by id.
    public static func storing(_ story: Story, storyPath: String, in pictures: any PictureStore, now: ServerTime) async throws -> Story {
        guard !story.pictureReferences.isEmpty else { return story }
        return try await storing(story, storyPath: storyPath) { bytes in
            let outcome = try await APIHandler.pictureThreads.run {
                Result { () throws(PictureError) -> StoredPicture in
                    let clean = try PictureCleaner.clean(bytes)
                    return StoredPicture(large: APIHandler.rendition(clean.large), phone: clean.phone.map(APIHandler.rendition), createdAt: now)
                }
            }
            let picture = try outcome.mapError { StoryPictureFailure(description: $0.message) }.get()
            try await pictures.storePicture(picture)
            return (picture.id, picture.storedBytes)
        }
    }
}

extension ClassroomServer {
    /// Stores the pictures of `story` (read next to `storyPath`) in this server's store, as an upload to
    /// `POST /api/pictures` would, and answers the story naming them by id (`storycircle start`).
    public func storingPictures(of story: Story, storyPath: String) async throws -> Story {
        guard !story.pictureReferences.isEmpty else { return story }
        guard let pictures = storage.pictures else {
            throw StoryPictures.StoryPictureFailure(description: "this server's store keeps no pictures")
        }
        let now = ServerTime(milliseconds: Int64((Date().timeIntervalSince1970 * 1_000).rounded()))
        return try await StoryPictures.storing(story, storyPath: storyPath, in: pictures, now: now)
    }
}
