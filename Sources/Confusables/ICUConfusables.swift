import CICU
import StoryCircleCore

/// Unicode's confusable detection (TR39) and NFKC_Casefold from ICU (Debian's libicu): what
/// `Nickname.matchingKeys` folds nicknames with in the server. The data is ICU's copy of Unicode's
/// confusables.txt, not a table of this project's.
///
/// One checker serves every room: ICU documents its functions that take a `const USpoofChecker` (the
/// skeleton among them) and its normalisers as safe to call from several threads at once, and nothing
/// here changes the checker after it is opened.
public final class ICUConfusables: ConfusableSkeleton, @unchecked Sendable {
    private let checker: UnsafeMutableRawPointer
    private let casefold: UnsafeRawPointer

    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Opens ICU's checker; fails when ICU's data cannot be loaded (a broken installation).
    public init() throws(Unavailable) {
        var status = sc_icu_ok
        let normalizer = sc_nfkc_casefold(&status)
        guard sc_icu_failed(status) == 0, let normalizer else {
            throw Unavailable(description: "ICU's NFKC_Casefold data could not be loaded (\(String(cString: sc_icu_error_name(status))))")
        }
        let opened = sc_spoof_open(&status)
        guard sc_icu_failed(status) == 0, let opened else {
            throw Unavailable(description: "ICU's confusables data could not be loaded (\(String(cString: sc_icu_error_name(status))))")
        }
        casefold = normalizer
        checker = opened
    }

    deinit {
        sc_spoof_close(checker)
    }

    public func foldCase(_ text: String) -> String {
        transform(text) { source, length, destination, capacity, status in
            sc_normalize(casefold, source, length, destination, capacity, status)
        }
    }

    public func skeleton(_ text: String) -> String {
        transform(text) { source, length, destination, capacity, status in
            sc_spoof_skeleton(checker, source, length, destination, capacity, status)
        }
    }

    /// Runs an ICU string function over `text` in UTF-16, growing the output once if it did not fit.
    /// A string ICU cannot handle (it never fails on valid UTF-16, which a Swift string always is) comes
    /// back unchanged, so a name is still compared exactly.
    private func transform(
        _ text: String,
        _ call: (UnsafePointer<UInt16>, Int32, UnsafeMutablePointer<UInt16>?, Int32, UnsafeMutablePointer<Int32>) -> Int32
    ) -> String {
        let source = Array(text.utf16)
        guard !source.isEmpty, source.count < Int32.max / 8 else { return text }
        var capacity = source.count * 2 + 16
        for _ in 0..<2 {
            var status = sc_icu_ok
            var output = [UInt16](repeating: 0, count: capacity)
            let length = source.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    call(input.baseAddress!, Int32(input.count), out.baseAddress, Int32(out.count), &status)
                }
            }
            if sc_icu_overflowed(status) != 0 {
                capacity = Int(length)
                continue
            }
            guard sc_icu_failed(status) == 0, length >= 0 else { return text }
            return String(decoding: output[0..<Int(length)], as: UTF16.self)
        }
        return text
    }
}
