import CImageCodecs
import Foundation
@testable import Pictures

/// Real picture files made in the test: encoded by the same libraries, then damaged, inflated or
/// given metadata byte by byte, as a bad upload would be.
enum TestPictures {
    /// A picture with a gradient, a few solid squares, and optionally a transparent corner.
    static func pixels(width: Int, height: Int, transparentCorner: Bool = false) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                bytes[i] = UInt8(x * 255 / max(1, width - 1))
                bytes[i + 1] = UInt8(y * 255 / max(1, height - 1))
                bytes[i + 2] = ((x / 32 + y / 32) % 2 == 0) ? 60 : 180
                bytes[i + 3] = transparentCorner && x < width / 4 && y < height / 4 ? 0 : 255
            }
        }
        return bytes
    }

    static func encode(_ format: PictureFormat, width: Int, height: Int, transparentCorner: Bool = false, lossless: Bool = false) -> [UInt8] {
        var rgba = pixels(width: width, height: height, transparentCorner: transparentCorner)
        return rgba.withUnsafeMutableBufferPointer { pixels in
            var image = sc_image(pixels: pixels.baseAddress, width: UInt32(width), height: UInt32(height), has_alpha: transparentCorner ? 1 : 0)
            var buffer = sc_buffer()
            let status: sc_image_status
            switch format {
            case .png: status = sc_png_encode(&image, &buffer)
            case .jpeg: status = sc_jpeg_encode(&image, 92, &buffer)
            case .webp: status = sc_webp_encode(&image, lossless ? -1 : 90, &buffer)
            }
            precondition(status == SC_IMAGE_OK)
            defer { sc_buffer_free(&buffer) }
            return Array(UnsafeBufferPointer(start: buffer.bytes, count: buffer.length))
        }
    }

    /// Decodes with the library directly (no limits beyond the test's), for comparing what was stored.
    static func decode(_ bytes: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard let format = PictureFormat.identify(bytes) else { return nil }
        var image = sc_image()
        let limits = sc_image_limits(max_pixels: 100_000_000, max_side: 20_000)
        let status = bytes.withUnsafeBufferPointer { buffer in
            switch format {
            case .png: sc_png_decode(buffer.baseAddress, buffer.count, limits, &image, nil, 0)
            case .jpeg: sc_jpeg_decode(buffer.baseAddress, buffer.count, limits, &image, nil, 0)
            case .webp: sc_webp_decode(buffer.baseAddress, buffer.count, limits, &image, nil, 0)
            }
        }
        guard status == SC_IMAGE_OK else { return nil }
        defer { sc_image_free(&image) }
        return (Int(image.width), Int(image.height), Array(UnsafeBufferPointer(start: image.pixels, count: Int(image.width * image.height * 4))))
    }

    // MARK: PNG chunks

    static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian32(UInt32(data.count)) + typeBytes + data + bigEndian32(crc32(typeBytes + data))
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A PNG whose header claims width × height (8-bit RGB) followed by a tiny, valid start of image data:
    /// a few hundred bytes that would ask for width × height × 4 bytes if decoded.
    static func pngBomb(width: UInt32, height: UInt32) -> [UInt8] {
        let ihdr = bigEndian32(width) + bigEndian32(height) + [8, 2, 0, 0, 0]
        // zlib stream: a stored block of zero bytes (filter "none", black pixels), not finished.
        let zeros = [UInt8](repeating: 0, count: 256)
        let idat: [UInt8] = [0x78, 0x01, 0x00, 0x00, 0x01, 0xFF, 0xFE] + zeros
        return pngSignature + pngChunk("IHDR", ihdr) + pngChunk("IDAT", idat) + pngChunk("IEND", [])
    }

    /// A PNG with text, EXIF and time chunks inserted before its image data.
    static func pngWithMetadata(width: Int, height: Int) -> [UInt8] {
        let png = encode(.png, width: width, height: height)
        // Signature (8) + IHDR chunk (25).
        let head = Array(png[0..<33])
        let rest = Array(png[33...])
        let text = pngChunk("tEXt", Array("Comment\u{0}taken at 51.5N 0.1W by Sam".utf8))
        let itxt = pngChunk("iTXt", Array("XML:com.adobe.xmp\u{0}\u{0}\u{0}\u{0}\u{0}<x:xmpmeta>secret</x:xmpmeta>".utf8))
        let exif = pngChunk("eXIf", Array(exifGPS().dropFirst(6)))
        return head + text + itxt + exif + rest
    }

    // MARK: JPEG

    /// An APP1 EXIF payload ("Exif\0\0" + little-endian TIFF) whose IFD0 points to a GPS IFD holding
    /// latitude 51° 30' N and longitude 0° 7' W.
    static func exifGPS() -> [UInt8] {
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        func entry(_ tag: UInt16, _ type: UInt16, _ count: UInt32, _ value: UInt32) -> [UInt8] { le16(tag) + le16(type) + le32(count) + le32(value) }
        let ifd0Offset: UInt32 = 8
        let gpsOffset: UInt32 = ifd0Offset + 2 + 12 + 4
        let gpsEntries: UInt32 = 4
        let rationalsOffset = gpsOffset + 2 + 12 * gpsEntries + 4
        var tiff: [UInt8] = Array("II".utf8) + le16(42) + le32(ifd0Offset)
        tiff += le16(1) + entry(0x8825, 4, 1, gpsOffset) + le32(0)
        tiff += le16(UInt16(gpsEntries))
        tiff += entry(0x0001, 2, 2, UInt32(Character("N").asciiValue!))  // GPSLatitudeRef "N\0", inline
        tiff += entry(0x0002, 5, 3, rationalsOffset)                      // GPSLatitude
        tiff += entry(0x0003, 2, 2, UInt32(Character("W").asciiValue!))  // GPSLongitudeRef
        tiff += entry(0x0004, 5, 3, rationalsOffset + 24)                 // GPSLongitude
        tiff += le32(0)
        for (numerator, denominator) in [(51, 1), (30, 1), (0, 1), (0, 1), (7, 1), (0, 1)] as [(UInt32, UInt32)] {
            tiff += le32(numerator) + le32(denominator)
        }
        return Array("Exif".utf8) + [0, 0] + tiff
    }

    /// A JPEG from a phone's camera, as far as metadata goes: EXIF with GPS, and an XMP packet.
    static func jpegWithGPS(width: Int, height: Int) -> [UInt8] {
        let jpeg = encode(.jpeg, width: width, height: height)
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            let length = payload.count + 2
            return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        let exif = segment(0xE1, exifGPS())
        let xmp = segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\u{0}<x:xmpmeta><exif:GPSLatitude>51,30N</exif:GPSLatitude></x:xmpmeta>".utf8))
        return [0xFF, 0xD8] + exif + xmp + Array(jpeg.dropFirst(2))
    }

    /// A real JPEG whose frame header (SOF) is rewritten to claim width × height.
    static func jpegBomb(width: UInt16, height: UInt16) -> [UInt8] {
        var jpeg = encode(.jpeg, width: 16, height: 16)
        var i = 2
        while i + 9 < jpeg.count {
            guard jpeg[i] == 0xFF else { i += 1; continue }
            let marker = jpeg[i + 1]
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if (0xC0...0xC2).contains(marker) {
                jpeg[i + 5] = UInt8(height >> 8); jpeg[i + 6] = UInt8(height & 0xFF)
                jpeg[i + 7] = UInt8(width >> 8); jpeg[i + 8] = UInt8(width & 0xFF)
                return jpeg
            }
            i += 2 + length
        }
        preconditionFailure("no SOF in the test JPEG")
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return true }
        }
        return false
    }

    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pictures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }
}
