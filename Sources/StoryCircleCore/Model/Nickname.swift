/// The rules for the name a child types: trimmed, inner white space collapsed, 1 to 40 characters, no
/// control or invisible formatting characters, something visible in it, and unlike every other name in the
/// room and every name blocked there, look-alikes included (`matchingKeys`). Nicknames are always shown as text, never as markup; these rules are about fairness and
/// readability, not escaping: a name that shows as a blank on the podium is no name.
public enum Nickname {
    public static let maximumLength = 40

    public enum Problem: Error, Equatable, Sendable {
        case empty
        case tooLong(Int)
        case invalidCharacters

        public var message: String {
            switch self {
            case .empty: "Please type a nickname."
            case .tooLong(let count): "That nickname is \(count) characters long; please use at most \(Nickname.maximumLength)."
            case .invalidCharacters: "That nickname has characters we cannot show; please use letters, numbers or emoji."
            }
        }

        /// The parameters a page words the problem with (`nickname_invalid` in docs/protocol.md).
        public var params: [String: String] {
            switch self {
            case .empty: ["problem": "empty"]
            case .tooLong(let count): ["problem": "too_long", "length": String(count), "max": String(Nickname.maximumLength)]
            case .invalidCharacters: ["problem": "invalid_characters"]
            }
        }
    }

    /// The nickname as it will be shown, or the reason it cannot be used.
    public static func normalize(_ raw: String) -> Result<String, Problem> {
        guard let collapsed = collapsedIfShowable(raw) else { return .failure(.invalidCharacters) }
        if collapsed.isEmpty { return .failure(.empty) }
        if collapsed.count > maximumLength { return .failure(.tooLong(collapsed.count)) }
        guard collapsed.contains(where: isVisible) else { return .failure(.invalidCharacters) }
        return .success(collapsed)
    }

    /// Whether `raw` has a character that shows nothing (a control, an invisible formatting character, a
    /// mark with nothing to attach to, a sign joined to white space) or nothing visible at all once white
    /// space is set aside: the `invalidCharacters` of `normalize`, for names with limits of their own (a
    /// class's).
    public static func hasUnshowableCharacters(_ raw: String) -> Bool {
        guard let collapsed = collapsedIfShowable(raw) else { return true }
        return !collapsed.isEmpty && !collapsed.contains(where: isVisible)
    }

    /// `raw` with its white space trimmed and collapsed, or nil if it has a character that shows nothing or
    /// would change what the name is made of once collapsed.
    private static func collapsedIfShowable(_ raw: String) -> String? {
        let collapsibleControls: Set<Unicode.Scalar> = ["\t", "\n", "\r"]
        if raw.unicodeScalars.contains(where: { !collapsibleControls.contains($0) && isInvisible($0) }) { return nil }
        // A character that starts with a scalar meant to attach to the one before has nothing to attach
        // to: it shows nothing, and once white space around it is collapsed it would join the space and
        // change what the name is made of (the fuzzer found ")\t\u{301}" normalising to ") \u{301}", which
        // normalised again to ")").
        if raw.contains(where: startsDetached) { return nil }
        let collapsed = SentenceSplitter.collapsingWhitespace(raw)
        // A sign that joins a neighbour across white space (a prepended sign before a space, an accent
        // after one) makes a character that is neither a space nor ink: collapsing would keep or drop it
        // whole, and the name would not be its own normal form. Checked after collapsing too, where a
        // space put in for a tab can first meet such a sign.
        if raw.contains(where: mixesWhitespace) || collapsed.contains(where: mixesWhitespace) { return nil }
        return collapsed
    }

    /// The keys under which a nickname is compared with others: two names are the same name, for
    /// "taken" and for "blocked", when they share a key. (Documented with examples in docs/protocol.md,
    /// "How names are compared".)
    ///
    /// One step of folding is: NFKC_Casefold (width, compatibility forms, case), TR39's skeleton (look-
    /// alikes to one prototype, in NFD), then dropping what does not tell names apart to the eye: white
    /// space, dashes and connectors (`-`, `_`), and the accents of the combining-diacritics blocks (`ö`,
    /// `ó` and `o` meet; the vowel signs of Devanagari or Arabic, which are letters there, stay). The step
    /// is repeated until nothing changes, since a skeleton's prototype may fold again (`0` becomes `O`,
    /// which case-folds to `o`).
    ///
    /// There are two keys because case folding and confusability disagree: `I` looks like `l` but folds
    /// to `i`. The first key folds case first (`Ana`, `ANA`, `Аnа` in Cyrillic meet); the second takes the
    /// skeleton of the name as written first (`Ida` meets `lda`). A name never has more than two keys.
    public static func matchingKeys(_ nickname: String, using unicode: any ConfusableSkeleton) -> [String] {
        let caseFirst = settle(nickname, unicode)
        let shapeFirst = settle(unicode.skeleton(nickname), unicode)
        return caseFirst == shapeFirst ? [caseFirst] : [caseFirst, shapeFirst]
    }

