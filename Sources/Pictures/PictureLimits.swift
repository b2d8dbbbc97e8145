/// How big a picture and a story's pictures may be (docs/stories.md, "Pictures").
///
/// The pixel limits are checked against the header before anything is decoded, so a small file that
/// claims to be 30,000 × 30,000 pixels (a decompression bomb) never gets its 3.6 GB allocated.
public struct PictureLimits: Sendable, Equatable {
    /// Bytes of one picture file, read only after its size is known to be within this.
    public var maxBytes: Int
    /// Pixels of one picture (width × height): 25 MP takes a 24-megapixel camera's photo, 100 MB decoded.
    public var maxPixels: Int
    /// Either side, in pixels.
    public var maxSide: Int
    /// Pictures in one story (sentence, question and option pictures together, each distinct file once).
    public var maxPerStory: Int
    /// Bytes of a story's pictures as stored (cleaned, both sizes), in the room store.
    public var maxStoredBytesPerStory: Int
    /// The longest side kept: the projector shows a picture in half of a 1920-pixel-wide screen.
    public var largeSide: Int
    /// The longest side of the copy for phones (a 390-point-wide phone at 2x or 3x, shown at most 260 points tall).
    public var phoneSide: Int

    public init(
        maxBytes: Int = 8 * 1_048_576,
        maxPixels: Int = 25_000_000,
        maxSide: Int = 10_000,
        maxPerStory: Int = 64,
        maxStoredBytesPerStory: Int = 32 * 1_048_576,
        largeSide: Int = 1_600,
        phoneSide: Int = 800
    ) {
        self.maxBytes = maxBytes
        self.maxPixels = maxPixels
        self.maxSide = maxSide
        self.maxPerStory = maxPerStory
        self.maxStoredBytesPerStory = maxStoredBytesPerStory
        self.largeSide = largeSide
        self.phoneSide = phoneSide
    }

    public static let standard = PictureLimits()
}
