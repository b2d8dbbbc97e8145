/// A picture that passed every check, re-encoded from its pixels alone (no EXIF, GPS, XMP, text or ICC),
/// at most `PictureLimits.largeSide` on its longest side, with a smaller copy for phones when it is larger
/// than they need.
public struct CleanPicture: Sendable, Equatable {
    /// One encoded size of the picture.
    public struct Rendition: Sendable, Equatable {
        public var format: PictureFormat
        public var width: Int
        public var height: Int
        public var bytes: [UInt8]

        public init(format: PictureFormat, width: Int, height: Int, bytes: [UInt8]) {
            self.format = format
            self.width = width
            self.height = height
            self.bytes = bytes
        }
    }

    public var large: Rendition
    /// nil when `large` is already small enough for a phone.
    public var phone: Rendition?
    /// The source's dimensions, before any scaling.
    public var sourceWidth: Int
    public var sourceHeight: Int

    public init(large: Rendition, phone: Rendition?, sourceWidth: Int, sourceHeight: Int) {
        self.large = large
        self.phone = phone
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
    }

    /// Bytes as stored: both renditions.
    public var storedBytes: Int { large.bytes.count + (phone?.bytes.count ?? 0) }
}