    /// The folding step (see `matchingKeys`) repeated until it changes nothing; four steps at most, which
    /// ICU's data never needs (a key is a fixed point after two), so that a table that cycled could not
    /// hang a join.
    private static func settle(_ text: String, _ unicode: any ConfusableSkeleton) -> String {
        var current = text
        for _ in 0..<4 {
            let next = unimportantDropped(unicode.skeleton(unicode.foldCase(current)))
            if next == current { break }
            current = next
        }
        return current
    }

    /// `text` (in NFD, as a skeleton is) without white space, dashes, connector punctuation and the
    /// generic combining accents; `text` itself if nothing would be left (a name of only `-`).
    private static func unimportantDropped(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !isUnimportant(scalar) { kept.append(scalar) }
        return kept.isEmpty ? text : String(kept)
    }

    private static func isUnimportant(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return true }
        switch scalar.properties.generalCategory {
        case .dashPunctuation, .connectorPunctuation: return true
        default: break
        }
        return combiningAccents.contains { $0.contains(scalar.value) }
    }

    /// Combining Diacritical Marks, their Extended and Supplement blocks, and the Combining Half Marks:
    /// the accents Latin, Greek and Cyrillic letters carry (the marks that other scripts spell with have
    /// blocks of their own, and are kept).
    private static let combiningAccents: [ClosedRange<UInt32>] = [0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0xFE20...0xFE2F]

    /// Characters that show nothing, or nothing reliable: controls, formatting characters, private use,
    /// unassigned code points, Unicode's default-ignorable code points (among them the Hangul fillers
    /// U+115F, U+1160, U+3164 and U+FFA0, which are letters by category but render as blanks) and the
    /// symbols that are drawn empty (U+2800 BRAILLE PATTERN BLANK). Blank *spaces* (U+3000 and its kin) are
    /// white space: collapsed and trimmed like any other.
    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        // The zero-width joiner and the emoji variation selector are formatting characters that emoji
        // sequences (👩‍🚀, ❤️) are made of.
        if scalar.value == 0x200D || scalar.value == 0xFE0F { return false }
        if blankSymbols.contains(scalar.value) || scalar.properties.isDefaultIgnorableCodePoint { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        default:
            return false
        }
    }

    /// Symbols (not ignorable by Unicode's rules) that fonts draw as empty space.
    private static let blankSymbols: Set<UInt32> = [
        0x2800,  // BRAILLE PATTERN BLANK
        0x1D159,  // MUSICAL SYMBOL NULL NOTEHEAD
    ]

    /// A character that begins with a combining mark, a joiner, a variation selector, a skin-tone
    /// modifier or any other scalar Unicode extends the character before with (Grapheme_Extend, such as
    /// U+FF9E HALFWIDTH KATAKANA VOICED SOUND MARK, a letter by category): scalars that only mean
    /// something after another.
    private static func startsDetached(_ character: Character) -> Bool {
        guard let first = character.unicodeScalars.first else { return false }
        if first.value == 0x200D || (0xFE00...0xFE0F).contains(first.value) || (0x1F3FB...0x1F3FF).contains(first.value) { return true }
        if first.properties.isGraphemeExtend { return true }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// A character made of white space and something else (`" \u{301}"`, `"\u{0D4E} "`); `"\r\n"`, all
    /// white space, is not one.
    private static func mixesWhitespace(_ character: Character) -> Bool {
        var space = false
        var other = false
        for scalar in character.unicodeScalars {
            if scalar.properties.isWhitespace { space = true } else { other = true }
        }
        return space && other
    }

    /// A character that puts ink on the screen.
    private static func isVisible(_ character: Character) -> Bool {
        !character.isWhitespace && !startsDetached(character)
    }
}
