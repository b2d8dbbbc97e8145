/// The picture formats a story may use, told by their first bytes and never by a file's extension.
public enum PictureFormat: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case png
    case jpeg
    case webp

    public var mimeType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .webp: "image/webp"
        }
    }

    /// The format whose signature `bytes` start with, or nil (SVG, GIF, text, anything else).
    public static func identify<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> PictureFormat? {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return .webp }
        return nil
    }

    /// What refused bytes look like, to word the refusal ("an SVG drawing", "a GIF"); nil when unknown.
    public static func describeRefused<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        let head = Array(bytes.prefix(512))
        if head.starts(with: Array("GIF8".utf8)) { return "gif" }
        if head.starts(with: [0x42, 0x4D]) { return "bmp" }
        if head.starts(with: [0x49, 0x49, 0x2A, 0x00]) || head.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return "tiff" }
        if head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8) { return "heif" }
        let text = String(decoding: head, as: UTF8.self).lowercased()
        if text.contains("<svg") || (text.contains("<?xml") && text.contains("svg")) { return "svg" }
        if head.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) || $0 >= 0x80 }) { return "text" }
        return nil
    }
}
