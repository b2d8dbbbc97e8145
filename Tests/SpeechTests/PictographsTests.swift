import Testing
@testable import Speech

@Suite("Emoji are not read aloud")
struct PictographsTests {
    @Test(arguments: [
        ("The turtle 🐢 smiled", "The turtle   smiled"),
        ("Mum 👩‍👧 and me", "Mum     and me"),  // woman, joiner, girl
        ("Thumbs 👍🏽 up", "Thumbs    up"),  // with a skin tone
        ("Off to 🇫🇷 today", "Off to    today"),  // a flag: two regional indicators
        ("Love ❤️ you", "Love    you"),  // a text-default symbol with its emoji selector
        ("Press 1️⃣ now", "Press 1   now"),  // a keycap: the digit is read, its marks are not
        ("A star ★ and an arrow → here", "A star   and an arrow   here"),
        ("🌧️Rain", "  Rain"),
    ])
    func pictographsBecomeOneSpaceEach(text: String, spoken: String) {
        #expect(Pictographs.silenced(text) == spoken)
        #expect(Pictographs.silenced(text).unicodeScalars.count == text.unicodeScalars.count, "positions still point into the text")
        #expect(Pictographs.present(in: text))
    }

    @Test(arguments: [
        "Room 7, #3 * 2 = 6 at 20° at 3:30.",
        "¿Cómo estás, Lola? Muy bien.",
        "क्‍ष and لا‍ keep their joiners",
        "小明 and سارة",
        "No emoji here.",
        "🐢🐢",  // nothing else to say: read by their names rather than as silence
    ])
    func textWithoutPictographsOrWithNothingElseIsLeftAsItIs(text: String) {
        #expect(Pictographs.silenced(text) == text)
    }

    @Test func piperIsGivenTheTextWithoutEmoji() {
        #expect(PiperText.spoken("The turtle 🐢 smiled… The end 🎉") == "The turtle   smiled. The end  ")
    }

    /// Without the filter espeak-ng read the turtle's name and gave it a word of its own, pointing at the
    /// emoji: the highlight would sit on the picture while the voice said "turtle".
    @Test func espeakReadsTheWordsAroundAnEmojiAndNotTheEmoji() async throws {
        let text = "The turtle 🐢 smiled."
        let spoken = try await SpeechEngine.shared.synthesize(text, voice: Voice(name: "en-us"))
        let utf16 = Array(text.utf16)
        let words = spoken.words.map { String(decoding: utf16[$0.offset..<($0.offset + $0.length)], as: UTF16.self) }
        #expect(words == ["The", "turtle", "smiled"])
        let plain = try await SpeechEngine.shared.synthesize("The turtle smiled.", voice: Voice(name: "en-us"))
        #expect(abs(spoken.durationMs - plain.durationMs) < 200, "as long as the words alone: \(spoken.durationMs) vs \(plain.durationMs) ms")
    }
}
