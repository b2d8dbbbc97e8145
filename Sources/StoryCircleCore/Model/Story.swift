/// A story a room narrates and then quizzes on, after validation.
///
/// Stories come from JSON files (see `docs/stories.md`); `Story.load(json:)` checks them and reports every
/// problem at once. A `Story` value is always valid.
public struct Story: Sendable, Equatable {
    public var title: String
    /// The story split into the sentences that are narrated and shown one at a time.
    public var sentences: [String]
    public var narration: NarrationSettings
    public var quiz: Quiz
    /// The picture shown while each sentence is read: empty (a story without pictures) or one entry per
    /// sentence, nil where a sentence has none.
    public var sentencePictures: [PictureReference?]

    public init(title: String, sentences: [String], narration: NarrationSettings = .init(), quiz: Quiz, sentencePictures: [PictureReference?] = []) {
        self.title = title
        self.sentences = sentences
        self.narration = narration
        self.quiz = quiz
        self.sentencePictures = sentencePictures
    }
}

/// The quiz that unlocks when the narration ends.
public struct Quiz: Sendable, Equatable {
    public var title: String?
    public var questions: [Question]

    public init(title: String? = nil, questions: [Question]) {
        self.title = title
        self.questions = questions
    }
}

/// One multiple-choice question. `answer` is the index of the correct option and never leaves the server
/// before the question's reveal.
public struct Question: Sendable, Equatable {
    public var text: String
    public var options: [String]
    public var answer: Int
    /// Seconds to answer; `nil` takes the room's default.
    public var timeLimit: Int?
    public var explanation: String?
    /// A picture shown with the question.
    public var picture: PictureReference?
    /// Empty (text options), or a picture for every option; each option's text is its label (what screen
    /// readers say, and what the results and the CSV show).
    public var optionPictures: [PictureReference?]

    public init(text: String, options: [String], answer: Int, timeLimit: Int? = nil, explanation: String? = nil, picture: PictureReference? = nil, optionPictures: [PictureReference?] = []) {
        self.text = text
        self.options = options
        self.answer = answer
        self.timeLimit = timeLimit
        self.explanation = explanation
        self.picture = picture
        self.optionPictures = optionPictures
    }
}

/// How a story is read aloud: a voice (an espeak-ng voice such as "en-gb", which also picks the language,
/// or a natural Piper voice as "piper:en_US-joe-medium"), words per minute, pitch (espeak-ng only).
public struct NarrationSettings: Sendable, Equatable, Hashable, Codable {
    public var voice: String
    public var rate: Int
    public var pitch: Int

    public init(voice: String = "en", rate: Int = 150, pitch: Int = 50) {
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
    }

    /// Whether `name` can be a voice: letters, digits and `-_+/`, with an optional `piper:` in front.
    /// Whether this computer has it is for the server's voice catalog to say.
    public static func isWellFormedVoice(_ name: String) -> Bool {
        let bare = name.hasPrefix("piper:") ? name.dropFirst(6) : Substring(name)
        return !bare.isEmpty && bare.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_+/".contains($0)) }
    }
}
