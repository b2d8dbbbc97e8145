import Confusables
import StoryCircleCore
import Testing

/// Nicknames folded with ICU's own TR39 data (Debian's libicu), as the server folds them: the cases of
/// issue 27 and the folding rules of docs/protocol.md ("How names are compared"), each with an example.
@Suite("Look-alike nicknames with ICU")
struct ICUConfusablesTests {
    let icu: ICUConfusables

    init() throws {
        icu = try ICUConfusables()
    }

    func keys(_ name: String) -> Set<String> {
        Set(Nickname.matchingKeys(name, using: icu))
    }

    func meet(_ a: String, _ b: String) -> Bool {
        !keys(a).isDisjoint(with: keys(b))
    }

    @Test func theIssuesNamesAllMeetPoopyPants() {
        let cyrillic = "\u{0420}\u{043E}\u{043E}\u{0440}\u{0443} \u{0420}\u{0430}nts"  // Р о о р у, Р а: Cyrillic
        for name in ["P00py Pants", "Poopy  Pants", "poopy pants", cyrillic, "POOPY PANTS", "Poopy-Pants", "PoopyPants"] {
            #expect(meet(name, "Poopy Pants"), "\(name): \(keys(name)) against \(keys("Poopy Pants"))")
        }
        #expect(meet("\u{0410}da", "Ada"), "a Cyrillic А")
    }

    @Test func widthCompatibilityFormsAndCaseFold() {
        #expect(meet("\u{FF30}\u{FF4F}\u{FF4F}\u{FF50}\u{FF59}", "Poopy"), "full-width letters")
        #expect(meet("\u{2119}oopy", "Poopy"), "a double-struck ℙ")
        #expect(meet("STRASSE", "Straße"))
        #expect(meet("Zoë", "Zoe"), "accents of the combining-diacritics blocks are dropped")
        #expect(meet("Zoë", "ZOË"))
        #expect(meet("Ana Bel", "AnaBel"))
        #expect(meet("Ana_Bel", "Ana-Bel"))
    }

    @Test func digitsAndLettersThatLookAlike() {
        #expect(meet("B0b", "Bob"))
        #expect(meet("Ida", "lda"), "capital I and small l")
        #expect(meet("Ida", "ida"))
        #expect(meet("rn", "m"), "TR39's own: r n looks like m")
    }

    @Test func differentNamesStayDifferent() {
        for (a, b) in [("Ana", "Ann"), ("Ben", "Ken"), ("Zoë", "Zoa"), ("Poopy Pants", "Puppy Pants"), ("Mia", "Nia"), ("Li", "Lu")] {
            #expect(!meet(a, b), "\(a) and \(b): \(keys(a)) \(keys(b))")
        }
        // Letters of other scripts are compared as themselves, their vowel signs kept.
        #expect(!meet("\u{0915}\u{093F}", "\u{0915}\u{0940}"), "Devanagari कि and की differ by their vowel sign")
        #expect(meet("محمد", "محمد"))
        #expect(!meet("محمد", "أحمد"))
        #expect(!meet("🦊", "🐼"))
    }

    @Test func everyKeyIsSettled() {
        for name in ["P00py Pants", "Ida", "Straße", "ＡＢＣ", "\u{0420}\u{0430}nts", "👩‍🚀 Zoë", "-", "x_y"] {
            for key in keys(name) {
                #expect(Nickname.matchingKeys(key, using: icu).first == key, "\(name) → \(key)")
            }
        }
    }

    @Test func icuIsUsableFromManyThreadsAtOnce() async {
        let icu = icu
        let expected = Nickname.matchingKeys("P00py Pants", using: icu)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<200).allSatisfy { _ in Nickname.matchingKeys("P00py Pants", using: icu) == expected } }
            }
            for await same in group { #expect(same) }
        }
    }
}
