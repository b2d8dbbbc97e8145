/// Emoji and other pictographs are not read aloud. Both engines would read one by its name ("The turtle
/// 🐢 smiled" became "the turtle turtle smiled"), which a child hears as a mistake; the picture is for the
/// eye. The text each engine is given has every pictograph, with its variation selectors, skin tones, keycap
/// marks, tags and the zero-width joiners of its sequence, turned into a space: one space per Unicode
/// scalar, so espeak-ng's character positions (the word highlight) still point into the text as shown.
public enum Pictographs {
    /// Part of every cache key of a text that has a pictograph: its clips made before were read with it.
    public static let version = "quiet-pictographs-1"

    /// `text` with each pictograph scalar as a space; `text` itself when it has none, or when it has
    /// nothing else to say (a sentence of emoji alone is read by their names rather than as silence).
    public static func silenced(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isPictograph) else { return text }
        var out = String.UnicodeScalarView()
        var spoken = false
        var previousDropped = false
        for scalar in text.unicodeScalars {
            let drop = isPictograph(scalar) || (previousDropped && isSequencePart(scalar))
            if drop {
                out.append(" ")
            } else {
                out.append(scalar)
                if scalar.properties.isAlphabetic || scalar.properties.numericType != nil { spoken = true }
            }
            previousDropped = drop
        }
        return spoken ? String(out) : text
    }

    /// Whether `text` has something `silenced` takes out (for the cache key).
    public static func present(in text: String) -> Bool {
        silenced(text) != text
    }

    /// Emoji (not the ASCII digits, `#` and `*`, which are emoji only in a keycap), their modifiers and
    /// marks, flags' regional indicators and tags, and the pictographic symbol blocks (arrows, dingbats,
    /// shapes, the supplementary symbol planes), whatever their presentation.
    static func isPictograph(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x80 { return false }
        let properties = scalar.properties
        if properties.isEmoji || properties.isEmojiPresentation || properties.isEmojiModifier { return true }
        switch value {
        case 0xFE0E, 0xFE0F, 0x20E3: return true  // text/emoji presentation selectors, the keycap mark
        case 0xE0001, 0xE0020...0xE007F: return true  // tags (subdivision flags)
        case 0x2190...0x21FF, 0x27F0...0x27FF, 0x2900...0x297F, 0x2B00...0x2BFF: return true  // arrows
        case 0x2300...0x2BFF, 0x1F000...0x1FAFF: return properties.generalCategory == .otherSymbol
        default: return false
        }
    }

    /// The joiner inside a sequence (👩‍👧): dropped when it follows a dropped scalar, kept elsewhere (where
    /// it shapes Arabic or Indic letters).
    static func isSequencePart(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0x200D
    }
}
