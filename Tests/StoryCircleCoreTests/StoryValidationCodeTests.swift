import Foundation
import Testing
@testable import StoryCircleCore

/// Every problem carries a stable code and the values its words need, so the pages can word it in the
/// teacher's language; the English message stays for the CLI.
@Suite("Story validation codes")
struct StoryValidationCodeTests {
    private func issues(_ text: String) -> [ValidationIssue] {
        Story.load(json: Data(text.utf8)).issues
    }

    private func story(quiz: String, extra: String = "") -> String {
        #"{"title": "T", "text": "One. Two."\#(extra), "quiz": \#(quiz)}"#
    }

    @Test func answerNotAnOptionNamesTheAnswer() throws {
        let found = issues(story(quiz: #"{"question": "Colour?", "options": ["Red", "Blue"], "answer": "Purple"}"#))
        let issue = try #require(found.first)
        #expect(found.count == 1)
        #expect(issue.code == .answerNotAnOption)
        #expect(issue.params == ["answer": "Purple"])
        #expect(issue.path == "quiz.answer")
        #expect(issue.message.contains("Purple"))
    }

    @Test func answerWithWrongCaseCarriesTheSuggestion() throws {
        let issue = try #require(issues(story(quiz: #"{"question": "Colour?", "options": ["Red", "Blue"], "answer": "blue"}"#)).first)
        #expect(issue.code == .answerNotAnOptionCase)
        #expect(issue.params == ["answer": "blue", "suggestion": "Blue"])
    }

    /// A question whose right answer was never chosen (or was removed) is refused at its own path, with one
    /// code, whether the answer is absent, null or blank, and even while an option is still empty.
    @Test(arguments: ["", #", "answer": null"#, #", "answer": """#, #", "answer": "  ""#])
    func aQuestionWithoutARightAnswerIsRefusedAtItsPath(answer: String) throws {
        let quiz = #"{"questions": [{"question": "One?", "options": ["A", "B"], "answer": "A"}, {"question": "Two?", "options": ["Kim", "The wind"]\#(answer)}]}"#
        let result = Story.load(json: Data(story(quiz: quiz).utf8))
        #expect(result.value == nil)
        let issue = try #require(result.issues.first)
        #expect(result.issues.count == 1)
        #expect(issue.severity == .error)
        #expect(issue.code == .answerRequired)
        #expect(issue.path == "quiz.questions[1].answer")

        let unfinished = #"{"questions": [{"question": "One?", "options": ["A", ""]\#(answer)}]}"#
        let codes = issues(story(quiz: unfinished)).map { "\($0.path) \($0.code.rawValue)" }
        #expect(codes == ["quiz.questions[0].options[1] empty", "quiz.questions[0].answer answer_required"])
    }

    @Test func limitsCarryTheirNumbers() throws {
        let long = String(repeating: "a", count: StoryLimits.titleLength.upperBound + 1)
        let title = try #require(issues(#"{"title": "\#(long)", "text": "One.", "quiz": {"question": "Q?", "options": ["A", "B"], "answer": "A"}}"#).first)
        #expect(title.code == .tooLong)
        #expect(title.params == ["length": String(long.count), "limit": String(StoryLimits.titleLength.upperBound)])

        let time = try #require(issues(story(quiz: #"{"question": "Q?", "options": ["A", "B"], "answer": "A", "time": 1}"#)).first)
        #expect(time.code == .outOfRange)
        #expect(time.path == "quiz.time")
        #expect(time.params == ["value": "1", "min": String(StoryLimits.timeLimit.lowerBound), "max": String(StoryLimits.timeLimit.upperBound)])
    }

    @Test func optionProblemsHaveTheirOwnCodes() {
        let codes = issues(story(quiz: #"{"questions": [{"question": "Q?", "options": ["A"], "answer": "A"}, {"question": "Q?", "options": ["A", "a"], "answer": "A"}, {"question": "", "options": ["A", "B"], "answer": "A"}]}"#)).map(\.code)
        #expect(codes == [.tooFewOptions, .optionDuplicate, .empty])
    }

    @Test func missingPartsAndUnknownFields() {
        let found = issues(#"{"titel": "T", "txt": "x"}"#)
        #expect(found.map(\.code) == [.unknownFieldTypo, .unknownFieldTypo, .required, .textRequired, .quizRequired])
        #expect(found[0].params == ["field": "titel", "suggestion": "title"])
        #expect(issues("{not json").map(\.code) == [.invalidJSON])
        #expect(issues(#"["a story"]"#).map(\.code) == [.notAnObject])
    }

    @Test func codesAreDistinctAndLowercase() {
        let raw = ValidationCode.allCases.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        #expect(raw.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "_" } })
    }
}
