import Foundation
import Testing
@testable import StoryCircleCore

@Suite("Story files")
struct StoryLoadingTests {
    private func load(_ text: String) -> Validated<Story> {
        Story.load(json: Data(text.utf8))
    }

    private func errors(_ text: String) -> [String] {
        load(text).errors.map(\.description)
    }

    /// A valid story with `quiz` substituted in.
    private func story(quiz: String, extra: String = "") -> String {
        #"{"title": "T", "text": "One. Two."\#(extra), "quiz": \#(quiz)}"#
    }

    @Test func samplePipStoryIsValidAndHasTheGearQuestion() throws {
        let result = Story.load(json: try Fixtures.sampleStory("pip-the-robot.json"))
        #expect(result.issues.isEmpty)
        let story = try #require(result.value)
        #expect(story.title == "Pip the Robot and the Lost Gear")
        let first = story.quiz.questions[0]
        #expect(first.text == "What colour was Pip the Robot's lost gear?")
        #expect(first.options == ["Red", "Green", "Blue", "Yellow"])
        #expect(first.options[first.answer] == "Blue")
    }

    @Test func sampleThreeOptionStoryIsValid() throws {
        let result = Story.load(json: try Fixtures.sampleStory("three-little-clouds.json"))
        #expect(result.issues.isEmpty)
        let story = try #require(result.value)
        #expect(story.quiz.questions.allSatisfy { $0.options.count == 3 })
        #expect(story.sentences.count > 5, "paragraphs are split into sentences")
    }

    @Test func sampleSpanishStoryHasFivePlusOptions() throws {
        let result = Story.load(json: try Fixtures.sampleStory("la-tortuga-que-queria-volar.json"))
        #expect(result.issues.isEmpty)
        let story = try #require(result.value)
        #expect(story.narration.voice == "es")
        #expect(story.quiz.questions.allSatisfy { $0.options.count >= 5 })
    }

    @Test func answerNotAmongOptionsNamesTheOptions() {
        let text = story(quiz: #"{"questions": [{"question": "Q1?", "options": ["A", "B"], "answer": "A"}, {"question": "Q2?", "options": ["A", "B"], "answer": "B"}, {"question": "Colour?", "options": ["Red", "Green", "Blue"], "answer": "Purple"}]}"#)
        #expect(errors(text) == [#"quiz.questions[2].answer: "Purple" is not one of the options ["Red","Green","Blue"]"#])
    }

    @Test func answerWithWrongCaseSuggestsTheOption() {
        let text = story(quiz: #"{"question": "Colour?", "options": ["Red", "Blue"], "answer": "blue"}"#)
        #expect(errors(text) == [#"quiz.answer: "blue" is not one of the options ["Red","Blue"] (did you mean "Blue"?)"#])
    }

    @Test func bareQuestionIsAOneQuestionQuiz() throws {
        let result = load(story(quiz: #"{"question": "Colour?", "options": ["Red", "Blue"], "answer": "Blue", "time": 15}"#))
        let quiz = try #require(result.value).quiz
        #expect(quiz.questions == [Question(text: "Colour?", options: ["Red", "Blue"], answer: 1, timeLimit: 15)])
    }

    @Test func duplicateOptionsAreCaughtIgnoringCase() {
        let text = story(quiz: #"{"questions": [{"question": "Q?", "options": ["Red", "Blue", "red"], "answer": "Red"}]}"#)
        #expect(errors(text) == [#"quiz.questions[0].options[2]: "red" is the same as option 1; options must be different"#])
    }

    @Test func emptyTextsAreCaught() {
        let text = #"{"title": "  ", "text": [" ", "Fine."], "quiz": {"questions": [{"question": "", "options": ["A", ""], "answer": "A"}]}}"#
        #expect(errors(text) == [
            "title: a title is empty",
            "text[0]: the story text is empty",
            "quiz.questions[0].question: the question text is empty",
            "quiz.questions[0].options[1]: the option is empty",
        ])
    }

    @Test func unknownFieldsAreWarningsNotErrors() throws {
        let text = #"{"title": "T", "text": "One.", "colour": "red", "narration": {"voice": "en", "speed": 2}, "quiz": {"question": "Q?", "options": ["A", "B"], "answer": "A", "explanaton": "typo"}}"#
        let result = load(text)
        #expect(result.value != nil)
        #expect(result.errors.isEmpty)
        #expect(result.warnings.map(\.description) == [
            "colour: unknown field is ignored",
            "narration.speed: unknown field is ignored",
            #"quiz.explanaton: unknown field is ignored (did you mean "explanation"?)"#,
        ])
    }

    @Test func absurdTimersAreCaught() {
        let text = story(quiz: #"{"questions": [{"question": "Q?", "options": ["A", "B"], "answer": "A", "time": 3000}, {"question": "Q?", "options": ["A", "B"], "answer": "A", "time": 1}, {"question": "Q?", "options": ["A", "B"], "answer": "A", "time": 2.5}]}"#)
        #expect(errors(text) == [
            "quiz.questions[0].time: 3000 seconds is outside the allowed 5 to 300 seconds",
            "quiz.questions[1].time: 1 seconds is outside the allowed 5 to 300 seconds",
            "quiz.questions[2].time: expected a whole number of seconds, found 2.5",
        ])
    }

