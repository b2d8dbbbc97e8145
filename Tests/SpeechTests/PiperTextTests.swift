import Testing
@testable import Speech

@Suite("Piper's text")
struct PiperTextTests {
    @Test(arguments: [
        ("Who had the lost gear? … A cat … A mouse … A bird", "Who had the lost gear? A cat. A mouse. A bird"),
        ("What did Puff make? … A rabbit, a boat and a castle … A dragon", "What did Puff make? A rabbit, a boat and a castle. A dragon"),
        ("Once upon a time... the end", "Once upon a time. the end"),
        ("Wait…", "Wait."),
        ("… and then", "and then"),
        ("No ellipsis here.", "No ellipsis here."),
    ])
    func anEllipsisEndsASentenceSoPiperPausesThere(text: String, spoken: String) {
        #expect(PiperText.spoken(text) == spoken)
    }
}
