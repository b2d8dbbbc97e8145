/// The rules for the name a child types: trimmed, inner white space collapsed, 1 to 30 characters, no
/// control or invisible formatting characters, something visible in it, and unique in the room ignoring
/// case. Nicknames are always shown as text, never as markup; these rules are about fairness and
/// readability, not escaping: a name that shows as a blank on the podium is no name.
public enum Nickname {
    public static let maximumLength = 30

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
        let collapsibleControls: Set<Unicode.Scalar> = ["\t", "\n", "\r"]
        if raw.unicodeScalars.contains(where: { !collapsibleControls.contains($0) && isInvisible($0) }) {
            return .failure(.invalidCharacters)
        }
        // A character that starts with a scalar meant to attach to the one before has nothing to attach
        // to: it shows nothing, and once white space around it is collapsed it would join the space and
        // change what the name is made of (the fuzzer found ")\t\u{301}" normalising to ") \u{301}", which
        // normalised again to ")").
        if raw.contains(where: startsDetached) { return .failure(.invalidCharacters) }
        let collapsed = SentenceSplitter.collapsingWhitespace(raw)
        if collapsed.isEmpty { return .failure(.empty) }
        if collapsed.count > maximumLength { return .failure(.tooLong(collapsed.count)) }
        guard collapsed.contains(where: isVisible) else { return .failure(.invalidCharacters) }
        return .success(collapsed)
    }

    /// The key under which two nicknames count as the same ("Ana" and "ANA").
    public static func uniquenessKey(_ nickname: String) -> String {
        nickname.lowercased()
    }

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

    /// A character that begins with a combining mark, a joiner, a variation selector or a skin-tone
    /// modifier: scalars that only mean something after another.
    private static func startsDetached(_ character: Character) -> Bool {
        guard let first = character.unicodeScalars.first else { return false }
        if first.value == 0x200D || (0xFE00...0xFE0F).contains(first.value) || (0x1F3FB...0x1F3FF).contains(first.value) { return true }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// A character that puts ink on the screen.
    private static func isVisible(_ character: Character) -> Bool {
        !character.isWhitespace && !startsDetached(character)
    }
}
