/// Why a picture was refused. Each has a stable code (the pages and the CLI word it) and an English sentence.
public enum PictureError: Error, Sendable, Equatable {
    case empty
    case tooManyBytes(bytes: Int, limit: Int)
    /// Not PNG, JPEG or WebP; `looksLike` names what it seems to be ("svg", "gif", "text"), when known.
    case unsupportedFormat(looksLike: String?)
    case tooManyPixels(width: Int, height: Int, limitPixels: Int, limitSide: Int)
    /// The file is cut short or damaged; `reason` is the library's (English, for logs and the CLI).
    case damaged(format: PictureFormat, reason: String)
    /// A feature refused on purpose, such as animation.
    case unsupportedFeature(format: PictureFormat, reason: String)
    case outOfMemory

    public var code: String {
        switch self {
        case .empty: "picture_empty"
        case .tooManyBytes: "picture_too_large"
        case .unsupportedFormat: "picture_unsupported_format"
        case .tooManyPixels: "picture_too_many_pixels"
        case .damaged: "picture_damaged"
        case .unsupportedFeature: "picture_unsupported_feature"
        case .outOfMemory: "picture_out_of_memory"
        }
    }

    public var message: String {
        switch self {
        case .empty:
            return "The picture file is empty."
        case .tooManyBytes(let bytes, let limit):
            return "The picture is \(bytes) bytes; at most \(limit) bytes are allowed."
        case .unsupportedFormat(let looksLike):
            let what = looksLike.map { kind in
                kind == "text" ? " (it looks like text)" : " (it looks like \(kind == "svg" ? "an" : "a") \(kind.uppercased()) file)"
            } ?? ""
            return "The file is not a PNG, JPEG or WebP picture\(what)."
        case .tooManyPixels(let width, let height, let limitPixels, let limitSide):
            return "The picture is \(width) × \(height) pixels; at most \(limitPixels) pixels and \(limitSide) on a side are allowed."
        case .damaged(let format, let reason):
            return "The \(format.rawValue.uppercased()) picture is damaged or cut short: \(reason)."
        case .unsupportedFeature(let format, let reason):
            return "This \(format.rawValue.uppercased()) picture cannot be used: \(reason)."
        case .outOfMemory:
            return "There was not enough memory to read the picture."
        }
    }
}
