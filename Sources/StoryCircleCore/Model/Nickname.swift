/// The rules for the name a child types: trimmed, inner white space collapsed, 1 to 30 characters, no
/// control or invisible formatting characters, and unique in the room ignoring case. Nicknames are always
/// shown as text, never as markup; these rules are about fairness and readability, not escaping.
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
    }

    /// The nickname as it will be shown, or the reason it cannot be used.
    public static func normalize(_ raw: String) -> Result<String, Problem> {
        let collapsibleControls: Set<Unicode.Scalar> = ["\t", "\n", "\r"]
        if raw.unicodeScalars.contains(where: { !collapsibleControls.contains($0) && isInvisible($0) }) {
            return .failure(.invalidCharacters)
        }
        let collapsed = SentenceSplitter.collapsingWhitespace(raw)
        if collapsed.isEmpty { return .failure(.empty) }
        if collapsed.count > maximumLength { return .failure(.tooLong(collapsed.count)) }
        return .success(collapsed)
    }

    /// The key under which two nicknames count as the same ("Ana" and "ANA").
    public static func uniquenessKey(_ nickname: String) -> String {
        nickname.lowercased()
    }

    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        // The zero-width joiner and the emoji variation selector are formatting characters that emoji
        // sequences (👩‍🚀, ❤️) are made of.
        if scalar.value == 0x200D || scalar.value == 0xFE0F { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        default:
            return false
        }
    }
}
