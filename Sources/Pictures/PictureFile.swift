import Foundation

/// Reads a picture file from disk, refusing one over the byte limit before reading it.
public enum PictureFile {
    public enum ReadError: Error, Sendable, Equatable {
        case missing(path: String)
        case unreadable(path: String, reason: String)
        case picture(PictureError)
    }

    /// The file's bytes, or why not. A 50 MB file is refused from its size; only its size is looked at.
    public static func read(path: String, limits: PictureLimits = .standard) throws(ReadError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .missing(path: path)
        }
        let size: Int
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw .unreadable(path: path, reason: "\(error.localizedDescription)")
        }
        guard size <= limits.maxBytes else { throw .picture(.tooManyBytes(bytes: size, limit: limits.maxBytes)) }
        guard size > 0 else { throw .picture(.empty) }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable(path: path, reason: "cannot be opened") }
        defer { try? handle.close() }
        do {
            // One more byte than allowed: a file that grew after its size was read is still refused.
            let data = try handle.read(upToCount: limits.maxBytes + 1) ?? Data()
            guard data.count <= limits.maxBytes else { throw ReadError.picture(.tooManyBytes(bytes: data.count, limit: limits.maxBytes)) }
            return [UInt8](data)
        } catch let error as ReadError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: "\(error.localizedDescription)")
        }
    }
}
