// libFuzzer target: the story loader and validator (what `storycircle story validate` and `POST /api/rooms`
// run). Any bytes give a story or errors, never both and never neither, and a story that loads keeps every
// limit of `StoryLimits`.
import Foundation
import StoryCircleCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStory(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let validated = Story.load(json: Data(UnsafeBufferPointer(start: data, count: size)))
    for issue in validated.issues { precondition(!issue.message.isEmpty, "an issue without a message at \(issue.path)") }
    guard let story = validated.value else {
        precondition(!validated.errors.isEmpty, "no story and no error")
        return 0
    }
    precondition(validated.errors.isEmpty, "a story with errors: \(validated.errors)")
    precondition(StoryLimits.titleLength.contains(story.title.count), "title of \(story.title.count)")
    precondition(StoryLimits.sentenceCount.contains(story.sentences.count), "\(story.sentences.count) sentences")
    for sentence in story.sentences {
        precondition(StoryLimits.sentenceLength.contains(sentence.count), "a sentence of \(sentence.count): \(sentence.debugDescription)")
        precondition(sentence.first?.isWhitespace == false && sentence.last?.isWhitespace == false, "untrimmed \(sentence.debugDescription)")
    }
    let words = story.sentences.reduce(0) { $0 + $1.split(whereSeparator: \.isWhitespace).count }
    precondition(StoryLimits.wordCount.contains(words), "\(words) words")
    precondition(StoryLimits.questionCount.contains(story.quiz.questions.count))
    for question in story.quiz.questions {
        precondition(StoryLimits.questionLength.contains(question.text.count))
        precondition(StoryLimits.optionCount.contains(question.options.count))
        precondition(question.options.allSatisfy { StoryLimits.optionLength.contains($0.count) })
        precondition(question.options.indices.contains(question.answer), "answer \(question.answer) of \(question.options.count)")
        precondition(Set(question.options.map { $0.lowercased() }).count == question.options.count, "duplicate options \(question.options)")
        if let time = question.timeLimit { precondition(StoryLimits.timeLimit.contains(time)) }
        if let explanation = question.explanation { precondition(StoryLimits.explanationLength.contains(explanation.count)) }
    }
    precondition(StoryLimits.rate.contains(story.narration.rate) && StoryLimits.pitch.contains(story.narration.pitch))
    precondition(StoryLimits.voiceLength.contains(story.narration.voice.count))
    // Pictures: one per sentence or none, one per option or none, each with its words, within the count.
    precondition(story.sentencePictures.isEmpty || story.sentencePictures.count == story.sentences.count, "pictures out of step with sentences")
    for question in story.quiz.questions {
        precondition(question.optionPictures.isEmpty || question.optionPictures.count == question.options.count, "option pictures out of step")
    }
    precondition(story.pictureReferences.count <= StoryLimits.pictureCount.upperBound, "\(story.pictureReferences.count) pictures")
    precondition(story.pictureReferences.allSatisfy { StoryLimits.altLength.contains($0.alt.count) || StoryLimits.optionLength.contains($0.alt.count) }, "a picture without words")
    // The form a room stores it in loads back to the same story.
    let stored = try? JSONEncoder().encode(story.jsonValue())
    precondition(stored.flatMap { Story.load(json: $0).value } == story, "the stored form does not load back")
    // What a room does with it first: the plan of what will be read.
    _ = RoomState(code: "000000", story: story, settings: RoomSettings(), credentials: RoomCredentials(teacherToken: "t", dashboardToken: "d"), lookalikes: CaselessNames())
    return 0
}

/// Names compared ignoring case only: the story target builds a room but never joins one.
private struct CaselessNames: ConfusableSkeleton {
    func foldCase(_ text: String) -> String { text.lowercased() }
    func skeleton(_ text: String) -> String { text }
}
