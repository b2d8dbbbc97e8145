import CImageCodecs

/// Checks a picture's bytes with the real decoders (libpng, libjpeg-turbo, libwebp) and re-encodes it
/// clean. Synchronous and CPU-bound (a large photo takes a good fraction of a second): call it from a
/// dedicated thread (StoreThreads), never from Swift's cooperative pool.
public enum PictureCleaner {
    public static let jpegQuality: Int32 = 88
    public static let webpQuality: Int32 = 85

    /// The dimensions a picture's header claims, read without decoding any pixel.
    public static func dimensions(of bytes: [UInt8]) throws(PictureError) -> (format: PictureFormat, width: Int, height: Int) {
        guard !bytes.isEmpty else { throw .empty }
        guard let format = PictureFormat.identify(bytes) else {
            throw .unsupportedFormat(looksLike: PictureFormat.describeRefused(bytes))
        }
        var width: UInt32 = 0
        var height: UInt32 = 0
        let status = bytes.withUnsafeBufferPointer { buffer in
            switch format {
            case .png: sc_png_header(buffer.baseAddress, buffer.count, &width, &height)
            case .jpeg: sc_jpeg_header(buffer.baseAddress, buffer.count, &width, &height)
            case .webp: sc_webp_header(buffer.baseAddress, buffer.count, &width, &height)
            }
        }
        guard status == SC_IMAGE_OK else { throw .damaged(format: format, reason: "its header cannot be read") }
        return (format, Int(width), Int(height))
    }

    /// Identifies, checks the limits from the header, decodes fully, and re-encodes in the same format.
    public static func clean(_ bytes: [UInt8], limits: PictureLimits = .standard) throws(PictureError) -> CleanPicture {
        guard bytes.count <= limits.maxBytes else { throw .tooManyBytes(bytes: bytes.count, limit: limits.maxBytes) }
        let header = try dimensions(of: bytes)
        try check(width: header.width, height: header.height, limits: limits)
        let format = header.format
        let cLimits = sc_image_limits(max_pixels: UInt64(limits.maxPixels), max_side: UInt32(limits.maxSide))
        var image = sc_image()
        var reason = [CChar](repeating: 0, count: 256)
        let status = bytes.withUnsafeBufferPointer { buffer in
            reason.withUnsafeMutableBufferPointer { message in
                switch format {
                case .png: sc_png_decode(buffer.baseAddress, buffer.count, cLimits, &image, message.baseAddress, message.count)
                case .jpeg: sc_jpeg_decode(buffer.baseAddress, buffer.count, cLimits, &image, message.baseAddress, message.count)
                case .webp: sc_webp_decode(buffer.baseAddress, buffer.count, cLimits, &image, message.baseAddress, message.count)
                }
            }
        }
        defer { sc_image_free(&image) }
        let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch status {
        case SC_IMAGE_OK: break
        case SC_IMAGE_TOO_MANY_PIXELS:
            throw .tooManyPixels(width: header.width, height: header.height, limitPixels: limits.maxPixels, limitSide: limits.maxSide)
        case SC_IMAGE_UNSUPPORTED: throw .unsupportedFeature(format: format, reason: text.isEmpty ? "unsupported" : text)
        case SC_IMAGE_NO_MEMORY: throw .outOfMemory
        default: throw .damaged(format: format, reason: text.isEmpty ? "it cannot be decoded" : text)
        }

        let large = try rendition(of: &image, fitting: limits.largeSide, format: format)
        let phone = max(large.width, large.height) > limits.phoneSide
            ? try rendition(of: &image, fitting: limits.phoneSide, format: format)
            : nil
        return CleanPicture(large: large, phone: phone, sourceWidth: Int(image.width), sourceHeight: Int(image.height))
    }

    static func check(width: Int, height: Int, limits: PictureLimits) throws(PictureError) {
        if width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels || width == 0 || height == 0 {
            throw .tooManyPixels(width: width, height: height, limitPixels: limits.maxPixels, limitSide: limits.maxSide)
        }
    }

    /// The size that fits `side` on the longest side, keeping the aspect ratio (never scaled up).
    public static func fitted(width: Int, height: Int, side: Int) -> (width: Int, height: Int) {
        let longest = max(width, height)
        guard longest > side else { return (width, height) }
        let scaledWidth = max(1, (width * side + longest / 2) / longest)
        let scaledHeight = max(1, (height * side + longest / 2) / longest)
        return (min(scaledWidth, width), min(scaledHeight, height))
    }

    private static func rendition(of image: inout sc_image, fitting side: Int, format: PictureFormat) throws(PictureError) -> CleanPicture.Rendition {
        let size = fitted(width: Int(image.width), height: Int(image.height), side: side)
        var scaled = sc_image()
        defer { sc_image_free(&scaled) }
        if size.width != Int(image.width) || size.height != Int(image.height) {
            guard sc_image_scale(&image, UInt32(size.width), UInt32(size.height), &scaled) == SC_IMAGE_OK else { throw .outOfMemory }
        }
        var buffer = sc_buffer()
        defer { sc_buffer_free(&buffer) }
        let status: sc_image_status = scaled.pixels != nil
            ? encode(&scaled, format: format, into: &buffer)
            : encode(&image, format: format, into: &buffer)
        guard status == SC_IMAGE_OK, let start = buffer.bytes else { throw .outOfMemory }
        return CleanPicture.Rendition(format: format, width: size.width, height: size.height, bytes: Array(UnsafeBufferPointer(start: start, count: buffer.length)))
    }

    private static func encode(_ image: inout sc_image, format: PictureFormat, into buffer: inout sc_buffer) -> sc_image_status {
        switch format {
        case .png: sc_png_encode(&image, &buffer)
        case .jpeg: sc_jpeg_encode(&image, jpegQuality, &buffer)
        case .webp: sc_webp_encode(&image, webpQuality, &buffer)
        }
    }
}
