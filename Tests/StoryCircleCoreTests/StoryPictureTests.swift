import FoundationEssentials
import Testing
@testable import StoryCircleCore

/// Pictures in the story format: a picture per page of text, a question picture, picture options.
@Suite("Story pictures")
struct StoryPictureTests {
    func load(_ text: String) -> Validated<Story> {
        Story.load(json: Data(text.utf8))
    }

    static let pictureStory = #"""
    {"title": "Owl at night",
     "text": [
       {"text": "Olive the owl wakes up. The moon is round.", "picture": {"file": "pictures/owl.png", "alt": "An owl on a branch under a full moon"}},
       "She flies over the dark wood.",
       {"text": "She finds a mouse.", "picture": {"file": "pictures/mouse.webp", "alt": "A small grey mouse"}}
     ],
     "quiz": {"questions": [
       {"question": "Who woke up?", "picture": {"file": "pictures/moon.png", "alt": "The moon"},
        "options": [{"label": "An owl", "picture": {"file": "pictures/owl.png"}},
                    {"label": "A cat", "picture": {"file": "pictures/cat.png", "alt": "A ginger cat"}}],
        "answer": "An owl"},
       {"question": "What did she find?", "options": ["A mouse", "A fish"], "answer": "A mouse"}
     ]}}
    """#

    @Test func aPageGivesItsPictureToEachOfItsSentences() throws {
        let result = load(Self.pictureStory)
        #expect(result.errors == [])
        let story = try #require(result.value)
        #expect(story.sentences.count == 4)
        let owl = PictureReference(source: .file("pictures/owl.png"), alt: "An owl on a branch under a full moon")
        #expect(story.picture(forSentence: 0) == owl)
        #expect(story.picture(forSentence: 1) == owl)
        #expect(story.picture(forSentence: 2) == nil)
        #expect(story.picture(forSentence: 3)?.source == .file("pictures/mouse.webp"))
    }

    @Test func pictureOptionsKeepTheirLabelsAsTheOptionText() throws {
        let story = try #require(load(Self.pictureStory).value)
        let question = story.quiz.questions[0]
        #expect(question.options == ["An owl", "A cat"])
        #expect(question.answer == 0)
        #expect(question.picture == PictureReference(source: .file("pictures/moon.png"), alt: "The moon"))
        // An option's alt is its label unless it has its own.
        #expect(question.optionPictures == [
            PictureReference(source: .file("pictures/owl.png"), alt: "An owl"),
            PictureReference(source: .file("pictures/cat.png"), alt: "A ginger cat"),
        ])
        #expect(story.quiz.questions[1].optionPictures == [])
        // Each file counts once.
        #expect(story.pictureReferences.map(\.source) == ["pictures/owl.png", "pictures/mouse.webp", "pictures/moon.png", "pictures/cat.png"].map { .file($0) })
    }

    @Test func aStoryWithPicturesSurvivesItsStoredForm() throws {
        let story = try #require(load(Self.pictureStory).value)
        let id = String(repeating: "ab", count: 32)
        let stored = story.replacingPictureSources { _ in .stored(id: id) }
        let json = try JSONEncoder().encode(stored.jsonValue())
        let reloaded = try #require(Story.load(json: json).value)
        #expect(reloaded == stored)
        #expect(reloaded.quiz.questions[0].optionPictures.allSatisfy { $0?.storedID == id })
    }

    @Test func aStoryWithoutPicturesIsUnchanged() throws {
        let story = try #require(load(#"{"title": "T", "text": "One. Two.", "quiz": {"question": "Q?", "options": ["a", "b"], "answer": "a"}}"#).value)
        #expect(story.sentencePictures == [])
        #expect(story.pictureReferences == [])
        guard case .object(let root) = story.jsonValue(), case .array(let text)? = root["text"] else { Issue.record("no text"); return }
        #expect(text == [.string("One."), .string("Two.")])
    }

    @Test func missingAltTextAndLabelsAreErrorsWithPaths() {
        let result = load(#"""
        {"title": "T",
         "text": [{"text": "One.", "picture": {"file": "a.png"}}, {"picture": {"file": "b.png", "alt": "b"}}],
         "quiz": {"questions": [
           {"question": "Q?", "picture": {"alt": "nothing"}, "options": [{"picture": {"file": "x.png"}}, {"label": "Y"}], "answer": "Y"},
           {"question": "Q2?", "options": [{"label": "A", "picture": {"file": "a.png"}}, "B"], "answer": "A"},
           {"question": "Q3?", "options": [{"label": "A", "picture": {"id": "not-an-id"}}, {"label": "B", "picture": {"file": "b.png", "id": "x"}}], "answer": "A"}
         ]}}
        """#)
        #expect(result.value == nil)
        let paths = Set(result.errors.map(\.path))
        #expect(paths.contains("text[0].picture.alt"))
        #expect(paths.contains("text[1].text"))
        #expect(paths.contains("quiz.questions[0].picture"))
        #expect(paths.contains("quiz.questions[0].options[0].label"))
        #expect(paths.contains("quiz.questions[0].options[1].picture"))
        #expect(paths.contains("quiz.questions[1].options"))
        #expect(paths.contains("quiz.questions[2].options[0].picture.id"))
        #expect(paths.contains("quiz.questions[2].options[1].picture"))
        #expect(result.errors.first { $0.path == "text[0].picture.alt" }?.message.contains("screen reader") == true)
    }

    @Test func tooManyPicturesIsAnError() {
        let pages = (0...StoryLimits.pictureCount.upperBound).map { #"{"text": "Page \#($0).", "picture": {"file": "p\#($0).png", "alt": "p"}}"# }
        let result = load(#"{"title": "T", "text": [\#(pages.joined(separator: ","))], "quiz": {"question": "Q?", "options": ["a", "b"], "answer": "a"}}"#)
        #expect(result.value == nil)
        #expect(result.errors.map(\.message) == ["the story has 65 pictures; the limit is 64"])
    }

    @Test func pictureIDsAreSixtyFourLowercaseHexDigits() {
        #expect(PictureReference.isPictureID(String(repeating: "0f", count: 32)))
        #expect(!PictureReference.isPictureID(String(repeating: "0F", count: 32)))
        #expect(!PictureReference.isPictureID(String(repeating: "0f", count: 31)))
        #expect(!PictureReference.isPictureID("../../etc/passwd"))
    }
}

/// What screens are sent of a picture story: the sentences' pictures in the plan, the question's and its
/// options' pictures in the question, never the answer.
@Suite("Room views of a picture story")
struct RoomPictureViewTests {
    static let owl = String(repeating: "a1", count: 32)
    static let cat = String(repeating: "c4", count: 32)

    static var story: Story {
        let text = #"""
        {"title": "Owl", "text": [{"text": "One. Two.", "picture": {"id": "\#(owl)", "alt": "An owl"}}, "Three."],
         "quiz": {"questions": [{"question": "Who?", "picture": {"id": "\#(cat)", "alt": "A cat"},
           "options": [{"label": "Owl", "picture": {"id": "\#(owl)"}}, {"label": "Cat", "picture": {"id": "\#(cat)", "alt": "Ginger"}}], "answer": "Cat"}]}}
        """#
        return Story.load(json: Data(text.utf8)).value!
    }

    @Test func thePlanAndTheQuestionCarryThePictures() throws {
        var room = RoomDriver(story: Self.story)
        let child = try room.child("Ana")
        try room.startAndPrepare()
        let plan = try #require(room.messages(to: child.connection).compactMap { if case .narrationPlan(let p) = $0 { p } else { nil } }.last)
        #expect(plan.pictures == [
            SentencePictureView(sentence: 0, picture: PictureView(id: Self.owl, alt: "An owl")),
            SentencePictureView(sentence: 1, picture: PictureView(id: Self.owl, alt: "An owl")),
        ])
        room.narrateToFirstQuestion()
        let question = try #require(room.messages(to: child.connection).compactMap { if case .question(let q) = $0 { q } else { nil } }.last)
        #expect(question.picture == PictureView(id: Self.cat, alt: "A cat"))
        #expect(question.optionPictures == [PictureView(id: Self.owl, alt: "Owl"), PictureView(id: Self.cat, alt: "Ginger")])
        #expect(question.options == ["Owl", "Cat"])
        // The encoded message has no answer in it, pictures or not.
        let json = String(decoding: ServerMessage.question(question).encoded(), as: UTF8.self)
        #expect(!json.contains("answer") && json.contains("optionPictures"))
    }
}
