import StoryCircleCore

/// A pure stand-in for ICU's confusables (`ICUConfusables`) in the core's tests (the shell's have the same in StoryCircleTesting): ASCII and Cyrillic
/// look-alikes enough for "P00py Pants", "Аda" and "Ida"/"lda", nothing else. The real folding is tested
/// with ICU's data in ConfusablesTests.
struct LookalikeTable: ConfusableSkeleton {
    init() {}

    func foldCase(_ text: String) -> String {
        text.lowercased()
    }

    func skeleton(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.flatMap { Self.prototypes[$0] ?? [$0] }))
    }

    /// Each look-alike's prototype as TR39's data has it (`0` to `O`, Cyrillic to Latin); `é` decomposed,
    /// as a skeleton is in NFD.
    private static let prototypes: [Unicode.Scalar: [Unicode.Scalar]] = [
        "0": ["O"], "1": ["l"], "I": ["l"], "|": ["l"],
        "\u{0430}": ["a"], "\u{0410}": ["A"], "\u{043E}": ["o"], "\u{041E}": ["O"], "\u{0440}": ["p"], "\u{0420}": ["P"],
        "\u{0443}": ["y"], "\u{0435}": ["e"], "\u{0415}": ["E"], "\u{00E9}": ["e", "\u{0301}"],
    ]
}
