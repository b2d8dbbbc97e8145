import Foundation
import Glibc
import Locking
import StoryCircleCore
import StoryCircleServer

/// Synthesised sentences on disk, keyed by a hash of everything that changes the sound (text, voice, rate,
/// pitch, engine version): a second room on the same story synthesises nothing, and the cache survives
/// restarts. Beyond `maxBytes` the least recently used clips are evicted.
///
/// Layout: `<directory>/<key[0..2]>/<key>.mp3` and a `<key>.json` beside it with the duration and word
/// timings. Files are written to a temporary name and renamed, so a crash never leaves half a clip.
public final class AudioCache: Sendable {
    /// A clip's metadata, stored beside its audio.
    public struct Clip: Sendable, Equatable, Codable {
        public var key: String
        public var durationMs: Int
        public var words: [WordTiming]
        public var bytes: Int

        /// The URL path the pages fetch it from.
        public var path: String { "/audio/\(key).mp3" }
    }

    private struct Entry {
        var bytes: Int
        var lastUsed: Date
    }

    public let directory: URL
    public let maxBytes: Int
    private let index = Locked<[String: Entry]>([:])

    public init(directory: URL, maxBytes: Int) throws {
        self.directory = directory
        self.maxBytes = maxBytes
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        index.withLock { $0 = Self.scan(directory) }
    }

    /// The cache key for a text spoken a given way. The leading format tag changes whenever what a clip
    /// holds changes (v2: no zero-length words), so clips made by an older build are not reused; the
    /// cache's size bound evicts them in time.
    public static func key(text: String, voice: String, rate: Int, pitch: Int, engineVersion: String) -> String {
        SHA256.hexDigest(["storycircle.audio.v2", engineVersion, voice, String(rate), String(pitch), text].joined(separator: "\u{1F}"))
    }

    static func isKey(_ key: String) -> Bool {
        key.count == 64 && key.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    public var totalBytes: Int {
        index.withLock { $0.values.reduce(0) { $0 + $1.bytes } }
    }

    public var count: Int {
        index.withLock { $0.count }
    }

    /// The clip for `key`, if cached; marks it recently used.
    public func clip(_ key: String) -> Clip? {
        guard Self.isKey(key), index.withLock({ $0[key] != nil }) else { return nil }
        guard let data = FileManager.default.contents(atPath: metadataURL(key).path),
              let clip = try? JSONDecoder().decode(Clip.self, from: data),
              FileManager.default.fileExists(atPath: audioURL(key).path) else {
            index.withLock { _ = $0.removeValue(forKey: key) }
            return nil
        }
        touch(key)
        return clip
    }

    /// The audio bytes for `key`, for serving over HTTP.
    public func audio(_ key: String) -> [UInt8]? {
        guard Self.isKey(key), let data = FileManager.default.contents(atPath: audioURL(key).path) else { return nil }
        touch(key)
        return Array(data)
    }

    /// Stores a clip, then evicts the least recently used ones beyond the size bound.
    public func store(_ audio: [UInt8], durationMs: Int, words: [WordTiming], key: String) throws -> Clip {
        let clip = Clip(key: key, durationMs: durationMs, words: words, bytes: audio.count)
        let folder = audioURL(key).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Self.writeAtomically(Data(audio), to: audioURL(key))
        try Self.writeAtomically(try JSONEncoder().encode(clip), to: metadataURL(key))
        index.withLock { $0[key] = Entry(bytes: audio.count, lastUsed: Date()) }
        evict()
        return clip
    }

    private func touch(_ key: String) {
        let now = Date()
        index.withLock { $0[key]?.lastUsed = now }
        try? FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: audioURL(key).path)
    }

    private func evict() {
        let victims: [String] = index.withLock { index in
            var total = index.values.reduce(0) { $0 + $1.bytes }
            var victims: [String] = []
            for (key, entry) in index.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) where total > maxBytes {
                total -= entry.bytes
                victims.append(key)
                index[key] = nil
            }
            return victims
        }
        for key in victims {
            try? FileManager.default.removeItem(at: audioURL(key))
            try? FileManager.default.removeItem(at: metadataURL(key))
        }
    }

    func audioURL(_ key: String) -> URL {
        directory.appendingPathComponent(String(key.prefix(2))).appendingPathComponent("\(key).mp3")
    }

    private func metadataURL(_ key: String) -> URL {
        directory.appendingPathComponent(String(key.prefix(2))).appendingPathComponent("\(key).json")
    }

    private static func writeAtomically(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        try data.write(to: temporary)
        // rename(2) replaces the destination atomically (FileManager's replace insists it already exists).
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

    /// Rebuilds the index from the files, using modification times as last use.
    private static func scan(_ directory: URL) -> [String: Entry] {
        var entries: [String: Entry] = [:]
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: keys) else { return [:] }
        for case let url as URL in enumerator where url.pathExtension == "mp3" {
            let key = url.deletingPathExtension().lastPathComponent
            guard isKey(key), let values = try? url.resourceValues(forKeys: Set(keys)) else { continue }
            entries[key] = Entry(bytes: values.fileSize ?? 0, lastUsed: values.contentModificationDate ?? .distantPast)
        }
        return entries
    }
}
