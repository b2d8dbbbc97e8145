/// The text a Piper voice is given for a clip. Piper's phonemiser (espeak-ng's, in phoneme mode) drops
/// an ellipsis without a pause, so a question read with its options ("Who had it? … A cat … A mouse")
/// came out as one run of words ("a catta mousa bird"); each ellipsis becomes the end of a sentence,
/// which Piper reads with a pause. The word timings still come from the text as written (they point into
/// it, and espeak-ng pauses at an ellipsis by itself). Emoji are not read (`Pictographs`).
public enum PiperText {
    /// In a natural voice's cache key: clips read from text prepared otherwise are never replayed.
    public static let version = "text-2"

    public static func spoken(_ written: String) -> String {
        let text = Pictographs.silenced(written)
        guard text.contains("…") || text.contains("...") else { return text }
        var out = ""
        var rest = Substring(text.replacingOccurrences(of: "...", with: "…"))
        while let mark = rest.firstIndex(of: "…") {
            let before = rest[..<mark].reversed().drop { $0 == " " }
            out += String(before.reversed())
            // After a sentence's own end ("gear? …") nothing is added; a bare ellipsis ends the sentence.
            let ended = before.first.map { ".?!,;:".contains($0) } ?? true
            if !out.isEmpty && !ended { out += "." }
            rest = rest[rest.index(after: mark)...].drop { $0 == " " }
            if !rest.isEmpty && !out.isEmpty { out += " " }
        }
        return out + rest
    }
}
