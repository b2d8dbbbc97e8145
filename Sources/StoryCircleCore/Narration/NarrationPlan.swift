/// The synthesised narration of a story: per sentence its audio, duration and word timings.
public struct NarrationPlan: Sendable, Equatable, Codable {
    public var sentences: [NarratedSentence]
    /// Audio for each question read aloud with its options, when the room asks for it.
    public var questionAudio: [String]?
    /// Something the teacher should know about how the story is read (the natural voice failed, so the
    /// whole story is read by espeak-ng); shown to teachers only.
    public var notice: NarrationNotice?

    public init(sentences: [NarratedSentence], questionAudio: [String]? = nil, notice: NarrationNotice? = nil) {
        self.sentences = sentences
        self.questionAudio = questionAudio
        self.notice = notice
    }

    /// The plan without audio, for screens that follow along silently.
    public var silent: NarrationPlan {
        NarrationPlan(sentences: sentences.map(\.silent), questionAudio: nil, notice: notice)
    }
}

/// A code the pages put into words, with the English sentence for pages that do not know it yet.
public struct NarrationNotice: Sendable, Equatable, Codable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// The natural voice could not read this story: espeak-ng reads all of it (never a mix of voices).
    public static let naturalVoiceFallback = NarrationNotice(
        code: "narration_voice_fallback",
        message: "The natural voice is not working on this computer right now, so the standard voice reads this whole story. The next story tries the natural voice again."
    )

    /// The natural voice read the whole story, then failed on a question: espeak-ng reads the questions,
    /// and the story is not read again.
    public static let naturalVoiceQuestionsFallback = NarrationNotice(
        code: "narration_questions_voice_fallback",
        message: "The natural voice read the whole story, then stopped working, so the standard voice reads the questions. The next story tries the natural voice again."
    )
}

public struct NarratedSentence: Sendable, Equatable, Codable {
    public var index: Int
    public var text: String
    public var durationMs: Int
    public var words: [WordTiming]
    /// The URL path of the sentence's audio, e.g. `/audio/<key>.mp3`; absent when this screen stays silent.
    public var audio: String?

    public init(index: Int, text: String, durationMs: Int, words: [WordTiming], audio: String?) {
        self.index = index
        self.text = text
        self.durationMs = durationMs
        self.words = words
        self.audio = audio
    }

    /// The sentence without its audio, for screens that follow along silently.
    public var silent: NarratedSentence {
        var sentence = self
        sentence.audio = nil
        return sentence
    }
}

/// When a word starts being spoken, and where it is in the sentence text (UTF-16 offsets, as JavaScript
/// strings count, so a page can highlight `text.slice(start, start + length)`).
public struct WordTiming: Sendable, Equatable, Codable {
    public var at: Int
    public var start: Int
    public var length: Int

    public init(at: Int, start: Int, length: Int) {
        self.at = at
        self.start = start
        self.length = length
    }
}

/// What the shell should synthesise; `preparation` ties the answer back to this request so a late answer
/// to an abandoned preparation is ignored.
public struct NarrationRequest: Sendable, Equatable {
    public var preparation: Int
    public var sentences: [String]
    public var settings: NarrationSettings
    /// Texts to read aloud for each question ("What colour…? Red. Green. Blue."), if the room wants it.
    public var questions: [String]?

    public init(preparation: Int, sentences: [String], settings: NarrationSettings, questions: [String]?) {
        self.preparation = preparation
        self.sentences = sentences
        self.settings = settings
        self.questions = questions
    }
}

/// What the shell reports back about a `NarrationRequest`. A narrator that streams reports each sentence
/// as it is ready, in order (`sentence`), then the whole plan (`prepared`); one that does not sends only
/// `prepared`.
public enum NarrationUpdate: Sendable, Equatable {
    case progress(preparation: Int, ready: Int, total: Int)
    /// Sentence `sentence.index` is ready; `notice` (on every sentence of the story) is the teacher's.
    case sentence(preparation: Int, NarratedSentence, notice: NarrationNotice?)
    /// The sentences reported so far are dropped: the story is read again from its first sentence by
    /// another voice (the natural voice failed mid-story, and one story never mixes voices).
    case restarted(preparation: Int)
    case prepared(preparation: Int, NarrationPlan)
    case failed(preparation: Int, problem: NarrationProblem)
}
