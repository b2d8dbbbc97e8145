import CImageCodecs
import Foundation
import Testing
@testable import Pictures

/// Every bad picture the issue lists, made for real, refused with its reason or cleaned; good ones survive.
@Suite("Picture cleaner")
struct PictureCleanerTests {
    // MARK: Refused

    @Test func aTruncatedPNGIsRefusedAsDamaged() {
        let png = TestPictures.encode(.png, width: 120, height: 90)
        for cut in [png.count / 2, png.count - 13, 40] {
            #expect {
                try PictureCleaner.clean(Array(png.prefix(cut)))
            } throws: { error in
                guard case PictureError.damaged(format: .png, _) = error else { return false }
                return true
            }
        }
    }

    @Test func aTruncatedJPEGAndWebPAreRefusedAsDamaged() {
        let jpeg = TestPictures.encode(.jpeg, width: 120, height: 90)
        #expect(throws: PictureError.self) { try PictureCleaner.clean(Array(jpeg.prefix(jpeg.count * 2 / 3))) }
        let caught = Result { try PictureCleaner.clean(Array(jpeg.prefix(jpeg.count * 2 / 3))) }
        guard case .failure(PictureError.damaged(format: .jpeg, let reason)) = caught else {
            Issue.record("a cut JPEG got \(caught)"); return
        }
        #expect(reason.contains("ends before"))
        let webp = TestPictures.encode(.webp, width: 120, height: 90)
        #expect(Result { try PictureCleaner.clean(Array(webp.prefix(webp.count / 2))) }.failureCode == "picture_damaged")
    }

    @Test func aTextFileNamedPNGIsRefusedAsNotAPicture() throws {
        let path = try TestPictures.temporaryFile("dragon.png", Array("This is my dragon, it is green.\n".utf8))
        let bytes = try PictureFile.read(path: path)
        #expect(throws: PictureError.unsupportedFormat(looksLike: "text")) { try PictureCleaner.clean(bytes) }
    }

    @Test func anSVGIsRefusedEvenNamedPNG() {
        let svg = Array(#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><circle r="5"/></svg>"#.utf8)
        #expect(throws: PictureError.unsupportedFormat(looksLike: "svg")) { try PictureCleaner.clean(svg) }
        let bare = Array(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8)
        #expect(throws: PictureError.unsupportedFormat(looksLike: "svg")) { try PictureCleaner.clean(bare) }
        #expect(PictureError.unsupportedFormat(looksLike: "svg").message == "The file is not a PNG, JPEG or WebP picture (it looks like an SVG file).")
    }

    @Test func otherFormatsAndEmptyFilesAreRefused() {
        #expect(throws: PictureError.unsupportedFormat(looksLike: "gif")) { try PictureCleaner.clean(Array("GIF89a".utf8) + [0, 1, 0, 1]) }
        #expect(throws: PictureError.empty) { try PictureCleaner.clean([]) }
        #expect(throws: PictureError.unsupportedFormat(looksLike: nil)) { try PictureCleaner.clean([0x00, 0x01, 0x02, 0xFE, 0xFF]) }
    }

    @Test func aFiftyMegabyteFileIsRefusedFromItsSizeAlone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pictures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("huge.png").path
        // A real 50 MB file on disk (a PNG signature, then 50 MB of data).
        let fifty = 50 * 1_048_576
        #expect(FileManager.default.createFile(atPath: path, contents: Data(TestPictures.pngSignature)))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(fifty))
        try handle.close()
        #expect(throws: PictureFile.ReadError.picture(.tooManyBytes(bytes: fifty, limit: PictureLimits.standard.maxBytes))) {
            try PictureFile.read(path: path)
        }
        // And bytes already in memory (an upload) are refused before they are looked at.
        let bytes = TestPictures.pngSignature + [UInt8](repeating: 0, count: fifty)
        #expect(throws: PictureError.tooManyBytes(bytes: bytes.count, limit: PictureLimits.standard.maxBytes)) { try PictureCleaner.clean(bytes) }
    }

    @Test func aMissingFileSaysSo() {
        #expect(throws: PictureFile.ReadError.missing(path: "/nonexistent/owl.png")) { try PictureFile.read(path: "/nonexistent/owl.png") }
    }

    @Test func a30000By30000PNGBombIsRefusedFromItsHeader() {
        let bomb = TestPictures.pngBomb(width: 30_000, height: 30_000)
        #expect(bomb.count < 400)
        let expected = PictureError.tooManyPixels(width: 30_000, height: 30_000, limitPixels: 25_000_000, limitSide: 10_000)
        #expect(throws: expected) { try PictureCleaner.clean(bomb) }
        // The C decoder refuses it by itself too, before allocating (3.6 GB would fail or be killed here).
        var image = sc_image()
        let status = bomb.withUnsafeBufferPointer {
            sc_png_decode($0.baseAddress, $0.count, sc_image_limits(max_pixels: 25_000_000, max_side: 40_000), &image, nil, 0)
        }
        #expect(status == SC_IMAGE_TOO_MANY_PIXELS)
        #expect(image.pixels == nil)
    }

    @Test func aBombWithinEachSideButOverThePixelsIsRefused() {
        let bomb = TestPictures.pngBomb(width: 9_000, height: 9_000)
        #expect(throws: PictureError.tooManyPixels(width: 9_000, height: 9_000, limitPixels: 25_000_000, limitSide: 10_000)) {
            try PictureCleaner.clean(bomb)
        }
    }

    @Test func a30000By30000JPEGBombIsRefusedFromItsHeader() {
        let bomb = TestPictures.jpegBomb(width: 30_000, height: 30_000)
        #expect(throws: PictureError.tooManyPixels(width: 30_000, height: 30_000, limitPixels: 25_000_000, limitSide: 10_000)) {
            try PictureCleaner.clean(bomb)
        }
        var image = sc_image()
        let status = bomb.withUnsafeBufferPointer {
            sc_jpeg_decode($0.baseAddress, $0.count, sc_image_limits(max_pixels: 25_000_000, max_side: 40_000), &image, nil, 0)
        }
        #expect(status == SC_IMAGE_TOO_MANY_PIXELS)
        #expect(image.pixels == nil)
    }

    @Test func aPNGWhoseDataIsShortOfItsHeaderIsDamaged() {
        // Within the limits, so it is decoded: the data runs out long before 500 × 500 pixels.
        #expect(Result { try PictureCleaner.clean(TestPictures.pngBomb(width: 500, height: 500)) }.failureCode == "picture_damaged")
    }

    // MARK: Cleaned

    @Test func aJPEGWithGPSIsStoredWithoutAnyEXIFOrXMP() throws {
        let input = TestPictures.jpegWithGPS(width: 200, height: 150)
        #expect(TestPictures.contains(input, Array("Exif".utf8)))
        #expect(TestPictures.contains(input, Array("GPSLatitude".utf8)))
        let clean = try PictureCleaner.clean(input)
        let output = clean.large.bytes
        #expect(clean.large.format == .jpeg)
        #expect(!TestPictures.contains(output, Array("Exif".utf8)))
        #expect(!TestPictures.contains(output, Array("GPS".utf8)))
        #expect(!TestPictures.contains(output, Array("xmpmeta".utf8)))
        #expect(!TestPictures.contains(output, [0xFF, 0xE1]), "an APP1 (EXIF/XMP) segment is left")
        // The EXIF's rational 51/1 (little-endian) is nowhere either.
        #expect(!TestPictures.contains(output, [51, 0, 0, 0, 1, 0, 0, 0]))
        let decoded = try #require(TestPictures.decode(output))
        #expect(decoded.width == 200 && decoded.height == 150)
    }

    @Test func aPNGWithTextAndEXIFChunksIsStoredWithoutThem() throws {
        let input = TestPictures.pngWithMetadata(width: 64, height: 48)
        #expect(TestPictures.contains(input, Array("tEXt".utf8)))
        // The metadata does not hurt the decoding: libpng reads past it.
        let clean = try PictureCleaner.clean(input)
        for chunk in ["tEXt", "iTXt", "zTXt", "eXIf", "tIME", "iCCP", "Sam", "secret"] {
            #expect(!TestPictures.contains(clean.large.bytes, Array(chunk.utf8)), "\(chunk) survived")
        }
        let decoded = try #require(TestPictures.decode(clean.large.bytes))
        #expect(decoded.rgba == TestPictures.pixels(width: 64, height: 48))
    }

    @Test func aPNGRoundTripKeepsEveryPixelAndTransparency() throws {
        let input = TestPictures.encode(.png, width: 300, height: 200, transparentCorner: true)
        let clean = try PictureCleaner.clean(input)
        #expect(clean.large.format == .png && clean.large.width == 300 && clean.large.height == 200)
        #expect(clean.phone == nil)
        let decoded = try #require(TestPictures.decode(clean.large.bytes))
        #expect(decoded.rgba == TestPictures.pixels(width: 300, height: 200, transparentCorner: true))
    }

    @Test func aJPEGRoundTripStaysClose() throws {
        let input = TestPictures.encode(.jpeg, width: 320, height: 240)
        let clean = try PictureCleaner.clean(input)
        #expect(clean.large.format == .jpeg && clean.large.width == 320 && clean.large.height == 240)
        let decoded = try #require(TestPictures.decode(clean.large.bytes))
        #expect(meanDifference(decoded.rgba, TestPictures.pixels(width: 320, height: 240)) < 8)
    }

    @Test func aWebPRoundTripStaysCloseLossyAndLossless() throws {
        for lossless in [false, true] {
            let input = TestPictures.encode(.webp, width: 256, height: 160, transparentCorner: true, lossless: lossless)
            #expect(PictureFormat.identify(input) == .webp)
            let clean = try PictureCleaner.clean(input)
            #expect(clean.large.format == .webp && clean.large.width == 256 && clean.large.height == 160)
            let decoded = try #require(TestPictures.decode(clean.large.bytes))
            #expect(meanDifference(decoded.rgba, TestPictures.pixels(width: 256, height: 160, transparentCorner: true)) < 10)
            // The transparent corner stays transparent.
            #expect(decoded.rgba[3] == 0)
        }
    }

    @Test func aLargePictureIsScaledDownWithAPhoneCopy() throws {
        let input = TestPictures.encode(.jpeg, width: 2_400, height: 1_200)
        let clean = try PictureCleaner.clean(input)
        #expect(clean.sourceWidth == 2_400 && clean.sourceHeight == 1_200)
        #expect(clean.large.width == 1_600 && clean.large.height == 800)
        let phone = try #require(clean.phone)
        #expect(phone.width == 800 && phone.height == 400)
        #expect(phone.bytes.count < clean.large.bytes.count)
        let decoded = try #require(TestPictures.decode(phone.bytes))
        #expect(decoded.width == 800 && decoded.height == 400)
        // A box filter of a gradient is still a gradient: the left edge dark red, the right bright.
        #expect(decoded.rgba[0] < 30)
        #expect(decoded.rgba[(400 * 800 - 1) * 4] > 220)
    }

    @Test func aPortraitPictureFitsByItsHeight() {
        #expect(PictureCleaner.fitted(width: 1_000, height: 3_000, side: 800) == (267, 800))
        #expect(PictureCleaner.fitted(width: 500, height: 300, side: 800) == (500, 300))
        #expect(PictureCleaner.fitted(width: 10_000, height: 1, side: 800) == (800, 1))
    }

    @Test func identificationIsByBytesNeverByName() throws {
        // A JPEG named .png is a JPEG.
        let jpeg = TestPictures.encode(.jpeg, width: 10, height: 10)
        let path = try TestPictures.temporaryFile("cat.png", jpeg)
        let clean = try PictureCleaner.clean(try PictureFile.read(path: path))
        #expect(clean.large.format == .jpeg)
    }

    /// Mean difference per colour channel over the pixels that are opaque in `expected` (a transparent
    /// pixel's colour is free for an encoder to change).
    func meanDifference(_ actual: [UInt8], _ expected: [UInt8]) -> Double {
        precondition(actual.count == expected.count)
        var total = 0
        var channels = 0
        for pixel in stride(from: 0, to: expected.count, by: 4) where expected[pixel + 3] == 255 {
            for channel in 0..<3 { total += abs(Int(actual[pixel + channel]) - Int(expected[pixel + channel])) }
            channels += 3
        }
        return Double(total) / Double(channels)
    }
}

extension Result where Failure == any Error {
    init(catching body: () throws -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }

    var failureCode: String? {
        if case .failure(let error as PictureError) = self { return error.code }
        return nil
    }
}
