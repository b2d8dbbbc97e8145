/// Splits story text into the sentences that are narrated and highlighted one at a time.
///
/// A sentence ends at `.`, `!`, `?` or `…` (with any closing quotes or brackets) followed by white space,
/// except after a known abbreviation ("Mr.", "Dr.", "e.g.") or a single-letter initial, or when the next
/// word starts in lowercase (`"Oh no!" he said.`). Paragraph breaks
/// always end a sentence. It is deliberately simple: authors who need exact control give a list of
/// sentences instead.
public enum SentenceSplitter {
    private static let terminators: Set<Character> = [".", "!", "?", "…", "。", "！", "？"]
    private static let closers: Set<Character> = ["\"", "'", "”", "’", ")", "]", "»", "」"]
    private static let abbreviations: Set<String> = [
        "mr", "mrs", "ms", "dr", "st", "prof", "sr", "jr", "vs", "etc", "e.g", "i.e", "mt", "no",
        "sra", "sr", "dra", "srta", "mme", "mlle", "hr", "fr",
    ]

    /// The sentences of `text`, trimmed, with runs of white space collapsed.
    public static func sentences(in text: String) -> [String] {
        var result: [String] = []
        for paragraph in paragraphs(of: text) {
            result.append(contentsOf: sentences(inParagraph: paragraph))
        }
        return result
    }

    private static func paragraphs(of text: String) -> [String] {
        var paragraphs: [String] = []
        var current = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                if !current.isEmpty { paragraphs.append(current) }
                current = ""
            } else {
                current += current.isEmpty ? String(line) : " " + line
            }
        }
        if !current.isEmpty { paragraphs.append(current) }
        return paragraphs
    }

    private static func sentences(inParagraph paragraph: String) -> [String] {
        let characters = Array(collapsingWhitespace(paragraph))
        var result: [String] = []
        var start = 0
        var index = 0
        while index < characters.count {
            guard terminators.contains(characters[index]) else {
                index += 1
                continue
            }
            var end = index + 1
            while end < characters.count, terminators.contains(characters[end]) || closers.contains(characters[end]) {
                end += 1
            }
            // A lowercase word after the punctuation continues the sentence: `"Oh no!" he said.`
            let continues = end + 1 < characters.count && characters[end + 1].isLowercase
            let atBoundary = end == characters.count || (characters[end].isWhitespace && !continues)
            if atBoundary, !(characters[index] == "." && endsWithAbbreviation(characters[start..<index])) {
                appendTrimmed(characters[start..<end], to: &result)
                start = end
            }
            index = end
        }
        appendTrimmed(characters[start..<characters.count], to: &result)
        return result
    }

    private static func endsWithAbbreviation(_ characters: ArraySlice<Character>) -> Bool {
        let word = String(characters.reversed().prefix { !$0.isWhitespace }.reversed())
            .trimmingLeading { closers.contains($0) || $0 == "(" || $0 == "\"" }
        if word.count == 1, word.first?.isLetter == true { return true }
        return abbreviations.contains(word.lowercased())
    }

    private static func appendTrimmed(_ characters: ArraySlice<Character>, to result: inout [String]) {
        let sentence = String(characters).trimmingWhitespace()
        if !sentence.isEmpty { result.append(sentence) }
    }

    static func collapsingWhitespace(_ text: String) -> String {
        var out = ""
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" ") }
                out.append(character)
                pendingSpace = false
            }
        }
        return out
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }

    func trimmingLeading(while predicate: (Character) -> Bool) -> String {
        String(drop(while: predicate))
    }
}