    @Test func missingQuizIsCaught() {
        #expect(errors(#"{"title": "T", "text": "One."}"#) == [
            #"quiz: a quiz is required: {"questions": [{"question": ..., "options": [...], "answer": ...}]}"#,
        ])
    }

    @Test func optionCountsOutsideTheLimitsAreCaught() {
        let nine = (1...9).map { "\"O\($0)\"" }.joined(separator: ",")
        let text = story(quiz: #"{"questions": [{"question": "Q?", "options": ["Only"], "answer": "Only"}, {"question": "Q?", "options": [\#(nine)], "answer": "O1"}, {"question": "Q?", "options": "A, B", "answer": "A"}]}"#)
        #expect(errors(text) == [
            "quiz.questions[0].options: needs at least 2 options, found 1",
            "quiz.questions[1].options: has 9 options; the limit is 8",
            "quiz.questions[2].options: expected a list of options, found a string",
        ])
    }

    @Test func everyProblemIsReportedAtOnce() {
        let text = #"{"text": 42, "narration": {"rate": 1000, "pitch": -3, "voice": "en gb"}, "quiz": {"questions": [{"options": ["A", "A"], "answer": 1}, "nope"]}}"#
        #expect(errors(text) == [
            "title: a title is required",
            "text: expected the story text as a string or a list of strings, found a number",
            #"narration.voice: "en gb" is not a voice name (such as "en", "en-gb" or "es" for espeak-ng, or "piper:en_US-joe-medium" for a natural voice)"#,
            "narration.rate: 1000 words per minute is outside the allowed 80 to 450 words per minute",
            "narration.pitch: -3 pitch steps is outside the allowed 0 to 99 pitch steps",
            "quiz.questions[0].question: the question text is required",
            #"quiz.questions[0].options[1]: "A" is the same as option 1; options must be different"#,
            "quiz.questions[0].answer: expected the text of the right option, found a number",
            "quiz.questions[1]: expected a question (a JSON object), found a string",
        ])
    }

    @Test func emptyQuestionListIsCaught() {
        #expect(errors(story(quiz: #"{"questions": []}"#)) == ["quiz.questions: the quiz has no questions; add at least one"])
    }

    @Test func invalidJSONIsOneClearError() {
        let result = load(#"{"title": "T",, }"#)
        #expect(result.value == nil)
        #expect(result.errors.count == 1)
        #expect(result.errors[0].description.hasPrefix("not valid JSON: "))
    }

    @Test func overlongFieldsAreCaught() {
        let long = String(repeating: "a", count: 301)
        #expect(errors(story(quiz: #"{"question": "\#(long)", "options": ["A", "B"], "answer": "A"}"#)) == [
            "quiz.question: the question text is 301 characters long; the limit is 300",
        ])
    }

    @Test func storyRoundTripsThroughItsStoredForm() throws {
        let original = try #require(Story.load(json: try Fixtures.sampleStory("pip-the-robot.json")).value)
        let again = Story.load(json: original.jsonValue())
        #expect(again.value == original)
        #expect(again.issues.isEmpty)
    }

    @Test func quizInTheSeedAppFormatLoadsOnItsOwn() throws {
        let quiz = Quiz.load(json: Fixtures.json(#"{"title": "Q", "questions": [{"question": "Q?", "options": ["A", "B"], "answer": "Purple"}]}"#))
        #expect(quiz.errors.map(\.description) == [#"questions[0].answer: "Purple" is not one of the options ["A","B"]"#])
    }
}

@Suite("Sentence splitting")
struct SentenceSplitterTests {
    @Test func splitsOnTerminatorsKeepingQuotes() {
        #expect(SentenceSplitter.sentences(in: #"Pip smiled. "Oh no!" he said. Was it blue? Yes…"#) == [
            "Pip smiled.", #""Oh no!" he said."#, "Was it blue?", "Yes…",
        ])
    }

    @Test func abbreviationsAndInitialsDoNotEndSentences() {
        #expect(SentenceSplitter.sentences(in: "Mr. Brown met Dr. Green at 3.5 km. J. R. smiled.") == [
            "Mr. Brown met Dr. Green at 3.5 km.", "J. R. smiled.",
        ])
    }

    @Test func paragraphsAlwaysEndSentencesAndWhitespaceCollapses() {
        #expect(SentenceSplitter.sentences(in: "First line\nstill first\n\n  Second   paragraph") == [
            "First line still first", "Second paragraph",
        ])
    }

    @Test func spanishPunctuationSplits() {
        #expect(SentenceSplitter.sentences(in: "¡Hola! ¿Cómo estás? Bien.") == ["¡Hola!", "¿Cómo estás?", "Bien."])
    }
}
