import Foundation
@testable import StoryCircleCore

enum Fixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sampleStory(_ name: String) throws -> Data {
        try Data(contentsOf: repositoryRoot.appendingPathComponent("config/stories/\(name)"))
    }

    /// A short story: three sentences and three four-option questions whose answers are options 2, 0 and 1.
    static let story = Story(
        title: "Test Story",
        sentences: ["Pip lost a gear.", "It was blue.", "Dot had it."],
        quiz: Quiz(title: "Quiz", questions: [
            Question(text: "What colour was the gear?", options: ["Red", "Green", "Blue", "Yellow"], answer: 2, timeLimit: 20, explanation: "It was blue."),
            Question(text: "Who had it?", options: ["Dot", "Pip", "Sam", "Max"], answer: 0, timeLimit: 10),
            Question(text: "What did Pip lose?", options: ["A hat", "A gear", "A key", "A shoe"], answer: 1),
        ])
    )

    static let credentials = RoomCredentials(teacherToken: "teacher-secret", dashboardToken: "dashboard-secret")

    /// A plan for `story` where sentence i lasts (i + 1) seconds.
    static func plan(for story: Story = story, withQuestionAudio: Bool = false) -> NarrationPlan {
        NarrationPlan(
            sentences: story.sentences.enumerated().map { index, text in
                NarratedSentence(index: index, text: text, durationMs: (index + 1) * 1_000, words: [WordTiming(at: 0, start: 0, length: 3)], audio: "/audio/s\(index).mp3")
            },
            questionAudio: withQuestionAudio ? story.quiz.questions.indices.map { "/audio/q\($0).mp3" } : nil
        )
    }

    static func json(_ text: String) -> JSONValue {
        try! JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }
}
