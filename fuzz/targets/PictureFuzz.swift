// libFuzzer target: the picture cleaner (libpng, libjpeg-turbo, libwebp behind CImageCodecs). Whatever the
// bytes, it refuses them with a PictureError or answers a picture of the format it identified, within the
// limits, that cleans again to the same size.
import Pictures

// Small limits keep each input fast; the paths are the same as with the standard ones.
let fuzzLimits = PictureLimits(maxBytes: 1 << 20, maxPixels: 4_000_000, maxSide: 4_000, largeSide: 400, phoneSide: 200)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPicture(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let clean: CleanPicture
    do {
        clean = try PictureCleaner.clean(bytes, limits: fuzzLimits)
    } catch {
        return 0
    }
    precondition(PictureFormat.identify(bytes) == clean.large.format, "cleaned into another format")
    precondition(PictureFormat.identify(clean.large.bytes) == clean.large.format, "the output is not what it says")
    precondition(max(clean.large.width, clean.large.height) <= fuzzLimits.largeSide, "not scaled down")
    precondition(clean.sourceWidth * clean.sourceHeight <= fuzzLimits.maxPixels, "over the pixel limit")
    if let phone = clean.phone { precondition(max(phone.width, phone.height) <= fuzzLimits.phoneSide, "phone copy too big") }
    guard let again = try? PictureCleaner.clean(clean.large.bytes, limits: fuzzLimits) else {
        preconditionFailure("a cleaned picture does not clean again")
    }
    precondition(again.large.width == clean.large.width && again.large.height == clean.large.height, "cleaning again changed its size")
    return 0
}
